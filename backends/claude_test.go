package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/massgen-go/massgen/configs"
)

// streamWriter writes server-sent events the way the provider does, flushing after each one so
// the client really receives them as separate chunks.
type streamWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func openStream(w http.ResponseWriter) *streamWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &streamWriter{w: w, f: f}
}

// event writes one Anthropic event (named event + JSON data).
func (s *streamWriter) named(name, data string) {
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, data)
	s.flush()
}

// data writes one data-only event (Gemini's alt=sse format).
func (s *streamWriter) dataOnly(data string) {
	fmt.Fprintf(s.w, "data: %s\r\n\r\n", data)
	s.flush()
}

func (s *streamWriter) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// anthropicScript is one streamed Messages API reply as (event, data) pairs.
type anthropicScript [][2]string

func (a anthropicScript) play(w http.ResponseWriter) {
	s := openStream(w)
	for _, e := range a {
		s.named(e[0], e[1])
	}
}

const msgStart = `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":3,"cache_read_input_tokens":2,"output_tokens":1}}}`

// textAndTwoToolsReply streams text split over two deltas, then two parallel tool_use blocks
// whose input JSON is split mid-token across input_json_delta chunks.
var textAndTwoToolsReply = anthropicScript{
	{"message_start", msgStart},
	{"ping", `{"type":"ping"}`},
	{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll write "}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"two files."}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":0}`},
	{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_A","name":"write_file","input":{}}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a."}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"txt\", \"cont"}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ent\": \"héllo\\n\"}"}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":1}`},
	{"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_B","name":"read_file","input":{}}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"th\":\"b.txt\"}"}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":2}`},
	{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}`},
	{"message_stop", `{"type":"message_stop"}`},
}

var textOnlyReply = anthropicScript{
	{"message_start", msgStart},
	{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":0}`},
	{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}`},
	{"message_stop", `{"type":"message_stop"}`},
}

// bodyRecorder keeps every request body a fake provider received.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies []map[string]any
	paths  []string
	header []http.Header
}

func (r *bodyRecorder) record(t *testing.T, req *http.Request) map[string]any {
	t.Helper()
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		t.Errorf("reading request body: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Errorf("request body is not JSON: %v\n%s", err, raw)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, body)
	r.paths = append(r.paths, req.URL.RequestURI())
	r.header = append(r.header, req.Header.Clone())
	return body
}

func (r *bodyRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func (r *bodyRecorder) last() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[len(r.bodies)-1]
}

func newTestClaude(t *testing.T, url string, extra map[string]any) Backend {
	t.Helper()
	b, err := New(configs.Backend{Type: "claude", Model: "claude-test", BaseURL: url, Extra: extra}, Options{
		LookupEnv: func(k string) (string, bool) {
			return map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"}[k], k == "ANTHROPIC_API_KEY"
		},
		HTTPClient: &http.Client{},
		AgentID:    "agent_a",
	})
	if err != nil {
		t.Fatalf("New(claude): %v", err)
	}
	return b
}

// jsonOf re-encodes v so tests can compare decoded JSON with expected literals.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func assertArgs(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("arguments %q are not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("arguments = %s, want %s", got, want)
	}
}

var testWriteFileTool = ToolSpec{
	Name:        "write_file",
	Description: "Write a file.",
	Parameters: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":    map[string]any{"type": "string"},
			"content": map[string]any{"type": "string"},
			"mode":    map[string]any{"type": "string", "enum": []any{"overwrite", "append"}},
		},
		"required":             []any{"path", "content"},
		"additionalProperties": false,
	},
}

func TestClaudeStreamsTextAndParallelToolCallsSplitAcrossChunks(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		textAndTwoToolsReply.play(w)
	}))
	defer srv.Close()

	b := newTestClaude(t, srv.URL, nil)
	var events []Event
	resp, err := b.Generate(testContext(t), Request{
		System:   "You are agent A.",
		Messages: []Message{{Role: "user", Content: "write a.txt"}},
		Tools:    []ToolSpec{testWriteFileTool, {Name: "read_file", Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}},
	}, func(e Event) { events = append(events, e) })
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}

	if resp.Text != "I'll write two files." {
		t.Errorf("Text = %q", resp.Text)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("ToolCalls = %+v, want 2", resp.ToolCalls)
	}
	if tc := resp.ToolCalls[0]; tc.ID != "toolu_A" || tc.Name != "write_file" {
		t.Errorf("call 0 = %+v", tc)
	}
	assertArgs(t, resp.ToolCalls[0].Arguments, `{"path":"a.txt","content":"héllo\n"}`)
	if tc := resp.ToolCalls[1]; tc.ID != "toolu_B" || tc.Name != "read_file" {
		t.Errorf("call 1 = %+v", tc)
	}
	assertArgs(t, resp.ToolCalls[1].Arguments, `{"path":"b.txt"}`)
	if want := (Usage{InputTokens: 30, OutputTokens: 42, CachedInputTokens: 2, CacheWriteTokens: 3}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v", resp.Usage, want)
	}

	// Events: the two text deltas as they came, then each tool call once it was complete.
	var kinds []string
	for _, e := range events {
		switch e.Kind {
		case EventTextDelta:
			kinds = append(kinds, "text:"+e.Text)
		case EventToolCall:
			kinds = append(kinds, "tool:"+e.ToolCall.ID)
		default:
			kinds = append(kinds, fmt.Sprintf("other:%d", e.Kind))
		}
	}
	if want := []string{"text:I'll write ", "text:two files.", "tool:toolu_A", "tool:toolu_B"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("events = %q, want %q", kinds, want)
	}

	// What the server got.
	if got := rec.paths[0]; got != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", got)
	}
	if got := rec.header[0].Get("X-Api-Key"); got != "sk-ant-test" {
		t.Errorf("x-api-key = %q", got)
	}
	if rec.header[0].Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
	body := rec.last()
	if body["model"] != "claude-test" || body["stream"] != true || body["max_tokens"] != float64(claudeDefaultMaxTokens) {
		t.Errorf("model/stream/max_tokens = %v/%v/%v", body["model"], body["stream"], body["max_tokens"])
	}
	// The system prompt and the last tool end the stable prefix (prompt caching).
	if got := mustJSON(t, body["system"]); got != `[{"cache_control":{"type":"ephemeral"},"text":"You are agent A.","type":"text"}]` {
		t.Errorf("system = %s", got)
	}
	tools := body["tools"].([]any)
	if len(tools) != 2 {
		t.Fatalf("tools = %s", mustJSON(t, tools))
	}
	wantTool := `{"description":"Write a file.","input_schema":{"additionalProperties":false,"properties":{"content":{"type":"string"},"mode":{"enum":["overwrite","append"],"type":"string"},"path":{"type":"string"}},"required":["path","content"],"type":"object"},"name":"write_file"}`
	if got := mustJSON(t, tools[0]); got != wantTool {
		t.Errorf("tools[0] = %s\nwant       %s", got, wantTool)
	}
	if got := mustJSON(t, body["messages"]); got != `[{"content":[{"text":"write a.txt","type":"text"}],"role":"user"}]` {
		t.Errorf("messages = %s", got)
	}
}

func TestClaudeSendsToolResultsBack(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		textOnlyReply.play(w)
	}))
	defer srv.Close()

	b := newTestClaude(t, srv.URL, nil)
	resp, err := b.Generate(testContext(t), Request{
		System: "sys",
		Messages: []Message{
			{Role: "user", Content: "task"},
			{Role: "assistant", Content: "Writing.", ToolCalls: []ToolCall{
				{ID: "toolu_A", Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt","content":"x"}`)},
				{ID: "toolu_B", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/etc/passwd"}`)},
			}},
			{Role: "tool", ToolCallID: "toolu_A", ToolName: "write_file", Content: "wrote a.txt"},
			{Role: "tool", ToolCallID: "toolu_B", ToolName: "delete_file", Content: "denied: /etc/passwd is outside the workspace", IsError: true},
			{Role: "user", Content: "Now vote."},
		},
		Tools: []ToolSpec{testWriteFileTool},
	}, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text != "done" || len(resp.ToolCalls) != 0 {
		t.Errorf("resp = %+v", resp)
	}
	want := `[{"content":[{"text":"task","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Writing.","type":"text"},` +
		`{"id":"toolu_A","input":{"content":"x","path":"a.txt"},"name":"write_file","type":"tool_use"},` +
		`{"id":"toolu_B","input":{"path":"/etc/passwd"},"name":"delete_file","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"tool_use_id":"toolu_A","content":[{"text":"wrote a.txt","type":"text"}],"is_error":false,"type":"tool_result"},` +
		`{"tool_use_id":"toolu_B","content":[{"text":"denied: /etc/passwd is outside the workspace","type":"text"}],"is_error":true,"type":"tool_result"},` +
		`{"text":"Now vote.","type":"text"}],"role":"user"}]`
	if got := mustJSON(t, rec.last()["messages"]); !sameJSONText(t, got, want) {
		t.Errorf("messages =\n%s\nwant\n%s", got, want)
	}
}

// jsonEqual compares two JSON texts structurally.
func sameJSONText(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("bad JSON %s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestClaudeRetriesThenSucceeds(t *testing.T) {
	overloadedInStream := func(w http.ResponseWriter) {
		s := openStream(w)
		s.named("message_start", msgStart)
		s.named("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	}
	httpError := func(code int, typ string, hdr map[string]string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			for k, v := range hdr {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"try later"}}`, typ)
		}
	}
	tests := []struct {
		name     string
		first    func(http.ResponseWriter)
		attempts int
		wantErr  string
	}{
		{"429 with retry-after-ms", httpError(429, "rate_limit_error", map[string]string{"retry-after-ms": "5"}), 2, ""},
		{"503 with backoff", httpError(503, "api_error", nil), 2, ""},
		{"529 overloaded", httpError(529, "overloaded_error", map[string]string{"retry-after": "0.01"}), 2, ""},
		{"overloaded event inside the stream", overloadedInStream, 2, ""},
		{"400 is not retried", httpError(400, "invalid_request_error", nil), 1, "the provider rejected the request (HTTP 400 Bad Request); the provider says: try later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if calls.Add(1) == 1 {
					tt.first(w)
					return
				}
				textOnlyReply.play(w)
			}))
			defer srv.Close()
			b := newTestClaude(t, srv.URL, nil)
			var retries []string
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, func(e Event) {
				if e.Kind == EventRetry {
					retries = append(retries, e.Text)
				}
			})
			if got := int(calls.Load()); got != tt.attempts {
				t.Errorf("server saw %d requests, want %d", got, tt.attempts)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if len(retries) != 0 {
					t.Errorf("retry events for a non-retryable error: %q", retries)
				}
				return
			}
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Text != "done" || resp.Usage.OutputTokens != 7 {
				t.Errorf("resp = %+v", resp)
			}
			if len(retries) != 1 || !strings.HasPrefix(retries[0], "claude: ") {
				t.Errorf("retry events = %q, want one", retries)
			}
		})
	}
}

func TestClaudeGivesUpAfterMaxRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("retry-after-ms", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
	}))
	defer srv.Close()
	b, err := New(configs.Backend{Type: "claude", APIKey: "k", BaseURL: srv.URL}, Options{MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
	var se *HTTPStatusError
	if !errors.As(err, &se) || se.StatusCode != 429 {
		t.Fatalf("err = %v, want an HTTPStatusError 429", err)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("requests = %d, want 3 (1 + 2 retries)", got)
	}
}

// A failure after part of the reply was streamed is retried too: the retry event voids what was
// streamed, and the reply returned is the second attempt's alone.
func TestClaudeRetriesAfterPartialOutput(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("retry-after-ms", "1")
		if calls.Add(1) > 1 {
			textOnlyReply.play(w)
			return
		}
		s := openStream(w)
		s.named("message_start", msgStart)
		s.named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		s.named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}`)
		s.named("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	}))
	defer srv.Close()
	b := newTestClaude(t, srv.URL, nil)
	var log wireEvents
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, log.add)
	if err != nil || resp.Text != "done" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
	var kinds []EventKind
	for _, e := range log.events {
		kinds = append(kinds, e.Kind)
	}
	if want := []EventKind{EventTextDelta, EventRetry, EventTextDelta}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("events = %v, want %v (the retry between the two attempts)", kinds, want)
	}
}

func TestClaudeCancelMidStream(t *testing.T) {
	released := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(released)
		io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
		s := openStream(w)
		s.named("message_start", msgStart)
		s.named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		s.named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"thinking..."}}`)
		awaitHangUp(t, r) // a slow model: nothing more until the client goes away
	}))
	defer srv.Close()
	b := newTestClaude(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	_, err := b.Generate(ctx, Request{Messages: []Message{{Role: "user", Content: "hi"}}}, func(e Event) {
		if e.Kind == EventTextDelta {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	receive(t, released, "end of the handler after the client hung up") // the server saw the connection close
}

func TestClaudeExtraOptions(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		textOnlyReply.play(w)
	}))
	defer srv.Close()
	b := newTestClaude(t, srv.URL, map[string]any{
		"temperature":   0.2,
		"top_p":         0.9,
		"max_tokens":    2000,
		"thinking":      map[string]any{"type": "enabled", "budget_tokens": 4096},
		"allowed_tools": []any{"Read"},
		"extra_body":    map[string]any{"inference_geo": "us"},
	})
	if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	body := rec.last()
	if body["temperature"] != 0.2 || body["top_p"] != 0.9 {
		t.Errorf("temperature/top_p = %v/%v", body["temperature"], body["top_p"])
	}
	// max_tokens must exceed the thinking budget, so it grows.
	if body["max_tokens"] != float64(4096+claudeDefaultMaxTokens) {
		t.Errorf("max_tokens = %v", body["max_tokens"])
	}
	if got := mustJSON(t, body["thinking"]); got != `{"budget_tokens":4096,"type":"enabled"}` {
		t.Errorf("thinking = %s", got)
	}
	if body["inference_geo"] != "us" {
		t.Errorf("extra_body not merged: inference_geo = %v", body["inference_geo"])
	}
	for _, k := range []string{"allowed_tools", "extra_body"} {
		if _, ok := body[k]; ok {
			t.Errorf("MassGen-only key %q was sent to the API", k)
		}
	}
}

func TestClaudeBadOptionsAndMissingKey(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	tests := []struct {
		name    string
		cfg     configs.Backend
		wantErr string
	}{
		{"no key", configs.Backend{Type: "claude"}, "ANTHROPIC_API_KEY"},
		{"temperature not a number", configs.Backend{Type: "claude", APIKey: "k", Extra: map[string]any{"temperature": "hot"}}, `temperature: "hot" is not a number (expected a number from 0 to 1)`},
		{"max_tokens fractional", configs.Backend{Type: "claude", APIKey: "k", Extra: map[string]any{"max_tokens": 1.5}}, "max_tokens: 1.5 is not a whole number"},
		{"thinking not a mapping", configs.Backend{Type: "claude", APIKey: "k", Extra: map[string]any{"thinking": true}}, "thinking: true is not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg, Options{LookupEnv: noEnv})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// With extended thinking, the thinking block (with its signature) must go back unchanged ahead
// of the tool_use blocks it led to.
func TestClaudeReplaysThinkingWithToolUse(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		if rec.count() > 1 {
			textOnlyReply.play(w)
			return
		}
		anthropicScript{
			{"message_start", msgStart},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Need the file."}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig123"}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_T","name":"read_file","input":{}}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"x\"}"}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":1}`},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}`},
			{"message_stop", `{"type":"message_stop"}`},
		}.play(w)
	}))
	defer srv.Close()
	b := newTestClaude(t, srv.URL, map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}})
	msgs := []Message{{Role: "user", Content: "read x"}}
	resp, err := b.Generate(testContext(t), Request{Messages: msgs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "" || len(resp.ToolCalls) != 1 {
		t.Fatalf("resp = %+v (thinking must not leak into Text)", resp)
	}
	msgs = append(msgs, Message{Role: "assistant", ToolCalls: resp.ToolCalls},
		Message{Role: "tool", ToolCallID: "toolu_T", ToolName: "read_file", Content: "contents"})
	if _, err := b.Generate(testContext(t), Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	assistant := rec.last()["messages"].([]any)[1]
	want := `{"content":[{"signature":"sig123","thinking":"Need the file.","type":"thinking"},{"id":"toolu_T","input":{"path":"x"},"name":"read_file","type":"tool_use"}],"role":"assistant"}`
	if got := mustJSON(t, assistant); !sameJSONText(t, got, want) {
		t.Errorf("assistant turn = %s\nwant %s", got, want)
	}
}

func TestClaudeDroppedOptionsAreLogged(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	_, err := New(configs.Backend{Type: "claude", APIKey: "k", Extra: map[string]any{"allowed_tools": []any{"Read"}, "temperature": 1}},
		Options{Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	dropped := logs.FilterMessageSnippet("ignoring backend option").All()
	if len(dropped) != 1 || dropped[0].ContextMap()["key"] != "allowed_tools" || dropped[0].Level != zap.DebugLevel {
		t.Errorf("debug lines for dropped keys = %+v, want one for allowed_tools", dropped)
	}
}

// A stream cut off before message_stop is not a reply: it is retried, whether it was cut in a
// tool call's arguments or after some text.
func TestClaudeTruncatedStream(t *testing.T) {
	cutInToolArgs := anthropicScript{
		{"message_start", msgStart},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_X","name":"delete_file","input":{}}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"/wor"}}`},
	}
	cutInText := anthropicScript{
		{"message_start", msgStart},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half"}}`},
	}
	tests := []struct {
		name     string
		first    anthropicScript
		attempts int
		wantErr  string
	}{
		{"cut in tool arguments is retried", cutInToolArgs, 2, ""},
		{"cut after text is retried", cutInText, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("retry-after-ms", "1")
				if calls.Add(1) == 1 {
					tt.first.play(w)
					return
				}
				textOnlyReply.play(w)
			}))
			defer srv.Close()
			resp, err := newTestClaude(t, srv.URL, nil).Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
			if got := int(calls.Load()); got != tt.attempts {
				t.Errorf("requests = %d, want %d", got, tt.attempts)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || resp.Text != "done" || len(resp.ToolCalls) != 0 {
				t.Fatalf("resp = %+v, err = %v; the cut-off tool call must not be returned", resp, err)
			}
		})
	}
}
