package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
)

// claudeDefaultMaxTokens is max_tokens when the config sets none. The Messages API requires the
// field; 8192 fits every current Claude model and leaves room for long tool-call arguments.
const claudeDefaultMaxTokens = 8192

// claudeDefaultModel is used when the config names no model.
const claudeDefaultModel = "claude-sonnet-4-5"

// claudeBackend talks to the Anthropic Messages API (streaming) through the official SDK.
type claudeBackend struct {
	client    anthropic.Client
	model     string
	maxTokens int64
	// params holds the typed pass-through options (temperature, top_p, ...); copied per call.
	params anthropic.MessageNewParams
	// extra are raw JSON fields set on every request (thinking, metadata, service_tier).
	extra []option.RequestOption
	o     Options
	log   *zap.Logger
	call  caller

	// webSearch and codeExecution are MassGen's enable_web_search and enable_code_execution:
	// Anthropic's server tools, declared ahead of ours.
	webSearch, codeExecution bool
	// betas go in the anthropic-beta header, with ?beta=true, as the SDK's beta client sends
	// them (the config's betas, plus the one code execution needs).
	betas []string

	mu sync.Mutex
	// turns keeps the model's own content blocks of replies that made tool calls, keyed by the
	// first tool_use id, to send back unchanged: thinking blocks with their signatures, and
	// server tool calls and results, must be in the assistant turn that carries those tool_use
	// blocks, and Message has no field for them.
	turns map[string][]anthropic.ContentBlockParamUnion
}

// claudeCodeExecutionBeta is the beta the code_execution_20250522 server tool needs (MassGen's).
const claudeCodeExecutionBeta = "code-execution-2025-05-22"

// claudeMaxContinuations bounds the requests one reply may take when the API pauses a long
// server-tool turn (stop_reason pause_turn) and the turn is sent back to be continued.
const claudeMaxContinuations = 5

// newClaude builds the `claude` backend. The key is the config's api_key, else ANTHROPIC_API_KEY;
// the base URL is the config's base_url, else ANTHROPIC_BASE_URL, else the SDK default.
func newClaude(cfg configs.Backend, o Options) (Backend, error) {
	s, err := setupKeyed(cfg, o, "claude", claudeDefaultModel)
	if err != nil {
		return nil, err
	}
	o = s.o
	b := &claudeBackend{
		model:     s.model,
		maxTokens: claudeDefaultMaxTokens,
		o:         o,
		log:       s.log,
		turns:     map[string][]anthropic.ContentBlockParamUnion{},
		call:      s.call,
	}
	if err := b.applyExtra(cfg); err != nil {
		return nil, fmt.Errorf("backend claude: %w", err)
	}

	// WithoutEnvironmentDefaults: the key and base URL come from our config and LookupEnv only,
	// never from a stray ANTHROPIC_AUTH_TOKEN or profile file the SDK would pick up itself.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(s.key),
		// Retries are caller.generate's: they also cover overloaded errors that arrive
		// inside the event stream, and they report EventRetry.
		option.WithMaxRetries(0),
	}
	baseURL := strings.TrimSpace(cfg.BaseURL)
	if baseURL == "" {
		if v, ok := o.LookupEnv("ANTHROPIC_BASE_URL"); ok {
			baseURL = strings.TrimSpace(v)
		}
	}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts = append(opts, option.WithHTTPClient(tapClient(hc)))
	if b.codeExecution && !slices.Contains(b.betas, claudeCodeExecutionBeta) {
		b.betas = append(b.betas, claudeCodeExecutionBeta)
	}
	if len(b.betas) > 0 {
		opts = append(opts, option.WithHeader("anthropic-beta", strings.Join(b.betas, ",")), option.WithQuery("beta", "true"))
	}
	b.client = anthropic.NewClient(opts...)
	return b, nil
}

func (b *claudeBackend) Provider() string { return "claude" }
func (b *claudeBackend) Model() string    { return b.model }

// applyExtra maps the backend's options, typed by the config's param table, onto Messages API
// parameters and the server tool switches. Other MassGen options (allowed_tools, ...) are not
// parameters of this API and are not sent.
func (b *claudeBackend) applyExtra(cfg configs.Backend) error {
	p, err := cfg.Params()
	if err != nil {
		return err
	}
	logUnsent(b.log, cfg, p, "a Messages API parameter")
	if f, ok := p.Float("temperature"); ok {
		b.params.Temperature = anthropic.Float(f)
	}
	if f, ok := p.Float("top_p"); ok {
		b.params.TopP = anthropic.Float(f)
	}
	if n, ok := p.Int("top_k"); ok {
		b.params.TopK = anthropic.Int(n)
	}
	// max_tokens wins when both are written.
	for _, k := range []string{"max_output_tokens", "max_tokens"} {
		if n, ok := p.Int(k); ok {
			b.maxTokens = n
		}
	}
	if s, ok := p.Strings("stop_sequences"); ok {
		b.params.StopSequences = s
	}
	var budget int64
	// MassGen writes the API's own shape: {type: enabled, budget_tokens: N}.
	if m, ok := p.Object("thinking"); ok {
		budget, _ = p.Int("thinking.budget_tokens")
		b.extra = append(b.extra, option.WithJSONSet("thinking", m))
	}
	for _, k := range []string{"budget_tokens", "thinking_budget"} {
		if n, ok := p.Int(k); ok {
			budget = n
			b.extra = append(b.extra, option.WithJSONSet("thinking", map[string]any{"type": "enabled", "budget_tokens": n}))
		}
	}
	b.webSearch = p.Bool("enable_web_search")
	b.codeExecution = p.Bool("enable_code_execution")
	betas, _ := p.Strings("betas")
	for _, beta := range betas {
		if beta = strings.TrimSpace(beta); beta != "" && !slices.Contains(b.betas, beta) {
			b.betas = append(b.betas, beta)
		}
	}
	for _, k := range []string{"metadata", "service_tier", "tool_choice"} {
		if v, ok := p.Value(k); ok {
			b.extra = append(b.extra, option.WithJSONSet(k, v))
		}
	}
	// Raw request fields massgen does not know, sent as written.
	eb, _ := p.Object("extra_body")
	for _, ek := range sortedKeys(eb) {
		b.extra = append(b.extra, option.WithJSONSet(ek, eb[ek]))
	}
	// max_tokens must exceed the thinking budget; keep the configured answer room on top of it.
	if budget > 0 && b.maxTokens <= budget {
		b.maxTokens = budget + claudeDefaultMaxTokens
	}
	return nil
}

// Generate streams one Messages API call, retrying 429/5xx, overloaded errors inside the stream
// and replies that end before message_stop.
func (b *claudeBackend) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	params := b.params
	params.Model = anthropic.Model(b.model)
	params.MaxTokens = b.maxTokens
	system, msgs := b.buildMessages(req)
	if system != "" {
		params.System = []anthropic.TextBlockParam{{Text: system}}
	}
	params.Messages = msgs
	params.Tools = append(b.serverTools(), claudeTools(req.Tools)...)
	cacheBreakpoints(&params)

	return b.call.generate(ctx, onEvent, func(ctx context.Context, tap *streamTap, emit func(Event)) (*Response, error) {
		return b.reply(ctx, tap, params, emit)
	})
}

// serverTools declares the enabled server tools (MassGen's choice of versions).
func (b *claudeBackend) serverTools() []anthropic.ToolUnionParam {
	var tools []anthropic.ToolUnionParam
	if b.webSearch {
		tools = append(tools, anthropic.ToolUnionParam{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{}})
	}
	if b.codeExecution {
		tools = append(tools, anthropic.ToolUnionParam{OfCodeExecutionTool20250522: &anthropic.CodeExecutionTool20250522Param{}})
	}
	return tools
}

// claudeTurn is one reply being assembled, over the requests of a paused turn.
type claudeTurn struct {
	answer
	blocks []anthropic.ContentBlockUnion // every content block of the turn, in order
	cited  sources                       // pages the text cites
	found  sources                       // pages the searches returned
	usage  Usage
}

// reply makes one attempt: a request, and more while the API pauses the turn (pause_turn), each
// continuing the turn from what it has so far.
func (b *claudeBackend) reply(ctx context.Context, tap *streamTap, params anthropic.MessageNewParams, emit func(Event)) (*Response, error) {
	turn := &claudeTurn{answer: answer{emit: emit}}
	var stop anthropic.StopReason
	for n := 0; ; n++ {
		if n > 0 {
			tap.reset()
		}
		msg, err := b.stream(ctx, tap, params, turn)
		if err != nil {
			return nil, err
		}
		stop = msg.StopReason
		if stop != anthropic.StopReasonPauseTurn || n+1 >= claudeMaxContinuations {
			break
		}
		// The API continues the assistant turn it is sent last.
		params.Messages = append(slices.Clone(params.Messages), anthropic.MessageParam{Role: anthropic.MessageParamRoleAssistant, Content: blockParams(turn.blocks)})
	}
	if stop == anthropic.StopReasonPauseTurn {
		b.log.Warn("server tools still running after the last continuation; the reply is what they produced so far", zap.Int("requests", claudeMaxContinuations))
	}
	if stop == anthropic.StopReasonMaxTokens {
		b.log.Warn("reply cut off at max_tokens; raise max_tokens in the backend config", zap.Int64("max_tokens", params.MaxTokens))
	}
	if turn.cited.empty() {
		turn.say(turn.found.render())
	} else {
		turn.say(turn.cited.render())
	}
	out := &Response{Text: turn.text.String(), Usage: turn.usage}
	for _, c := range turn.blocks {
		if c.Type == "tool_use" {
			out.ToolCalls = append(out.ToolCalls, claudeToolCall(c))
		}
	}
	if len(out.ToolCalls) > 0 {
		b.mu.Lock()
		b.turns[out.ToolCalls[0].ID] = blockParams(turn.blocks)
		b.mu.Unlock()
	}
	return out, nil
}

func blockParams(blocks []anthropic.ContentBlockUnion) []anthropic.ContentBlockParamUnion {
	out := make([]anthropic.ContentBlockParamUnion, 0, len(blocks))
	for _, c := range blocks {
		out = append(out, c.ToParam())
	}
	return out
}

// stream makes one request of a turn and adds what it brings to turn. The reply is complete
// only with message_stop.
func (b *claudeBackend) stream(ctx context.Context, tap *streamTap, params anthropic.MessageNewParams, turn *claudeTurn) (*anthropic.Message, error) {
	tap.skip = map[string]bool{"ping": true} // the SDK drops them undecoded
	s := b.client.Messages.NewStreaming(ctx, params, b.extra...)
	defer s.Close()

	var msg anthropic.Message
	stopped := false
	decoded := 0
	for s.Next() {
		decoded++
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, &failure{kind: KindInvalidReply, retryable: true, detail: "the provider sent events out of order (" + oneLine(err.Error()) + ")", err: err}
		}
		switch ev.Type {
		case "message_stop":
			stopped = true
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" {
				turn.say(ev.Delta.Text)
			}
		case "content_block_stop":
			if ev.Index >= 0 && ev.Index < int64(len(msg.Content)) {
				b.blockDone(msg.Content[ev.Index], turn)
			}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := s.Err(); err != nil {
		if isDecodeError(err) {
			return nil, invalidJSON(err, tap, decoded)
		}
		return nil, claudeStatusError(err)
	}
	if !stopped {
		// What arrived is not the whole reply (a tool call's arguments may be cut off).
		return nil, endedEarly("message_stop", tap)
	}
	turn.blocks = append(turn.blocks, msg.Content...)
	u := msg.Usage // input_tokens excludes the cache's reads and writes: Usage counts them as input
	turn.usage.Add(Usage{
		InputTokens:       u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:      u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
		CacheWriteTokens:  u.CacheCreationInputTokens,
	})
	return &msg, nil
}

// blockDone handles a finished content block: a tool call is reported, server tool code and
// output join the answer text, and cited or found pages are noted for the sources list.
func (b *claudeBackend) blockDone(c anthropic.ContentBlockUnion, turn *claudeTurn) {
	switch c.Type {
	case "tool_use":
		tc := claudeToolCall(c)
		turn.emit(Event{Kind: EventToolCall, ToolCall: &tc})
	case "text":
		for _, ct := range c.Citations {
			turn.cited.add(ct.Title, ct.URL)
		}
	case "server_tool_use":
		var in struct {
			Code    string `json:"code"`
			Command string `json:"command"`
		}
		_ = json.Unmarshal(c.Input, &in)
		switch {
		case in.Code != "":
			turn.say(renderCode("python", in.Code))
		case in.Command != "":
			turn.say(renderCode("bash", in.Command))
		}
	case "web_search_tool_result":
		for _, r := range c.Content.OfWebSearchResultBlockArray {
			turn.found.add(r.Title, r.URL)
		}
		if code := c.Content.ErrorCode; code != "" {
			turn.say("\n\n(web search failed: " + oneLine(string(code)) + ")\n")
		}
	case "code_execution_tool_result", "bash_code_execution_tool_result":
		var r struct {
			Content struct {
				Type       string `json:"type"`
				Stdout     string `json:"stdout"`
				Stderr     string `json:"stderr"`
				ReturnCode int    `json:"return_code"`
				ErrorCode  string `json:"error_code"`
			} `json:"content"`
		}
		if json.Unmarshal([]byte(c.RawJSON()), &r) != nil {
			return
		}
		failed := ""
		switch {
		case r.Content.ErrorCode != "":
			failed = "failed: " + oneLine(r.Content.ErrorCode)
		case r.Content.ReturnCode != 0:
			failed = fmt.Sprintf("exit code %d", r.Content.ReturnCode)
		}
		turn.say(renderCodeOutput(r.Content.Stdout, r.Content.Stderr, failed))
	}
}

// claudeToolCall turns a finished tool_use block into a ToolCall with valid JSON arguments.
func claudeToolCall(c anthropic.ContentBlockUnion) ToolCall {
	args := json.RawMessage(c.Input)
	if len(args) == 0 || !json.Valid(args) {
		args = json.RawMessage(`{}`)
	}
	return ToolCall{ID: c.ID, Name: c.Name, Arguments: args}
}

// buildMessages converts the conversation: tool results become tool_result blocks in a user
// turn, consecutive same-role turns are merged (the API wants user/assistant alternation), and
// "system" messages join the system prompt.
func (b *claudeBackend) buildMessages(req Request) (string, []anthropic.MessageParam) {
	system := req.System
	var out []anthropic.MessageParam
	add := func(role anthropic.MessageParamRole, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			if role == anthropic.MessageParamRoleUser && blocks[0].OfToolResult != nil && out[n-1].Content[0].OfToolResult == nil {
				// tool_result blocks must come first in their user turn.
				out[n-1].Content = append(blocks, out[n-1].Content...)
				return
			}
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			if m.Content != "" {
				system = strings.TrimSpace(system + "\n\n" + m.Content)
			}
		case "assistant":
			if len(m.ToolCalls) > 0 {
				b.mu.Lock()
				orig := b.turns[m.ToolCalls[0].ID]
				b.mu.Unlock()
				if orig != nil {
					// The model's own blocks, exactly as received.
					add(anthropic.MessageParamRoleAssistant, orig...)
					continue
				}
			}
			var blocks []anthropic.ContentBlockParamUnion
			if strings.TrimSpace(m.Content) != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if len(args) == 0 || !json.Valid(args) {
					args = json.RawMessage(`{}`)
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, args, tc.Name))
			}
			add(anthropic.MessageParamRoleAssistant, blocks...)
		case "tool":
			content := m.Content
			if content == "" {
				content = "(no output)"
			}
			add(anthropic.MessageParamRoleUser, anthropic.NewToolResultBlock(m.ToolCallID, content, m.IsError))
		default: // "user"
			switch {
			case m.SharedPrefix > 0 && m.SharedPrefix < len(m.Content):
				// Two blocks: the part other agents send too ends at a cache breakpoint.
				shared := anthropic.NewTextBlock(m.Content[:m.SharedPrefix])
				shared.OfText.CacheControl = anthropic.NewCacheControlEphemeralParam()
				add(anthropic.MessageParamRoleUser, shared, anthropic.NewTextBlock(m.Content[m.SharedPrefix:]))
			case strings.TrimSpace(m.Content) != "":
				add(anthropic.MessageParamRoleUser, anthropic.NewTextBlock(m.Content))
			}
		}
	}
	return system, out
}

// cacheBreakpoints marks the request's stable prefix for Anthropic's prompt cache (at most 4
// breakpoints; buildMessages sets the one ending the shared part of the prompt): the last tool
// (the tools are the same for agents with the same toolset: the cache serves them to every
// agent), the system prompt, and, once an execution is in its tool loop (the request ends with
// a tool result), the conversation so far, which its next step reads back.
func cacheBreakpoints(p *anthropic.MessageNewParams) {
	if n := len(p.Tools); n > 0 {
		if t := p.Tools[n-1].OfTool; t != nil {
			t.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
	}
	if n := len(p.System); n > 0 {
		p.System[n-1].CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	if n := len(p.Messages); n > 0 {
		blocks := p.Messages[n-1].Content
		if k := len(blocks); k > 0 && blocks[k-1].OfToolResult != nil {
			blocks[k-1].OfToolResult.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
	}
}

// claudeTools declares our tools; their JSON schemas go through unchanged.
func claudeTools(specs []ToolSpec) []anthropic.ToolUnionParam {
	if len(specs) == 0 {
		return nil
	}
	tools := make([]anthropic.ToolUnionParam, 0, len(specs))
	for _, s := range specs {
		schema := anthropic.ToolInputSchemaParam{Properties: map[string]any{}}
		for k, v := range s.Parameters {
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				if r, err := apiParamStrings("required", v); err == nil {
					schema.Required = r
				}
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = map[string]any{}
				}
				schema.ExtraFields[k] = v
			}
		}
		t := anthropic.ToolParam{Name: s.Name, InputSchema: schema}
		if s.Description != "" {
			t.Description = anthropic.String(s.Description)
		}
		tools = append(tools, anthropic.ToolUnionParam{OfTool: &t})
	}
	return tools
}

// claudeStatusError maps an SDK error onto *HTTPStatusError so caller.generate can judge it. Errors
// sent inside a 200 event stream (overloaded_error, api_error, rate_limit_error) get the status
// the same error would have had as an HTTP answer.
func claudeStatusError(err error) error {
	var ae *anthropic.Error
	if !errors.As(err, &ae) {
		return err
	}
	code := ae.StatusCode
	var retryAfter time.Duration
	if code >= 400 {
		if ae.Response != nil {
			retryAfter = RetryAfterHeader(ae.Response.Header)
		}
	} else {
		switch ae.Type() {
		case "overloaded_error":
			code = 529
		case "rate_limit_error":
			code = http.StatusTooManyRequests
		case "api_error":
			code = http.StatusInternalServerError
		case "timeout_error":
			code = http.StatusGatewayTimeout
		default:
			code = http.StatusBadRequest
		}
	}
	return &HTTPStatusError{StatusCode: code, Body: truncateBody(ae.RawJSON()), RetryAfter: retryAfter, Err: err}
}

// Helpers shared by the claude and gemini backends.

// truncateBody keeps error bodies short enough for a message.
func truncateBody(s string) string {
	s = strings.TrimSpace(s)
	const max = 500
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// sortedKeys gives map keys in a stable order so option handling (and its errors) is deterministic.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// apiParamStrings reads a list of strings (a single string counts as a list of one).
func apiParamStrings(key string, v any) ([]string, error) {
	switch l := v.(type) {
	case string:
		return []string{l}, nil
	case []string:
		return l, nil
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d]: want a string, got %v (%T)", key, i, e, e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: want a list of strings, got %v (%T)", key, v, v)
}
