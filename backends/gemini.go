package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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

	mu     sync.Mutex
	nextID int
	// replies keeps the model's own Content for replies that made function calls, keyed by the
	// first call's id: Gemini's thought signatures ride on those parts and must be sent back
	// unchanged, and Message has no field for them.
	replies map[string]*genai.Content
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
		replies: map[string]*genai.Content{},
	}
	if err := b.applyExtra(cfg.Extra); err != nil {
		return nil, fmt.Errorf("backend gemini: %w", err)
	}
	hc := &http.Client{}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		hc = &c
	}
	hc.Transport = quietCancelTransport{base: hc.Transport}
	cc := &genai.ClientConfig{
		APIKey:     s.key,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		// No RetryOptions: the SDK then makes a single attempt and withRetryNotify does the
		// retrying, so it can report EventRetry and never repeats a partly streamed reply.
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

// applyExtra maps extra YAML keys onto generation options; MassGen-only keys
// (enable_web_search, enable_code_execution, ...) are ignored with a debug log.
func (b *geminiBackend) applyExtra(extra map[string]any) error {
	f32 := func(k string, v any) (*float32, error) {
		f, err := apiParamFloat(k, v)
		if err != nil {
			return nil, err
		}
		x := float32(f)
		return &x, nil
	}
	thinking := func() *genai.ThinkingConfig {
		if b.base.ThinkingConfig == nil {
			b.base.ThinkingConfig = &genai.ThinkingConfig{}
		}
		return b.base.ThinkingConfig
	}
	setThinking := func(k string, v any) error {
		switch k {
		case "thinking_budget", "budget_tokens":
			n, err := apiParamInt(k, v)
			if err != nil {
				return err
			}
			x := int32(n)
			thinking().ThinkingBudget = &x
		case "include_thoughts":
			t, ok := v.(bool)
			if !ok {
				return fmt.Errorf("%s: want true or false, got %v (%T)", k, v, v)
			}
			thinking().IncludeThoughts = t
		case "thinking_level":
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: want a string (low, high, ...), got %v (%T)", k, v, v)
			}
			thinking().ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(s))
		default:
			b.log.Debug("ignoring unknown thinking option", zap.String("key", k))
		}
		return nil
	}
	for _, k := range sortedKeys(extra) {
		v := extra[k]
		var err error
		switch k {
		case "temperature":
			b.base.Temperature, err = f32(k, v)
		case "top_p":
			b.base.TopP, err = f32(k, v)
		case "top_k":
			b.base.TopK, err = f32(k, v)
		case "presence_penalty":
			b.base.PresencePenalty, err = f32(k, v)
		case "frequency_penalty":
			b.base.FrequencyPenalty, err = f32(k, v)
		case "max_tokens", "max_output_tokens":
			var n int64
			if n, err = apiParamInt(k, v); err == nil {
				b.base.MaxOutputTokens = int32(n)
			}
		case "seed":
			var n int64
			if n, err = apiParamInt(k, v); err == nil {
				x := int32(n)
				b.base.Seed = &x
			}
		case "stop_sequences":
			b.base.StopSequences, err = apiParamStrings(k, v)
		case "thinking_budget", "budget_tokens", "include_thoughts", "thinking_level":
			err = setThinking(k, v)
		case "thinking_config", "thinking":
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: want a mapping like {thinking_budget: 1024}, got %v (%T)", k, v, v)
			}
			for _, sk := range sortedKeys(m) {
				if err := setThinking(sk, m[sk]); err != nil {
					return fmt.Errorf("%s.%w", k, err)
				}
			}
		case "extra_body":
			// Raw request fields in the API's own (camelCase) shape, merged into the body.
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("extra_body: want a mapping, got %v (%T)", v, v)
			}
			b.extraBody = m
		default:
			b.log.Debug("ignoring backend option: not a Gemini API parameter", zap.String("key", k))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Generate streams one generateContent call, retrying 429/5xx while nothing has been reported
// through onEvent yet.
func (b *geminiBackend) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	contents, system := b.buildContents(req)
	decls := geminiDeclarations(req.Tools)

	return generateWithRetry(ctx, b.o, "gemini", b.model, onEvent, func() (*Response, error) {
		cfg := b.base // fresh copy per attempt: the SDK may fill in defaults
		if system != "" {
			cfg.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: system}}}
		}
		if len(decls) > 0 {
			cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		}
		return b.stream(ctx, contents, &cfg, onEvent)
	})
}

// stream makes one attempt. Gemini sends each functionCall whole (complete args) inside a chunk,
// possibly several per chunk; text arrives as parts spread over chunks.
func (b *geminiBackend) stream(ctx context.Context, contents []*genai.Content, cfg *genai.GenerateContentConfig, onEvent func(Event)) (out *Response, resErr error) {
	out = &Response{}
	var text strings.Builder
	var parts []*genai.Part
	var usage *genai.GenerateContentResponseUsageMetadata
	var finish genai.FinishReason
	var finishMsg, blocked string
	events := &attemptEvents{onEvent: onEvent}
	emit := events.emit
	defer func() {
		// quietCancelTransport turns a cancelled body into a clean end; report the cancel.
		if ctx.Err() != nil {
			out, resErr = nil, ctx.Err()
		}
	}()
	for chunk, err := range b.client.Models.GenerateContentStream(ctx, b.model, contents, cfg) {
		if err != nil {
			return nil, events.failed(ctx, err, geminiStatusError)
		}
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
				tc, err := b.toolCall(p.FunctionCall)
				if err != nil {
					return nil, err
				}
				out.ToolCalls = append(out.ToolCalls, tc)
				emit(Event{Kind: EventToolCall, ToolCall: &tc})
			case p.Thought:
				// Thought summaries (include_thoughts) are not part of the answer.
			case p.Text != "":
				text.WriteString(p.Text)
				emit(Event{Kind: EventTextDelta, Text: p.Text})
			}
		}
	}
	if finish == "" && blocked == "" {
		// Every complete reply ends with a finish reason; without one the stream was cut off.
		return nil, events.cutOff("stream ended without a finish reason")
	}
	out.Text = text.String()
	if usage != nil {
		out.Usage = Usage{
			InputTokens:  int64(usage.PromptTokenCount) + int64(usage.ToolUsePromptTokenCount),
			OutputTokens: int64(usage.CandidatesTokenCount) + int64(usage.ThoughtsTokenCount),
		}
	}
	if out.Text == "" && len(out.ToolCalls) == 0 {
		switch {
		case blocked != "":
			return nil, fmt.Errorf("prompt blocked (%s)", blocked)
		case finish != "" && finish != genai.FinishReasonStop && finish != genai.FinishReasonUnspecified:
			msg := string(finish)
			if finishMsg != "" {
				msg += ": " + finishMsg
			}
			return nil, fmt.Errorf("empty reply (finish reason %s)", msg)
		}
	}
	if finish == genai.FinishReasonMaxTokens {
		b.log.Warn("reply cut off at max_output_tokens; raise max_tokens in the backend config")
	}
	if len(out.ToolCalls) > 0 {
		b.mu.Lock()
		b.replies[out.ToolCalls[0].ID] = &genai.Content{Role: genai.RoleModel, Parts: parts}
		b.mu.Unlock()
	}
	return out, nil
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
		out = append(out, &genai.Content{Role: role, Parts: parts})
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
					// Replay the model's own parts: they carry the thought signatures.
					add(genai.RoleModel, orig.Parts...)
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

// geminiStatusError maps a genai.APIError onto *HTTPStatusError so withRetry can judge it; the
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
		body = ae.Status + ": " + body
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

// quietCancelTransport makes a response body whose request was cancelled end with io.EOF
// instead of the context error. genai prints scanner errors with the standard log package
// ("Error context canceled"), which would land on the terminal at every agent restart;
// stream() reports the cancellation itself.
type quietCancelTransport struct{ base http.RoundTripper }

func (t quietCancelTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = quietCancelBody{ReadCloser: resp.Body, ctx: r.Context()}
	return resp, nil
}

type quietCancelBody struct {
	io.ReadCloser
	ctx context.Context
}

func (b quietCancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.ctx.Err() != nil {
		return n, io.EOF
	}
	return n, err
}
