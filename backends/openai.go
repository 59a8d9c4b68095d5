package backends

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/massgen-go/massgen/configs"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/zap"
)

// responsesParams are the backend config keys sent to the Responses API (config key -> body key).
var responsesParams = map[string]string{
	"temperature":            "temperature",
	"top_p":                  "top_p",
	"max_output_tokens":      "max_output_tokens",
	"max_tokens":             "max_output_tokens",
	"max_tool_calls":         "max_tool_calls",
	"reasoning":              "reasoning",
	"text":                   "text",
	"parallel_tool_calls":    "parallel_tool_calls",
	"store":                  "store",
	"service_tier":           "service_tier",
	"metadata":               "metadata",
	"user":                   "user",
	"truncation":             "truncation",
	"include":                "include",
	"prompt_cache_key":       "prompt_cache_key",
	"safety_identifier":      "safety_identifier",
	"top_logprobs":           "top_logprobs",
	"tool_choice":            "tool_choice",
	"background":             "background",
	"prompt_cache_retention": "prompt_cache_retention",
}

// openaiResponses is the `openai` backend: OpenAI's Responses API, stateless (the whole
// conversation is sent each call, so a restarted agent needs no server-side state).
type openaiResponses struct {
	svc      responses.ResponseService
	model    string
	extra    []option.RequestOption
	builtins []responses.ToolUnionParam
	o        Options
	logger   *zap.Logger
	call     caller
}

func newOpenAI(cfg configs.Backend, o Options) (Backend, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("openai backend: model is required")
	}
	key, ok := resolveKey(cfg, keyVars["openai"], o.LookupEnv)
	if !ok {
		return nil, CheckKey(cfg, o.LookupEnv)
	}
	base := cfg.BaseURL
	if base == "" {
		base = defaultOpenAIBaseURL
	}
	logger := o.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	params, err := cfg.Params()
	if err != nil {
		return nil, fmt.Errorf("backend openai: %w", err)
	}
	logUnsent(logger, cfg, params, "a Responses API parameter")
	b := &openaiResponses{
		svc:    responses.NewResponseService(openaiClientOptions(o, base, key)...),
		model:  cfg.Model,
		o:      o,
		logger: logger,
		extra:  passthrough(params, responsesParams, logger, "openai"),
		call:   newCaller(o, "openai", cfg.Model, keyHint(cfg, keyVars["openai"])),
	}
	// MassGen's switches for OpenAI's server-side tools. They run on OpenAI's machines, not
	// here, so they are outside the permission layer's concern.
	if params.Bool("enable_web_search") {
		b.builtins = append(b.builtins, responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch))
	}
	if params.Bool("enable_code_interpreter") {
		b.builtins = append(b.builtins, responses.ToolParamOfCodeInterpreter(responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{}))
	}
	return b, nil
}

func (b *openaiResponses) Provider() string { return "openai" }
func (b *openaiResponses) Model() string    { return b.model }

func (b *openaiResponses) params(req Request) responses.ResponseNewParams {
	p := responses.ResponseNewParams{Model: b.model}
	if req.System != "" {
		p.Instructions = param.NewOpt(req.System)
	}
	var input responses.ResponseInputParam
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			if m.Content != "" {
				input = append(input, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleAssistant))
			}
			for _, tc := range m.ToolCalls {
				input = append(input, responses.ResponseInputItemParamOfFunctionCall(callArguments(tc), tc.ID, tc.Name))
			}
		case "tool":
			item := responses.ResponseInputItemParamOfFunctionCallOutput(toolResultText(m))
			item.OfFunctionCallOutput.CallID = param.NewOpt(m.ToolCallID)
			input = append(input, item)
		default:
			input = append(input, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser))
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	for _, t := range req.Tools {
		tool := responses.ToolParamOfFunction(t.Name, toolParameters(t), false)
		if t.Description != "" {
			tool.OfFunction.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, tool)
	}
	p.Tools = append(p.Tools, b.builtins...)
	p.Store = param.NewOpt(false)
	if req.CacheKey != "" { // a prompt_cache_key in the config wins (sent after, as written)
		p.PromptCacheKey = param.NewOpt(req.CacheKey)
	}
	return p
}

// respCall is a function call being assembled from stream events.
type respCall struct {
	id, name string
	args     strings.Builder
	done     bool
}

// Generate streams one response.
func (b *openaiResponses) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	params := b.params(req)
	return b.call.generate(ctx, onEvent, func(ctx context.Context, tap *streamTap, emit func(Event)) (*Response, error) {
		return b.once(ctx, tap, params, emit)
	})
}

// once makes one streamed request. The reply is complete only with response.completed (or
// response.incomplete, which ends a reply cut at a limit).
func (b *openaiResponses) once(ctx context.Context, tap *streamTap, params responses.ResponseNewParams, onEvent func(Event)) (*Response, error) {
	stream := b.svc.NewStreaming(ctx, params, b.extra...)
	defer stream.Close()

	resp := &Response{}
	var text strings.Builder
	calls := map[int64]*respCall{} // by output_index
	finish := func(idx int64, id, name, args string) {
		c := calls[idx]
		if c == nil {
			c = &respCall{}
			calls[idx] = c
		}
		if c.done {
			return
		}
		if id != "" {
			c.id = id
		}
		if name != "" {
			c.name = name
		}
		if args != "" {
			c.args.Reset()
			c.args.WriteString(args)
		}
		c.done = true
		tc := ToolCall{ID: c.id, Name: c.name, Arguments: finishArguments(c.args.String())}
		if onEvent != nil {
			onEvent(Event{Kind: EventToolCall, ToolCall: &tc})
		}
	}
	completed := false
	decoded := 0
	for stream.Next() {
		decoded++
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
			if onEvent != nil && ev.Delta != "" {
				onEvent(Event{Kind: EventTextDelta, Text: ev.Delta})
			}
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				calls[ev.OutputIndex] = &respCall{id: ev.Item.CallID, name: ev.Item.Name}
			}
		case "response.function_call_arguments.delta":
			if c := calls[ev.OutputIndex]; c != nil {
				c.args.WriteString(ev.Delta)
			}
		case "response.function_call_arguments.done":
			if c := calls[ev.OutputIndex]; c != nil && ev.Arguments != "" {
				c.args.Reset()
				c.args.WriteString(ev.Arguments)
			}
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				finish(ev.OutputIndex, ev.Item.CallID, ev.Item.Name, ev.Item.Arguments.OfString)
			}
		case "response.completed", "response.incomplete":
			completed = true
			u := ev.Response.Usage
			resp.Usage = Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CachedInputTokens: u.InputTokensDetails.CachedTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
			// Items the stream did not announce one by one (some compatible servers only
			// send the final response) are taken from the response itself.
			for i, item := range ev.Response.Output {
				if item.Type == "function_call" {
					if _, seen := calls[int64(i)]; !seen {
						finish(int64(i), item.CallID, item.Name, item.Arguments.OfString)
					}
				}
			}
			if text.Len() == 0 {
				if t := ev.Response.OutputText(); t != "" {
					text.WriteString(t)
					if onEvent != nil {
						onEvent(Event{Kind: EventTextDelta, Text: t})
					}
				}
			}
			if ev.Type == "response.incomplete" {
				b.logger.Warn("response incomplete", zap.String("agent", b.o.AgentID), zap.String("reason", ev.Response.IncompleteDetails.Reason))
			}
		case "response.failed":
			msg := ev.Response.Error.Message
			if msg == "" {
				msg = "response failed"
			}
			return nil, streamCodeFailure(string(ev.Response.Error.Code), msg)
		case "error":
			return nil, streamCodeFailure(ev.Code, ev.Message)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := stream.Err(); err != nil {
		return nil, openaiStreamError(err, tap, decoded)
	}
	if !completed {
		return nil, endedEarly("response.completed", tap)
	}
	resp.Text = text.String()
	idx := make([]int64, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, c int) bool { return idx[a] < idx[c] })
	for _, i := range idx {
		c := calls[i]
		if !c.done {
			finish(i, "", "", "")
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: c.id, Name: c.name, Arguments: finishArguments(c.args.String())})
	}
	return resp, nil
}
