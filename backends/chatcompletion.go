package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/massgen-go/massgen/configs"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
	"go.uber.org/zap"
)

// defaultAzureAPIVersion is used when neither api_version nor AZURE_OPENAI_API_VERSION is set.
const defaultAzureAPIVersion = "2024-10-21"

// chatParams are the backend config keys sent to Chat Completions (config key -> body key).
// top_k, min_p, repetition_penalty and chat_template_kwargs are understood by the local
// OpenAI-compatible servers (vLLM, SGLang, LM Studio) that MassGen configs use them with.
var chatParams = map[string]string{
	"temperature":           "temperature",
	"top_p":                 "top_p",
	"max_tokens":            "max_tokens",
	"max_completion_tokens": "max_completion_tokens",
	"frequency_penalty":     "frequency_penalty",
	"presence_penalty":      "presence_penalty",
	"seed":                  "seed",
	"stop":                  "stop",
	"logit_bias":            "logit_bias",
	"logprobs":              "logprobs",
	"top_logprobs":          "top_logprobs",
	"parallel_tool_calls":   "parallel_tool_calls",
	"tool_choice":           "tool_choice",
	"reasoning_effort":      "reasoning_effort",
	"verbosity":             "verbosity",
	"response_format":       "response_format",
	"service_tier":          "service_tier",
	"user":                  "user",
	"metadata":              "metadata",
	"top_k":                 "top_k",
	"min_p":                 "min_p",
	"repetition_penalty":    "repetition_penalty",
	"chat_template_kwargs":  "chat_template_kwargs",
}

// chatCompletion is the `chatcompletion` backend and every named preset (grok, zai, lmstudio,
// vllm, azure_openai, ...): the Chat Completions API of any OpenAI-compatible server.
type chatCompletion struct {
	svc      openai.ChatCompletionService
	provider string
	model    string
	extra    []option.RequestOption
	o        Options
	logger   *zap.Logger
	call     caller
	// cacheKey: the server is OpenAI's own, which takes prompt_cache_key (other compatible
	// servers may refuse a field they do not know).
	cacheKey bool
}

// chatEndpoint resolves the base URL and key for a chatcompletion-family config (Azure has
// its own path in newChatCompletion).
func chatEndpoint(cfg configs.Backend, lookup func(string) (string, bool)) (baseURL, key string, err error) {
	vars, needed, err := keyRequirement(cfg)
	if err != nil {
		return "", "", err
	}
	key, ok := resolveKey(cfg, vars, lookup)
	if needed && !ok {
		return "", "", CheckKey(cfg, lookup)
	}
	baseURL = cfg.BaseURL
	if baseURL == "" {
		if p, ok := presets[cfg.Type]; ok {
			baseURL = p.baseURL
		}
	}
	if baseURL == "" {
		if cfg.Type == "chatcompletion" {
			baseURL = defaultOpenAIBaseURL
		} else {
			return "", "", fmt.Errorf("backend %q: no base_url", cfg.Type)
		}
	}
	return baseURL, key, nil
}

// azureEndpoint is the Azure resource endpoint from the config or AZURE_OPENAI_ENDPOINT.
func azureEndpoint(cfg configs.Backend, lookup func(string) (string, bool)) string {
	if cfg.BaseURL != "" {
		return cfg.BaseURL
	}
	params, _ := cfg.Params() // a wrong value is reported by validation and newChatCompletion
	for _, k := range []string{"azure_endpoint", "endpoint"} {
		if s, _ := params.String(k); s != "" {
			return s
		}
	}
	if v, ok := lookup("AZURE_OPENAI_ENDPOINT"); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

// azureBaseURL is the URL Chat Completions are posted under: the v1 API when the endpoint
// already says /openai/v1, else the classic per-deployment path (the model is the deployment).
// Done by hand rather than with the SDK's azure package, which would pull in the Azure SDK.
func azureBaseURL(endpoint, deployment string) string {
	e := strings.TrimSuffix(endpoint, "/")
	if strings.HasSuffix(e, "/openai/v1") {
		return e + "/"
	}
	e = strings.TrimSuffix(e, "/openai")
	return e + "/openai/deployments/" + url.PathEscape(deployment) + "/"
}

func newChatCompletion(cfg configs.Backend, o Options) (Backend, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("%s backend: model is required", cfg.Type)
	}
	logger := o.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	params, err := cfg.Params()
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", cfg.Type, err)
	}
	logUnsent(logger, cfg, params, "a Chat Completions parameter")
	var opts []option.RequestOption
	var hint string
	if cfg.Type == "azure_openai" {
		endpoint := azureEndpoint(cfg, o.LookupEnv)
		if endpoint == "" {
			return nil, fmt.Errorf("backend \"azure_openai\": no endpoint: set AZURE_OPENAI_ENDPOINT or base_url in the config")
		}
		key, ok := resolveKey(cfg, presets["azure_openai"].keyVars, o.LookupEnv)
		if !ok {
			return nil, CheckKey(cfg, o.LookupEnv)
		}
		version, _ := params.String("api_version")
		if version == "" {
			if v, ok := o.LookupEnv("AZURE_OPENAI_API_VERSION"); ok && v != "" {
				version = v
			} else {
				version = defaultAzureAPIVersion
			}
		}
		hint = keyHint(cfg, presets["azure_openai"].keyVars)
		opts = append(openaiClientOptions(o, azureBaseURL(endpoint, cfg.Model), ""), option.WithHeader("api-key", key))
		if !strings.Contains(strings.TrimSuffix(endpoint, "/"), "/openai/v1") {
			opts = append(opts, option.WithQuery("api-version", version))
		}
	} else {
		base, key, err := chatEndpoint(cfg, o.LookupEnv)
		if err != nil {
			return nil, err
		}
		opts = openaiClientOptions(o, base, key)
		vars, _, _ := keyRequirement(cfg)
		hint = keyHint(cfg, vars)
	}
	// Responses-style options map onto their Chat Completions names (one written as such wins).
	sent := passthrough(params, chatParams, logger, cfg.Type)
	for _, m := range []struct{ from, to string }{{"reasoning.effort", "reasoning_effort"}, {"text.verbosity", "verbosity"}} {
		if v, ok := params.String(m.from); ok && !params.Has(m.to) {
			sent = append(sent, option.WithJSONSet(m.to, v))
		}
	}
	b := &chatCompletion{
		svc:      openai.NewChatCompletionService(opts...),
		provider: cfg.Type,
		model:    cfg.Model,
		extra:    sent,
		o:        o,
		logger:   logger,
		call:     newCaller(o, cfg.Type, cfg.Model, hint),
		cacheKey: cfg.Type == "chatcompletion" && PricingProvider(cfg) == "openai",
	}
	if cfg.Type == "grok" || cfg.Type == "xai" {
		search, err := grokSearch(params)
		if err != nil {
			return nil, fmt.Errorf("backend %s: %w", cfg.Type, err)
		}
		b.extra = append(b.extra, search...)
	}
	return b, nil
}

// grokSearch is MassGen's switch for xAI Live Search: enable_web_search sends
// search_parameters {mode: auto, return_citations: true}. Search parameters written by hand go
// in extra_body.search_parameters (sent as written by passthrough); both at once is an error,
// as in MassGen, since one would silently override the other.
func grokSearch(p configs.Params) ([]option.RequestOption, error) {
	if !p.Bool("enable_web_search") {
		return nil, nil
	}
	if eb, ok := p.Object("extra_body"); ok {
		if _, manual := eb["search_parameters"]; manual {
			return nil, fmt.Errorf("enable_web_search: true and extra_body.search_parameters are both set; use one or the other")
		}
	}
	return []option.RequestOption{option.WithJSONSet("search_parameters", map[string]any{"mode": "auto", "return_citations": true})}, nil
}

func (b *chatCompletion) Provider() string { return b.provider }
func (b *chatCompletion) Model() string    { return b.model }

func (b *chatCompletion) params(req Request) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(b.model)}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			var a openai.ChatCompletionAssistantMessageParam
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: callArguments(tc)},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case "tool":
			p.Messages = append(p.Messages, openai.ToolMessage(toolResultText(m), m.ToolCallID))
		default:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		}
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(toolParameters(t))}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	if b.cacheKey && req.CacheKey != "" {
		p.PromptCacheKey = param.NewOpt(req.CacheKey)
	}
	return p
}

// chatCall is a tool call being assembled from chunk deltas.
type chatCall struct {
	id, name string
	args     strings.Builder
}

// Generate streams one chat completion.
func (b *chatCompletion) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	params := b.params(req)
	return b.call.generate(ctx, onEvent, func(ctx context.Context, tap *streamTap, emit func(Event)) (*Response, error) {
		return b.once(ctx, tap, params, emit)
	})
}

// once makes one streamed request. The reply is complete only with a finish_reason or the
// [DONE] terminator: a stream that stops without either was cut off.
func (b *chatCompletion) once(ctx context.Context, tap *streamTap, params openai.ChatCompletionNewParams, emit func(Event)) (*Response, error) {
	stream := b.svc.NewStreaming(ctx, params, b.extra...)
	defer stream.Close()

	resp := &Response{}
	var text strings.Builder
	var calls []*chatCall
	var cited sources
	slot := map[int64]int{} // delta index -> position in calls
	finish := ""            // the finish_reason, once it arrived
	decoded := 0            // chunks decoded so far
	choices := false        // some chunk had a choice
	for stream.Next() {
		decoded++
		chunk := stream.Current()
		if chunk.Usage.PromptTokens != 0 || chunk.Usage.CompletionTokens != 0 {
			u := chunk.Usage
			resp.Usage = Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
				CachedInputTokens: u.PromptTokensDetails.CachedTokens, ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens}
		}
		// xAI Live Search sends the pages it used as a top-level list of URLs.
		if c, ok := chunk.JSON.ExtraFields["citations"]; ok && c.Raw() != "" {
			var urls []string
			if json.Unmarshal([]byte(c.Raw()), &urls) == nil {
				for _, u := range urls {
					cited.add("", u)
				}
			}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		choices = true
		if r := chunk.Choices[0].FinishReason; r != "" {
			finish = r
		}
		d := chunk.Choices[0].Delta
		if d.Content != "" {
			text.WriteString(d.Content)
			emit(Event{Kind: EventTextDelta, Text: d.Content})
		}
		for _, tc := range d.ToolCalls {
			pos, ok := slot[tc.Index]
			// Some servers reuse index 0 for every call; a new id there starts a new call.
			if ok && tc.ID != "" && calls[pos].id != "" && tc.ID != calls[pos].id {
				ok = false
			}
			if !ok {
				calls = append(calls, &chatCall{})
				pos = len(calls) - 1
				slot[tc.Index] = pos
			}
			c := calls[pos]
			if tc.ID != "" {
				c.id = tc.ID
			}
			if tc.Function.Name != "" {
				c.name = tc.Function.Name
			}
			c.args.WriteString(tc.Function.Arguments)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := stream.Err(); err != nil {
		return nil, openaiStreamError(err, tap, decoded)
	}
	if finish == "" && !tap.sawDone() {
		return nil, endedEarly("finish_reason or [DONE]", tap)
	}
	if !choices {
		return nil, &failure{kind: KindEmptyReply, retryable: true, detail: "the provider sent an empty reply (no choices)"}
	}
	if finish == "length" {
		b.logger.Warn("reply cut off at the token limit; raise max_tokens in the backend config", zap.String("agent", b.o.AgentID), zap.String("provider", b.provider))
	}
	if s := cited.render(); s != "" {
		text.WriteString(s)
		emit(Event{Kind: EventTextDelta, Text: s})
	}
	resp.Text = text.String()
	for i, c := range calls {
		if c.name == "" {
			b.logger.Warn("tool call without a name dropped", zap.String("agent", b.o.AgentID), zap.String("provider", b.provider))
			continue
		}
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i+1) // some local servers send none; the reply needs one
		}
		tc := ToolCall{ID: id, Name: c.name, Arguments: finishArguments(c.args.String())}
		resp.ToolCalls = append(resp.ToolCalls, tc)
		emit(Event{Kind: EventToolCall, ToolCall: &tc})
	}
	return resp, nil
}

// openaiStreamError classifies the error an openai-go stream ended with; decoded is how many
// events came before it.
func openaiStreamError(err error, tap *streamTap, decoded int) error {
	var sse *ssestream.StreamError
	switch {
	case errors.As(err, &sse):
		// An error object inside the stream (rate limits and overloads from OpenRouter and
		// others).
		return chatStreamError(sse)
	case isDecodeError(err):
		return invalidJSON(err, tap, decoded)
	}
	return openaiStatusError(err)
}

// chatStreamError describes an {"error": ...} object sent inside a chat stream. Its code may
// be a string or an HTTP status number.
func chatStreamError(sse *ssestream.StreamError) *failure {
	var body struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal(sse.Event.Data, &body)
	code := ""
	switch c := body.Error.Code.(type) {
	case string:
		code = c
	case float64:
		code = fmt.Sprint(int(c))
	}
	if code == "" {
		code = body.Error.Type
	}
	msg := body.Error.Message
	if msg == "" {
		msg = string(sse.Event.Data)
	}
	f := streamCodeFailure(code, msg)
	if f.kind == KindProvider {
		// Unknown codes inside a stream are usually passing trouble (proxies send them for
		// overloads): worth another try.
		f.retryable = true
	}
	f.err = sse
	return f
}
