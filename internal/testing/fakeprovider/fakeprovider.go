// Package fakeprovider is a model provider for tests: one httptest server speaking the wire
// protocols massgen's backends use (OpenAI Chat Completions and Responses, Anthropic Messages,
// Gemini's streamGenerateContent), streamed as the real APIs stream them. A Model decides each
// reply from a protocol-neutral view of the request; the server records every request. It is
// the one thing tests fake: the backends, the orchestrator and the tools under test are real.
package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The protocols, as Request.Protocol names them.
const (
	Chat      = "chat"      // OpenAI Chat Completions (every OpenAI-compatible backend, azure_openai)
	Responses = "responses" // OpenAI Responses API (type openai)
	Anthropic = "anthropic" // Anthropic Messages (type claude)
	Gemini    = "gemini"    // Gemini streamGenerateContent
)

// Request is what a model sees of one request, whatever its protocol.
type Request struct {
	Protocol string
	Model    string
	System   string
	Messages []Message
	Tools    []Tool
	Body     []byte // the raw request body
	Path     string
	Header   http.Header
}

// Message is one message of the conversation sent.
type Message struct {
	Role  string // user, assistant or tool (a tool result)
	Text  string
	Calls []string // the names of an assistant message's tool calls
}

// Tool is one function tool offered.
type Tool struct {
	// Name is the tool's name; Namespace the Responses namespace it was offered in (Codex
	// offers MCP tools in namespace mcp__<server>), "" for most.
	Name      string
	Namespace string
	// Enum is the enum of the tool's agent_id parameter (the vote tool), if it has one.
	Enum []string
}

// Reply is the model's answer: text, tool calls, or both.
type Reply struct {
	Text  string
	Calls []Call
	// Delay holds the reply back this long (the request's cancellation ends it early).
	Delay time.Duration
	// Usage, when set, is the usage the reply reports, in each protocol's own fields; nil
	// reports the server's (a small fixed usage, or the echoed one: see EchoUsage).
	Usage *Usage
}

// Usage is a reply's token usage by kind, as massgen's backends count it: Input includes the
// cached tokens read and written, Output the reasoning tokens. Each protocol reports it in its
// own fields (Anthropic: input_tokens without the cache's, cache_read_input_tokens,
// cache_creation_input_tokens; Gemini: thoughtsTokenCount beside candidatesTokenCount; OpenAI:
// prompt_tokens_details.cached_tokens, completion_tokens_details.reasoning_tokens). Chat
// Completions, Responses and Gemini have no field for tokens written to a cache.
type Usage struct {
	Input, CachedInput, CacheWrite, Output, Reasoning int64
}

// Call is one tool call of a reply. Args is marshalled to JSON.
type Call struct {
	Name string
	Args any
	// Namespace is the Responses API namespace of a tool offered inside one (Codex offers MCP
	// tools as namespace mcp__<server>); only the Responses protocol sends it.
	Namespace string
}

// Model decides the reply to a request. It may be called from several goroutines at once.
type Model func(Request) Reply

// HasTool reports whether the request offers the tool.
func (r Request) HasTool(name string) bool {
	_, ok := r.Tool(name)
	return ok
}

// Tool returns the offered tool of that name.
func (r Request) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Last is the last message sent (the zero Message when there is none).
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Text is every message's text and the system prompt, for searching.
func (r Request) Text() string {
	var b strings.Builder
	b.WriteString(r.System)
	for _, m := range r.Messages {
		b.WriteString("\n")
		b.WriteString(m.Text)
	}
	return b.String()
}

// Server is a fake provider.
type Server struct {
	*httptest.Server
	model Model
	mu    sync.Mutex
	reqs  []Request
	n     atomic.Int64
	chars atomic.Int64

	echo  atomic.Bool
	cache prefixCache // guarded by mu
	usage Usage       // echoed so far, guarded by mu
}

// EchoUsage makes every reply without its own Usage report a usage computed from the request:
// input tokens are the bytes of its prompt in cache order (Request.CacheOrder) over 4, cached
// tokens the longest prefix it shares with an earlier request to the same model over 4 (a
// provider's prefix cache with no minimum length), output tokens the reply's bytes over 4.
func (s *Server) EchoUsage(on bool) { s.echo.Store(on) }

// Echoed is the sum of the usage echoed so far.
func (s *Server) Echoed() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

// New starts a fake provider answering with model; Close stops it.
func New(model Model) *Server {
	s := &Server{model: model}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the base_url to configure for a backend type, so that its requests reach s.
func (s *Server) BaseURL(backendType string) string {
	switch backendType {
	case "claude", "gemini", "azure_openai":
		return s.URL
	}
	return s.URL + "/v1"
}

// Requests returns every request received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count is the number of requests received; Chars the characters of the message texts sent
// (system prompts and tool results included).
func (s *Server) Count() int64 { return s.n.Load() }
func (s *Server) Chars() int64 { return s.chars.Load() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req Request
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/chat/completions"):
		req, err = parseChat(body)
	case strings.HasSuffix(p, "/responses"):
		req, err = parseResponses(body)
	case strings.HasSuffix(p, "/messages"):
		req, err = parseAnthropic(body)
	case strings.Contains(p, ":streamGenerateContent") || strings.Contains(p, ":generateContent"):
		req, err = parseGemini(body, p)
	default:
		err = fmt.Errorf("fakeprovider: no protocol answers %s %s", r.Method, p)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Body, req.Path, req.Header = body, r.URL.Path, r.Header.Clone()
	seq := s.n.Add(1) // makes call ids unique across the replies, as a provider's are
	s.chars.Add(int64(len(req.System)))
	for _, m := range req.Messages {
		s.chars.Add(int64(len(m.Text)))
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()

	reply := s.model(req)
	if reply.Usage == nil && s.echo.Load() {
		u := s.echoUsage(req, reply)
		reply.Usage = &u
	}
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	switch req.Protocol {
	case Chat:
		writeChat(w, reply, seq)
	case Responses:
		writeResponses(w, reply, seq)
	case Anthropic:
		writeAnthropic(w, reply, seq)
	case Gemini:
		if strings.Contains(r.URL.Path, ":generateContent") {
			writeJSON(w, geminiResponse(reply, true))
			return
		}
		writeGemini(w, reply)
	}
}

// ---- reading requests ---------------------------------------------------------------------

// text is a content field: a string, or a list of parts with a text (or content) each.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		for _, k := range []string{"text", "content", "output"} {
			if v, ok := p[k]; ok {
				b.WriteString(text(v))
			}
		}
	}
	return b.String()
}

// toolOf reads a tool's name and the enum of its agent_id parameter from its JSON.
func toolOf(name string, schema any) Tool {
	return Tool{Name: name, Enum: findEnum(schema)}
}

func findEnum(v any) []string {
	switch x := v.(type) {
	case map[string]any:
		if p, ok := x["agent_id"].(map[string]any); ok {
			if e, ok := p["enum"].([]any); ok {
				out := make([]string, 0, len(e))
				for _, s := range e {
					out = append(out, fmt.Sprint(s))
				}
				return out
			}
		}
		for _, c := range x {
			if e := findEnum(c); e != nil {
				return e
			}
		}
	case []any:
		for _, c := range x {
			if e := findEnum(c); e != nil {
				return e
			}
		}
	}
	return nil
}

func parseChat(body []byte) (Request, error) {
	var in struct {
		Model    string `json:"model"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name       string `json:"name"`
				Parameters any    `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("chat request: %w", err)
	}
	req := Request{Protocol: Chat, Model: in.Model}
	for _, m := range in.Messages {
		if m.Role == "system" || m.Role == "developer" {
			req.System += text(m.Content)
			continue
		}
		msg := Message{Role: m.Role, Text: text(m.Content)}
		for _, c := range m.ToolCalls {
			msg.Calls = append(msg.Calls, c.Function.Name)
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, toolOf(t.Function.Name, t.Function.Parameters))
	}
	return req, nil
}

func parseResponses(body []byte) (Request, error) {
	var in struct {
		Model        string          `json:"model"`
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Tools        []responsesTool `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("responses request: %w", err)
	}
	req := Request{Protocol: Responses, Model: in.Model, System: in.Instructions}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Name    string          `json:"name"`
		Output  json.RawMessage `json:"output"`
		Tools   []responsesTool `json:"tools"`
	}
	if s := text(in.Input); s != "" {
		req.Messages = append(req.Messages, Message{Role: "user", Text: s})
	} else if err := json.Unmarshal(in.Input, &items); err != nil {
		return Request{}, fmt.Errorf("responses input: %w", err)
	}
	for _, it := range items {
		switch {
		case it.Type == "function_call":
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "assistant" {
				req.Messages[n-1].Calls = append(req.Messages[n-1].Calls, it.Name)
			} else {
				req.Messages = append(req.Messages, Message{Role: "assistant", Calls: []string{it.Name}})
			}
		case it.Type == "function_call_output":
			req.Messages = append(req.Messages, Message{Role: "tool", Text: text(it.Output)})
		case it.Type == "additional_tools": // Codex declares its tools in the input
			req.Tools = append(req.Tools, responsesTools(it.Tools, "")...)
		case it.Role == "system" || it.Role == "developer":
			req.System += text(it.Content)
		default:
			req.Messages = append(req.Messages, Message{Role: it.Role, Text: text(it.Content)})
		}
	}
	req.Tools = append(req.Tools, responsesTools(in.Tools, "")...)
	return req, nil
}

type responsesTool struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Parameters any             `json:"parameters"`
	Tools      []responsesTool `json:"tools"`
}

// responsesTools lists function tools, those inside namespaces with their namespace.
func responsesTools(ts []responsesTool, ns string) []Tool {
	var out []Tool
	for _, t := range ts {
		switch t.Type {
		case "function":
			tool := toolOf(t.Name, t.Parameters)
			tool.Namespace = ns
			out = append(out, tool)
		case "namespace":
			out = append(out, responsesTools(t.Tools, t.Name)...)
		}
	}
	return out
}

func parseAnthropic(body []byte) (Request, error) {
	var in struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string `json:"name"`
			InputSchema any    `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("anthropic request: %w", err)
	}
	req := Request{Protocol: Anthropic, Model: in.Model, System: text(in.System)}
	for _, m := range in.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Name    string          `json:"name"`
			Content json.RawMessage `json:"content"`
		}
		if s := text(m.Content); s != "" && json.Unmarshal(m.Content, &blocks) != nil {
			req.Messages = append(req.Messages, Message{Role: m.Role, Text: s})
			continue
		}
		msg := Message{Role: m.Role}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Text += b.Text
			case "tool_use":
				msg.Calls = append(msg.Calls, b.Name)
			case "tool_result":
				req.Messages = append(req.Messages, Message{Role: "tool", Text: text(b.Content)})
			}
		}
		if msg.Text != "" || len(msg.Calls) > 0 {
			req.Messages = append(req.Messages, msg)
		}
	}
	for _, t := range in.Tools {
		if t.Name != "" && t.InputSchema != nil { // server tools (web_search, ...) have no schema
			req.Tools = append(req.Tools, toolOf(t.Name, t.InputSchema))
		}
	}
	return req, nil
}

func parseGemini(body []byte, path string) (Request, error) {
	var in struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         string `json:"text"`
				FunctionCall *struct {
					Name string `json:"name"`
				} `json:"functionCall"`
				FunctionResponse *struct {
					Response any `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		SystemInstruction *struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string `json:"name"`
				Parameters           any    `json:"parameters"`
				ParametersJSONSchema any    `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("gemini request: %w", err)
	}
	model := path[strings.LastIndex(path, "/")+1:]
	if i := strings.Index(model, ":"); i >= 0 {
		model = model[:i]
	}
	req := Request{Protocol: Gemini, Model: model}
	if in.SystemInstruction != nil {
		for _, p := range in.SystemInstruction.Parts {
			req.System += p.Text
		}
	}
	for _, c := range in.Contents {
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		msg := Message{Role: role}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.Calls = append(msg.Calls, p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				b, _ := json.Marshal(p.FunctionResponse.Response)
				req.Messages = append(req.Messages, Message{Role: "tool", Text: string(b)})
			default:
				msg.Text += p.Text
			}
		}
		if msg.Text != "" || len(msg.Calls) > 0 {
			req.Messages = append(req.Messages, msg)
		}
	}
	for _, t := range in.Tools {
		for _, d := range t.FunctionDeclarations {
			schema := d.ParametersJSONSchema
			if schema == nil {
				schema = d.Parameters
			}
			req.Tools = append(req.Tools, toolOf(d.Name, schema))
		}
	}
	return req, nil
}

// ---- writing replies ----------------------------------------------------------------------

// callID is the id of the i-th call of the seq-th reply: call_0, call_1, ... in the first reply
// (as tests expect), call_<seq>_<i> after.
func callID(seq int64, i int) string {
	if seq <= 1 {
		return fmt.Sprintf("call_%d", i)
	}
	return fmt.Sprintf("call_%d_%d", seq, i)
}

func argsJSON(c Call) string {
	if c.Args == nil {
		return "{}"
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

// event writes one server-sent event: "event: name" (when not empty) and "data: v" (v as JSON,
// or as written when it is a string).
func (s *sse) event(name string, v any) {
	data, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		data = string(b)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeChat(w http.ResponseWriter, reply Reply, seq int64) {
	s := startSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if reply.Text != "" {
		s.event("", chunk(map[string]any{"content": reply.Text}, nil))
	}
	for i, c := range reply.Calls {
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": callID(seq, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": argsJSON(c)},
		}}}, nil))
	}
	finish := "stop"
	if len(reply.Calls) > 0 {
		finish = "tool_calls"
	}
	s.event("", chunk(map[string]any{}, finish))
	u := reply.usage()
	s.event("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
			"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedInput},
			"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning}}})
	s.event("", "[DONE]")
}

func writeResponses(w http.ResponseWriter, reply Reply, seq int64) {
	s := startSSE(w)
	n := 0
	send := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, n
		n++
		s.event(typ, fields)
	}
	base := map[string]any{"id": "resp_fake", "object": "response", "created_at": 1, "model": "fake", "status": "in_progress", "output": []any{}}
	send("response.created", map[string]any{"response": base})
	var output []any
	idx := 0
	if reply.Text != "" {
		part := map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}
		send("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": "msg_fake", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		send("response.content_part.added", map[string]any{"item_id": "msg_fake", "output_index": idx, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		send("response.output_text.delta", map[string]any{"item_id": "msg_fake", "output_index": idx, "content_index": 0, "delta": reply.Text, "logprobs": []any{}})
		send("response.output_text.done", map[string]any{"item_id": "msg_fake", "output_index": idx, "content_index": 0, "text": reply.Text, "logprobs": []any{}})
		send("response.content_part.done", map[string]any{"item_id": "msg_fake", "output_index": idx, "content_index": 0, "part": part})
		item := map[string]any{"id": "msg_fake", "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		send("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	for i, c := range reply.Calls {
		id, cid, args := fmt.Sprintf("fc_%d", i), callID(seq, i), argsJSON(c)
		added := map[string]any{"id": id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": cid, "name": c.Name}
		item := map[string]any{"id": id, "type": "function_call", "status": "completed", "arguments": args, "call_id": cid, "name": c.Name}
		if c.Namespace != "" {
			added["namespace"], item["namespace"] = c.Namespace, c.Namespace
		}
		send("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": idx, "delta": args})
		send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": idx, "arguments": args})
		send("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	u := reply.usage()
	done := map[string]any{"id": "resp_fake", "object": "response", "created_at": 1, "model": "fake", "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.CachedInput},
			"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning}, "total_tokens": u.Input + u.Output}}
	send("response.completed", map[string]any{"response": done})
}

func writeAnthropic(w http.ResponseWriter, reply Reply, seq int64) {
	s := startSSE(w)
	u := reply.usage()
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": u.Input - u.CachedInput - u.CacheWrite,
			"cache_read_input_tokens": u.CachedInput, "cache_creation_input_tokens": u.CacheWrite, "output_tokens": 1}}})
	idx := 0
	if reply.Text != "" {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": reply.Text}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for i, c := range reply.Calls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": strings.Replace(callID(seq, i), "call", "toolu", 1), "name": c.Name, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": argsJSON(c)}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	stop := "end_turn"
	if len(reply.Calls) > 0 {
		stop = "tool_use"
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": u.Output}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

func geminiResponse(reply Reply, finish bool) map[string]any {
	var parts []any
	if reply.Text != "" {
		parts = append(parts, map[string]any{"text": reply.Text})
	}
	for _, c := range reply.Calls {
		var args any = map[string]any{}
		if c.Args != nil {
			_ = json.Unmarshal([]byte(argsJSON(c)), &args)
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}})
	}
	cand := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": 0}
	if finish {
		cand["finishReason"] = "STOP"
	}
	u := reply.usage()
	return map[string]any{"candidates": []any{cand},
		"usageMetadata": map[string]any{"promptTokenCount": u.Input, "cachedContentTokenCount": u.CachedInput,
			"candidatesTokenCount": u.Output - u.Reasoning, "thoughtsTokenCount": u.Reasoning, "totalTokenCount": u.Input + u.Output}}
}

func writeGemini(w http.ResponseWriter, reply Reply) {
	startSSE(w).event("", geminiResponse(reply, true))
}

// Agreeable is a model that coordinates the plain way: offered vote, it votes for the first id
// of the enum; offered new_answer, it answers (a text unique to the request); offered submit (a
// post-evaluation), it submits; otherwise (the final presentation) it replies with text naming
// its model.
func Agreeable() Model {
	var n atomic.Int64
	return func(r Request) Reply {
		if v, ok := r.Tool("vote"); ok && len(v.Enum) > 0 {
			return Reply{Calls: []Call{{Name: "vote", Args: map[string]string{"agent_id": v.Enum[0], "reason": "it answers the task"}}}}
		}
		if r.HasTool("new_answer") {
			return Reply{Calls: []Call{{Name: "new_answer", Args: map[string]string{"content": fmt.Sprintf("Answer %d from %s.", n.Add(1), r.Model)}}}}
		}
		if r.HasTool("submit") {
			return Reply{Calls: []Call{{Name: "submit", Args: map[string]bool{"confirmed": true}}}}
		}
		return Reply{Text: "Final answer from " + r.Model + "."}
	}
}

// usage is the usage the reply reports: its own, or a small fixed one.
func (r Reply) usage() Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	return Usage{Input: 10, Output: 2}
}

// ---- echoed usage and the prefix cache ----------------------------------------------------

// CacheOrder is the request's prompt in the order a provider's prefix cache reads it: the
// tools, then the system prompt, then the messages, as the raw JSON of each part (so two
// requests share a prefix here exactly when they share it on the provider's side, up to its
// tokenisation). The model name is not part of it: caches are per model anyway.
func (r Request) CacheOrder() []byte {
	var parts []string
	switch r.Protocol {
	case Chat:
		parts = []string{"tools", "messages"} // the system prompt is the first message
	case Responses:
		parts = []string{"tools", "instructions", "input"}
	case Anthropic:
		parts = []string{"tools", "system", "messages"}
	case Gemini:
		parts = []string{"tools", "systemInstruction", "contents"}
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(r.Body, &fields) != nil {
		return r.Body
	}
	var b []byte
	for _, p := range parts {
		b = append(b, fields[p]...)
	}
	return b
}

// prefixCache keeps every prompt seen per model, sorted: the longest prefix a new prompt shares
// with any of them is the longer of those it shares with its neighbours in that order.
type prefixCache struct {
	byModel map[string][]string
}

// add records prompt for model and returns the longest prefix (in bytes) it shares with an
// earlier one.
func (c *prefixCache) add(model, prompt string) int {
	if c.byModel == nil {
		c.byModel = map[string][]string{}
	}
	seen := c.byModel[model]
	i, _ := slices.BinarySearch(seen, prompt)
	best := 0
	if i > 0 {
		best = commonPrefix(seen[i-1], prompt)
	}
	if i < len(seen) {
		best = max(best, commonPrefix(seen[i], prompt))
	}
	c.byModel[model] = slices.Insert(seen, i, prompt)
	return best
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func (s *Server) echoUsage(req Request, reply Reply) Usage {
	prompt := string(req.CacheOrder())
	out := len(reply.Text)
	for _, c := range reply.Calls {
		out += len(c.Name) + len(argsJSON(c))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	shared := s.cache.add(req.Model, prompt)
	u := Usage{Input: int64(len(prompt)+3) / 4, CachedInput: int64(shared) / 4, Output: max(int64(out+3)/4, 1)}
	s.usage.Input += u.Input
	s.usage.CachedInput += u.CachedInput
	s.usage.Output += u.Output
	return u
}
