package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/massgen-go/massgen/configs"
)

// geminiDefaultModel is used when the config names no model.
const geminiDefaultModel = "gemini-2.5-flash"

// geminiLocalIDPrefix marks tool-call ids we made up because Gemini sent none; they are never
// sent back to the API.
const geminiLocalIDPrefix = "gemini-call-"

// geminiBackend talks to the Gemini API (streamGenerateContent, SSE) through google.golang.org/genai.
type geminiBackend struct {
	client *genai.Client
	model  string
	// base holds the pass-through generation options; copied per call.
	base genai.GenerateContentConfig
	// extraBody is merged into every request body (the config's extra_body).
	extraBody map[string]any
	o         Options
	log       *zap.Logger
	call      caller

	// webSearch and codeExecution are MassGen's enable_web_search and enable_code_execution:
	// the Google Search and code execution tools.
	webSearch, codeExecution bool

	mu     sync.Mutex
	nextID int
	// replies keeps the model's own turns for replies that made function calls, keyed by the
	// first call's id: Gemini's thought signatures (and server tool invocations) ride on those
	// parts and must be sent back unchanged, and Message has no field for them.
	replies map[string]*geminiReply
}

// geminiReply is what a reply with function calls adds to the conversation, to send back: the
// model turns (and, between them, the answers to calls the backend ran itself), and the
// answers to such calls in the last turn, which go with the tool results.
type geminiReply struct {
	turns   []*genai.Content
	pending []*genai.Part
}

// newGemini builds the `gemini` backend (Gemini Developer API with an API key). The key is the
// config's api_key, else GEMINI_API_KEY, else GOOGLE_API_KEY.
func newGemini(cfg configs.Backend, o Options) (Backend, error) {
	s, err := setupKeyed(cfg, o, "gemini", geminiDefaultModel)
	if err != nil {
		return nil, err
	}
	o = s.o
	b := &geminiBackend{
		model:   s.model,
		o:       o,
		log:     s.log,
		replies: map[string]*geminiReply{},
		call:    s.call,
	}
	if err := b.applyExtra(cfg); err != nil {
		return nil, fmt.Errorf("backend gemini: %w", err)
	}
	// The tap also keeps stream read errors from genai, which prints them with the standard
	// logger (on the user's terminal, at every agent restart).
	hc := tapClient(o.HTTPClient)
	cc := &genai.ClientConfig{
		APIKey:     s.key,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		// No RetryOptions: the SDK then makes a single attempt and caller.generate does the
		// retrying, so it can report EventRetry and retries replies that end early too.
		HTTPOptions: genai.HTTPOptions{BaseURL: strings.TrimSpace(cfg.BaseURL), ExtraBody: b.extraBody},
	}
	client, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, fmt.Errorf("backend gemini: %w", err)
	}
	b.client = client
	return b, nil
}

func (b *geminiBackend) Provider() string { return "gemini" }
func (b *geminiBackend) Model() string    { return b.model }

// applyExtra maps the backend's options, typed by the config's param table, onto generation
// options and the built-in tool switches; other MassGen options are not sent.
func (b *geminiBackend) applyExtra(cfg configs.Backend) error {
	p, err := cfg.Params()
	if err != nil {
		return err
	}
	logUnsent(b.log, cfg, p, "a Gemini API parameter")
	f32 := func(k string) *float32 {
		if f, ok := p.Float(k); ok {
			x := float32(f)
			return &x
		}
		return nil
	}
	b.base.Temperature = f32("temperature")
	b.base.TopP = f32("top_p")
	b.base.PresencePenalty = f32("presence_penalty")
	b.base.FrequencyPenalty = f32("frequency_penalty")
	if n, ok := p.Int("top_k"); ok {
		x := float32(n)
		b.base.TopK = &x
	}
	for _, k := range []string{"max_output_tokens", "max_tokens"} { // max_tokens wins
		if n, ok := p.Int(k); ok {
			b.base.MaxOutputTokens = int32(n)
		}
	}
	if n, ok := p.Int("seed"); ok {
		x := int32(n)
		b.base.Seed = &x
	}
	if s, ok := p.Strings("stop_sequences"); ok {
		b.base.StopSequences = s
	}
	thinking := func() *genai.ThinkingConfig {
		if b.base.ThinkingConfig == nil {
			b.base.ThinkingConfig = &genai.ThinkingConfig{}
		}
		return b.base.ThinkingConfig
	}
	// The thinking settings, at the top or inside thinking_config (or thinking); the later wins.
	for _, prefix := range []string{"", "thinking.", "thinking_config."} {
		for _, k := range []string{"budget_tokens", "thinking_budget"} {
			if n, ok := p.Int(prefix + k); ok {
				x := int32(n)
				thinking().ThinkingBudget = &x
			}
		}
		if v, ok := p.Value(prefix + "include_thoughts"); ok {
			thinking().IncludeThoughts = v.(bool)
		}
		if s, ok := p.String(prefix + "thinking_level"); ok {
			thinking().ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(s))
		}
	}
	b.webSearch = p.Bool("enable_web_search")
	b.codeExecution = p.Bool("enable_code_execution")
	// Raw request fields in the API's own (camelCase) shape, merged into the body.
	if m, ok := p.Object("extra_body"); ok {
		b.extraBody = m
	}
	return nil
}

// Generate streams one generateContent call, retrying 429/5xx and replies that end without a
// finish reason. With built-in tools and our function declarations in one request, models that
// cannot combine them (before Gemini 3) get the built-in tools as functions the backend answers
// itself with a request of their own (see geminiProxy).
func (b *geminiBackend) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	contents, system := b.buildContents(req)
	decls := geminiDeclarations(req.Tools)
	base := b.base // the SDK may fill in defaults: each request gets its own copy
	if system != "" {
		base.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: system}}}
	}
	var proxies map[string]geminiProxy
	switch builtins := b.builtinTools(); {
	case len(builtins) == 0:
	case len(decls) == 0:
		base.Tools = builtins
	case geminiCombinesTools(b.model):
		base.Tools = builtins
		base.ToolConfig = &genai.ToolConfig{IncludeServerSideToolInvocations: genai.Ptr(true)}
	default:
		proxies = b.proxies(decls)
		for _, p := range proxies {
			decls = append(decls, p.decl)
		}
	}
	if len(decls) > 0 {
		base.Tools = append([]*genai.Tool{{FunctionDeclarations: decls}}, base.Tools...)
	}
	return b.call.generate(ctx, onEvent, func(ctx context.Context, tap *streamTap, emit func(Event)) (*Response, error) {
		return b.reply(ctx, tap, contents, &base, proxies, emit)
	})
}

// geminiMaxProxyRounds bounds the requests one reply may take while the model calls the
// built-in tools the backend answers itself.
const geminiMaxProxyRounds = 8

// geminiTurn is one reply being assembled.
type geminiTurn struct {
	answer
	code    strings.Builder // the code run by the provider and its output, as in text
	sources sources
	usage   Usage
}

// reply makes one attempt: a request, and more while the model calls only built-in tools the
// backend answers (their results go back and the model goes on).
func (b *geminiBackend) reply(ctx context.Context, tap *streamTap, contents []*genai.Content, cfg *genai.GenerateContentConfig, proxies map[string]geminiProxy, emit func(Event)) (*Response, error) {
	turn := &geminiTurn{answer: answer{emit: emit}}
	out := &Response{}
	var turns []*genai.Content
	var pending []*genai.Part
	for round := 0; ; round++ {
		if round > 0 {
			tap.reset()
		}
		c := *cfg
		model, calls, err := b.stream(ctx, tap, contents, &c, turn)
		if err != nil {
			return nil, err
		}
		turns = append(turns, model)
		var answers []*genai.Part
		for _, fc := range calls {
			p, ok := proxies[fc.Name]
			if !ok {
				tc, err := b.toolCall(fc)
				if err != nil {
					return nil, err
				}
				out.ToolCalls = append(out.ToolCalls, tc)
				emit(Event{Kind: EventToolCall, ToolCall: &tc})
				continue
			}
			result := "the limit of built-in tool calls for one reply was reached"
			if round+1 < geminiMaxProxyRounds {
				result = b.runProxy(ctx, p, fc, turn)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			answers = append(answers, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: map[string]any{"output": result}}})
		}
		if len(answers) == 0 || len(out.ToolCalls) > 0 || round+1 >= geminiMaxProxyRounds {
			pending = answers
			break
		}
		answer := &genai.Content{Role: genai.RoleUser, Parts: answers}
		turns = append(turns, answer)
		contents = append(slices.Clone(contents), model, answer)
	}
	turn.say(turn.sources.render())
	out.Text, out.Usage = turn.text.String(), turn.usage
	if len(out.ToolCalls) > 0 {
		b.mu.Lock()
		b.replies[out.ToolCalls[0].ID] = &geminiReply{turns: turns, pending: pending}
		b.mu.Unlock()
	}
	return out, nil
}

// stream makes one request and adds what it brings to turn: text, code run by the provider and
// its output, grounding sources. It returns the model's turn as received and its function
// calls. Gemini sends each functionCall whole (complete args) inside a chunk, possibly several
// per chunk; text arrives as parts spread over chunks. The reply is complete only with a finish
// reason (or a blocked prompt).
func (b *geminiBackend) stream(ctx context.Context, tap *streamTap, contents []*genai.Content, cfg *genai.GenerateContentConfig, turn *geminiTurn) (*genai.Content, []*genai.FunctionCall, error) {
	var parts []*genai.Part
	var calls []*genai.FunctionCall
	var usage *genai.GenerateContentResponseUsageMetadata
	var finish genai.FinishReason
	var finishMsg, blocked string
	said := turn.text.Len()
	decoded := 0
	for chunk, err := range b.client.Models.GenerateContentStream(ctx, b.model, contents, cfg) {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err != nil {
			return nil, nil, geminiStreamError(err, tap, decoded)
		}
		decoded++
		if chunk == nil {
			continue
		}
		if chunk.UsageMetadata != nil {
			usage = chunk.UsageMetadata // running total for the call, not a delta
		}
		if pf := chunk.PromptFeedback; pf != nil && pf.BlockReason != "" {
			blocked = string(pf.BlockReason)
			if pf.BlockReasonMessage != "" {
				blocked += ": " + pf.BlockReasonMessage
			}
		}
		if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
			continue
		}
		cand := chunk.Candidates[0]
		if cand.FinishReason != "" {
			finish, finishMsg = cand.FinishReason, cand.FinishMessage
		}
		if gm := cand.GroundingMetadata; gm != nil {
			for _, gc := range gm.GroundingChunks {
				if gc != nil && gc.Web != nil {
					turn.sources.add(gc.Web.Title, gc.Web.URI)
				}
			}
		}
		if cand.Content == nil {
			continue
		}
		for _, p := range cand.Content.Parts {
			if p == nil {
				continue
			}
			parts = append(parts, p)
			switch {
			case p.FunctionCall != nil:
				calls = append(calls, p.FunctionCall)
			case p.Thought:
				// Thought summaries (include_thoughts) are not part of the answer.
			case p.ExecutableCode != nil:
				r := renderCode(string(p.ExecutableCode.Language), p.ExecutableCode.Code)
				turn.code.WriteString(r)
				turn.say(r)
			case p.CodeExecutionResult != nil:
				r := p.CodeExecutionResult
				failed := ""
				if r.Outcome != "" && r.Outcome != genai.OutcomeOK {
					failed = strings.ToLower(strings.TrimPrefix(string(r.Outcome), "OUTCOME_"))
				}
				out := renderCodeOutput(r.Output, "", failed)
				turn.code.WriteString(out)
				turn.say(out)
			case p.Text != "":
				turn.say(p.Text)
			}
		}
	}
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if finish == "" && blocked == "" {
		return nil, nil, endedEarly("a finish reason", tap)
	}
	if usage != nil {
		// promptTokenCount includes the cached part (cachedContentTokenCount); thoughts are
		// reported beside the candidates: Usage counts them as output.
		turn.usage.Add(Usage{
			InputTokens:       int64(usage.PromptTokenCount) + int64(usage.ToolUsePromptTokenCount),
			OutputTokens:      int64(usage.CandidatesTokenCount) + int64(usage.ThoughtsTokenCount),
			CachedInputTokens: int64(usage.CachedContentTokenCount),
			ReasoningTokens:   int64(usage.ThoughtsTokenCount),
		})
	}
	if turn.text.Len() == said && len(calls) == 0 {
		switch {
		case blocked != "":
			return nil, nil, &failure{kind: KindEmptyReply, detail: "the prompt was blocked (" + oneLine(blocked) + ")"}
		case finish != genai.FinishReasonStop && finish != genai.FinishReasonUnspecified:
			msg := string(finish)
			if finishMsg != "" {
				msg += ": " + finishMsg
			}
			return nil, nil, &failure{kind: KindEmptyReply, detail: "empty reply (finish reason " + oneLine(msg) + ")"}
		}
	}
	if finish == genai.FinishReasonMaxTokens {
		b.log.Warn("reply cut off at max_output_tokens; raise max_tokens in the backend config")
	}
	return &genai.Content{Role: genai.RoleModel, Parts: parts}, calls, nil
}

// geminiStreamError classifies an error genai yields while streaming. decoded is how many
// chunks came before it.
func geminiStreamError(err error, tap *streamTap, decoded int) error {
	switch {
	case isDecodeError(err):
		return invalidJSON(err, tap, decoded)
	case strings.Contains(err.Error(), "invalid stream chunk"):
		if f := notStreamed(tap); f != nil {
			return f
		}
		f := invalidJSON(err, tap, decoded)
		f.detail = strings.Replace(f.detail, "that is not valid JSON", "that is not a server-sent event", 1)
		return f
	}
	return geminiStatusError(err)
}

// toolCall converts a functionCall part, giving it an id when Gemini sent none (the
// orchestrator pairs results with calls by id).
func (b *geminiBackend) toolCall(fc *genai.FunctionCall) (ToolCall, error) {
	args := fc.Args
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return ToolCall{}, fmt.Errorf("function call %s: encoding args: %w", fc.Name, err)
	}
	id := fc.ID
	if id == "" {
		b.mu.Lock()
		b.nextID++
		id = geminiLocalIDPrefix + strconv.Itoa(b.nextID)
		b.mu.Unlock()
	}
	return ToolCall{ID: id, Name: fc.Name, Arguments: raw}, nil
}

// buildContents converts the conversation. Gemini has roles user and model; tool results are
// functionResponse parts in a user turn, and consecutive turns of one role are merged.
func (b *geminiBackend) buildContents(req Request) ([]*genai.Content, string) {
	system := req.System
	names := map[string]string{} // call id -> function name, for results that lack ToolName
	var out []*genai.Content
	add := func(role string, parts ...*genai.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		// A copy: later turns are appended to it, and parts may be a stored reply's.
		out = append(out, &genai.Content{Role: role, Parts: slices.Clone(parts)})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			if m.Content != "" {
				system = strings.TrimSpace(system + "\n\n" + m.Content)
			}
		case "assistant":
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
			}
			if len(m.ToolCalls) > 0 {
				b.mu.Lock()
				orig := b.replies[m.ToolCalls[0].ID]
				b.mu.Unlock()
				if orig != nil {
					// Replay the model's own turns: they carry the thought signatures.
					for _, c := range orig.turns {
						add(c.Role, c.Parts...)
					}
					add(genai.RoleUser, orig.pending...)
					continue
				}
			}
			var parts []*genai.Part
			if strings.TrimSpace(m.Content) != "" {
				parts = append(parts, &genai.Part{Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				args := map[string]any{}
				if len(tc.Arguments) > 0 {
					if err := json.Unmarshal(tc.Arguments, &args); err != nil {
						args = map[string]any{}
					}
				}
				parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: apiCallID(tc.ID), Name: tc.Name, Args: args}})
			}
			add(genai.RoleModel, parts...)
		case "tool":
			name := m.ToolName
			if name == "" {
				name = names[m.ToolCallID]
			}
			// Gemini's convention: "output" for a result, "error" for a failure.
			key := "output"
			if m.IsError {
				key = "error"
			}
			add(genai.RoleUser, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID:       apiCallID(m.ToolCallID),
				Name:     name,
				Response: map[string]any{key: m.Content},
			}})
		default: // "user"
			if strings.TrimSpace(m.Content) != "" {
				add(genai.RoleUser, &genai.Part{Text: m.Content})
			}
		}
	}
	return out, system
}

// apiCallID drops the ids we invented; the API only knows its own.
func apiCallID(id string) string {
	if strings.HasPrefix(id, geminiLocalIDPrefix) {
		return ""
	}
	return id
}

// geminiDeclarations declares our tools. Their JSON schemas go through unchanged as
// parametersJsonSchema, which (unlike the OpenAPI-subset `parameters`) takes plain JSON schema.
func geminiDeclarations(specs []ToolSpec) []*genai.FunctionDeclaration {
	decls := make([]*genai.FunctionDeclaration, 0, len(specs))
	for _, s := range specs {
		params := s.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		decls = append(decls, &genai.FunctionDeclaration{Name: s.Name, Description: s.Description, ParametersJsonSchema: params})
	}
	return decls
}

// geminiStatusError maps a genai.APIError onto *HTTPStatusError so caller.generate can judge it; the
// wait comes from the google.rpc.RetryInfo detail Gemini sends with 429s.
func geminiStatusError(err error) error {
	var ae genai.APIError
	if !errors.As(err, &ae) {
		var pae *genai.APIError
		if !errors.As(err, &pae) || pae == nil {
			return err
		}
		ae = *pae
	}
	body := ae.Message
	if ae.Status != "" {
		body += " (" + ae.Status + ")"
	}
	return &HTTPStatusError{StatusCode: ae.Code, Body: truncateBody(body), RetryAfter: geminiRetryDelay(ae.Details), Err: err}
}

// geminiRetryDelay reads retryDelay ("12s", "0.5s") from a RetryInfo error detail.
func geminiRetryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if dur, err := time.ParseDuration(s); err == nil && dur > 0 {
				return dur
			}
		}
	}
	return 0
}
