package backends

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

// respFuncCall is a function call a fake Responses server streams, with its arguments split
// into the given pieces.
type respFuncCall struct {
	callID, name string
	pieces       []string
}

// responsesStream writes the real event sequence of a streamed Responses API reply: an
// assistant message streamed as textPieces, then each function call with its arguments in
// pieces, then response.completed with usage. omitDone leaves the arguments out of the *.done
// events (as some compatible servers do) so only the deltas carry them.
func responsesStream(s *wireSSE, textPieces []string, calls []respFuncCall, omitDone bool) {
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		s.event(typ, fields)
	}
	base := map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test", "status": "in_progress", "output": []any{}}
	send("response.created", map[string]any{"response": base})
	send("response.in_progress", map[string]any{"response": base})
	var output []any
	idx := 0
	if len(textPieces) > 0 {
		full := strings.Join(textPieces, "")
		send("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		send("response.content_part.added", map[string]any{"item_id": "msg_1", "output_index": idx, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, p := range textPieces {
			send("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": idx, "content_index": 0, "delta": p, "logprobs": []any{}})
		}
		send("response.output_text.done", map[string]any{"item_id": "msg_1", "output_index": idx, "content_index": 0, "text": full, "logprobs": []any{}})
		part := map[string]any{"type": "output_text", "text": full, "annotations": []any{}}
		send("response.content_part.done", map[string]any{"item_id": "msg_1", "output_index": idx, "content_index": 0, "part": part})
		item := map[string]any{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		send("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	for _, c := range calls {
		id := "fc_" + c.callID
		full := strings.Join(c.pieces, "")
		send("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": c.callID, "name": c.name}})
		for _, p := range c.pieces {
			send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": idx, "delta": p})
		}
		doneArgs := full
		if omitDone {
			doneArgs = ""
		}
		send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": idx, "arguments": doneArgs})
		item := map[string]any{"id": id, "type": "function_call", "status": "completed", "arguments": doneArgs, "call_id": c.callID, "name": c.name}
		send("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	done := map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test", "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": 120, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 35, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 155}}
	if omitDone {
		done["output"] = []any{}
	}
	send("response.completed", map[string]any{"response": done})
}

func newTestOpenAI(t *testing.T, ws *wireServer, extra map[string]any, o Options) Backend {
	t.Helper()
	o.HTTPClient = ws.Client()
	if o.LookupEnv == nil {
		o.LookupEnv = wireEnv(map[string]string{"OPENAI_API_KEY": "sk-test"})
	}
	b, err := New(configs.Backend{Type: "openai", Model: "gpt-test", BaseURL: ws.URL + "/v1", Extra: extra}, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

var wireWriteFileTool = ToolSpec{
	Name:        "write_file",
	Description: "Write a file.",
	Parameters: map[string]any{
		"type":       "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}},
		"required":   []any{"path", "content"},
	},
}

func TestOpenAIResponsesStreamsTextAndParallelToolCalls(t *testing.T) {
	for _, omitDone := range []bool{false, true} {
		name := "arguments in done events"
		if omitDone {
			name = "arguments only in deltas"
		}
		t.Run(name, func(t *testing.T) {
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				responsesStream(startWireSSE(t, w), []string{"I will ", "write ", "two files."}, []respFuncCall{
					{"call_a", "write_file", []string{`{"pa`, `th":"a.txt","con`, `tent":"hello \"A\""}`}},
					{"call_b", "write_file", []string{`{"path":`, `"b.txt",`, `"content":"B"}`}},
				}, omitDone)
			})
			b := newTestOpenAI(t, ws, map[string]any{
				"reasoning":                   map[string]any{"effort": "low", "summary": "auto"},
				"text":                        map[string]any{"verbosity": "low"},
				"temperature":                 0.3,
				"enable_web_search":           true,
				"command_line_execution_mode": "docker",
				"extra_body":                  map[string]any{"prompt_cache_key": "k1"},
			}, Options{})
			var log wireEvents
			resp, err := b.Generate(testContext(t), Request{
				System:   "You are agent1.",
				Messages: []Message{{Role: "user", Content: "Write a.txt and b.txt"}},
				Tools:    []ToolSpec{wireWriteFileTool},
			}, log.add)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Text != "I will write two files." || log.text() != resp.Text {
				t.Errorf("text = %q, streamed %q", resp.Text, log.text())
			}
			if len(log.kinds(EventTextDelta)) != 3 {
				t.Errorf("want 3 text deltas, got %d", len(log.kinds(EventTextDelta)))
			}
			want := []ToolCall{
				{ID: "call_a", Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt","content":"hello \"A\""}`)},
				{ID: "call_b", Name: "write_file", Arguments: json.RawMessage(`{"path":"b.txt","content":"B"}`)},
			}
			wireAssertCalls(t, resp.ToolCalls, want)
			var streamed []ToolCall
			for _, e := range log.kinds(EventToolCall) {
				streamed = append(streamed, *e.ToolCall)
			}
			wireAssertCalls(t, streamed, want)
			if resp.Usage != (Usage{InputTokens: 120, OutputTokens: 35}) {
				t.Errorf("usage = %+v", resp.Usage)
			}

			reqs := ws.requests()
			if len(reqs) != 1 {
				t.Fatalf("want 1 request, got %d", len(reqs))
			}
			r := reqs[0]
			if r.URL.Path != "/v1/responses" || r.Method != http.MethodPost {
				t.Errorf("request %s %s, want POST /v1/responses", r.Method, r.URL.Path)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization = %q", got)
			}
			body := r.JSON(t)
			checks := map[string]any{
				"model":                         "gpt-test",
				"stream":                        true,
				"store":                         false,
				"instructions":                  "You are agent1.",
				"temperature":                   0.3,
				"prompt_cache_key":              "k1",
				"reasoning.effort":              "low",
				"reasoning.summary":             "auto",
				"text.verbosity":                "low",
				"input.0.role":                  "user",
				"input.0.content":               "Write a.txt and b.txt",
				"tools.0.type":                  "function",
				"tools.0.name":                  "write_file",
				"tools.0.description":           "Write a file.",
				"tools.0.parameters.type":       "object",
				"tools.0.parameters.required.1": "content",
				"tools.0.parameters.properties.path.type": "string",
				"tools.1.type": "web_search",
			}
			for path, want := range checks {
				if got := wireDigPath(body, path); got != want {
					t.Errorf("body %s = %#v, want %#v", path, got, want)
				}
			}
			for _, k := range []string{"command_line_execution_mode", "enable_web_search", "extra_body"} {
				if _, ok := body[k]; ok {
					t.Errorf("MassGen-only key %q was sent to the API", k)
				}
			}
		})
	}
}

// wireDigPath is wireDig with a dotted path; numeric parts index arrays.
func wireDigPath(v any, path string) any {
	var parts []any
	for _, p := range strings.Split(path, ".") {
		n := 0
		isNum := p != ""
		for _, c := range p {
			if c < '0' || c > '9' {
				isNum = false
				break
			}
			n = n*10 + int(c-'0')
		}
		if isNum {
			parts = append(parts, n)
		} else {
			parts = append(parts, p)
		}
	}
	return wireDig(v, parts...)
}

func wireAssertCalls(t *testing.T, got, want []ToolCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("tool calls = %d %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Name != want[i].Name {
			t.Errorf("call %d = %s %s, want %s %s", i, got[i].ID, got[i].Name, want[i].ID, want[i].Name)
		}
		var g, w any
		if err := json.Unmarshal(got[i].Arguments, &g); err != nil {
			t.Errorf("call %d arguments not JSON: %s", i, got[i].Arguments)
			continue
		}
		_ = json.Unmarshal(want[i].Arguments, &w)
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("call %d arguments = %s, want %s", i, gb, wb)
		}
	}
}

func TestOpenAIResponsesSendsToolResultsBack(t *testing.T) {
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		responsesStream(startWireSSE(t, w), []string{"done"}, nil, false)
	})
	b := newTestOpenAI(t, ws, nil, Options{})
	_, err := b.Generate(testContext(t), Request{
		Messages: []Message{
			{Role: "user", Content: "task"},
			{Role: "assistant", Content: "writing", ToolCalls: []ToolCall{
				{ID: "call_a", Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt","content":"A"}`)},
				{ID: "call_b", Name: "read_file", Arguments: json.RawMessage(`{"path":"/etc/shadow"}`)},
			}},
			{Role: "tool", ToolCallID: "call_a", ToolName: "write_file", Content: "wrote a.txt"},
			{Role: "tool", ToolCallID: "call_b", ToolName: "read_file", Content: "denied: outside the allowed paths", IsError: true},
		},
		Tools: []ToolSpec{wireWriteFileTool},
	}, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := ws.requests()[0].JSON(t)
	checks := map[string]any{
		"input.0.role":      "user",
		"input.1.role":      "assistant",
		"input.1.content":   "writing",
		"input.2.type":      "function_call",
		"input.2.call_id":   "call_a",
		"input.2.name":      "write_file",
		"input.2.arguments": `{"path":"a.txt","content":"A"}`,
		"input.3.type":      "function_call",
		"input.3.call_id":   "call_b",
		"input.4.type":      "function_call_output",
		"input.4.call_id":   "call_a",
		"input.4.output":    "wrote a.txt",
		"input.5.type":      "function_call_output",
		"input.5.call_id":   "call_b",
		"input.5.output":    "Error: denied: outside the allowed paths",
	}
	for path, want := range checks {
		if got := wireDigPath(body, path); got != want {
			t.Errorf("body %s = %#v, want %#v", path, got, want)
		}
	}
	// No server-side item ids are sent: a stateless request must not reference fc_... items.
	if id := wireDigPath(body, "input.2.id"); id != nil {
		t.Errorf("function_call sent with id %v", id)
	}
}

func TestOpenAIResponsesRetries(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		headers    map[string]string
		maxRetries int
		wantReqs   int
		wantErr    string
	}{
		{name: "429 then success", status: 429, headers: map[string]string{"retry-after-ms": "5"}, wantReqs: 2},
		{name: "500 then success", status: 500, headers: map[string]string{"retry-after-ms": "5"}, wantReqs: 2},
		{name: "503 without Retry-After backs off then succeeds", status: 503, wantReqs: 2},
		{name: "400 is not retried", status: 400, wantReqs: 1, wantErr: "bad things"},
		{name: "retries disabled", status: 429, headers: map[string]string{"retry-after-ms": "5"}, maxRetries: -1, wantReqs: 1, wantErr: "429"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					wireJSONError(w, tt.status, tt.headers, "bad things")
					return
				}
				responsesStream(startWireSSE(t, w), []string{"ok"}, nil, false)
			})
			b := newTestOpenAI(t, ws, nil, Options{MaxRetries: tt.maxRetries})
			var log wireEvents
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, log.add)
			if got := len(ws.requests()); got != tt.wantReqs {
				t.Errorf("requests = %d, want %d", got, tt.wantReqs)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				var se *HTTPStatusError
				if !errors.As(err, &se) || se.StatusCode != tt.status {
					t.Errorf("err %v does not carry HTTP status %d", err, tt.status)
				}
				return
			}
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Text != "ok" {
				t.Errorf("text = %q", resp.Text)
			}
			if r := log.kinds(EventRetry); len(r) != 1 || !strings.Contains(r[0].Text, "HTTP") {
				t.Errorf("retry events = %+v, want one", r)
			}
		})
	}
}

func TestOpenAIResponsesCancelMidStream(t *testing.T) {
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		s := startWireSSE(t, w)
		s.event("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": map[string]any{"id": "resp_1", "status": "in_progress", "output": []any{}}})
		s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "partial"})
		awaitHangUp(t, r) // a slow model: nothing more until the client goes away
	})
	b := newTestOpenAI(t, ws, nil, Options{})
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
	if len(ws.requests()) != 1 {
		t.Errorf("a cancelled request was retried: %d requests", len(ws.requests()))
	}
}

func TestOpenAIResponsesStreamFailures(t *testing.T) {
	lane.Long(t)
	tests := []struct {
		name    string
		write   func(s *wireSSE)
		wantErr string
	}{
		{"response.failed", func(s *wireSSE) {
			s.event("response.failed", map[string]any{"type": "response.failed", "sequence_number": 0, "response": map[string]any{"id": "r", "status": "failed", "output": []any{}, "error": map[string]any{"code": "invalid_prompt", "message": "the model broke"}}})
		}, "the model broke"},
		{"error event", func(s *wireSSE) {
			s.event("error", map[string]any{"type": "error", "sequence_number": 0, "code": "invalid_request_error", "message": "bad input", "param": nil})
		}, "bad input"},
		{"stream cut before completion", func(s *wireSSE) {
			s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 0, "delta": "par"})
		}, "before response.completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) { tt.write(startWireSSE(t, w)) })
			b := newTestOpenAI(t, ws, nil, Options{})
			_, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

// Errors sent inside the stream are retried like HTTP statuses, even after text was streamed
// (the retry event voids it).
func TestOpenAIResponsesRetriesStreamErrors(t *testing.T) {
	tests := []struct {
		name     string
		first    func(s *wireSSE)
		wantReqs int
		wantErr  string
	}{
		{name: "rate limit error event", first: func(s *wireSSE) {
			s.event("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": map[string]any{"id": "r", "status": "in_progress", "output": []any{}}})
			s.event("error", map[string]any{"type": "error", "sequence_number": 1, "code": "rate_limit_exceeded", "message": "slow down", "param": nil})
		}, wantReqs: 2},
		{name: "response.failed with server_error", first: func(s *wireSSE) {
			s.event("response.failed", map[string]any{"type": "response.failed", "sequence_number": 0, "response": map[string]any{"id": "r", "status": "failed", "output": []any{}, "error": map[string]any{"code": "server_error", "message": "oops"}}})
		}, wantReqs: 2},
		{name: "connection cut before any output", first: func(s *wireSSE) {
			s.event("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": map[string]any{"id": "r", "status": "in_progress", "output": []any{}}})
		}, wantReqs: 2},
		{name: "failure after text was streamed is retried too", first: func(s *wireSSE) {
			s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 0, "delta": "par"})
			s.event("error", map[string]any{"type": "error", "sequence_number": 1, "code": "server_error", "message": "oops", "param": nil})
		}, wantReqs: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					tt.first(startWireSSE(t, w))
					return
				}
				responsesStream(startWireSSE(t, w), []string{"ok"}, nil, false)
			})
			b := newTestOpenAI(t, ws, nil, Options{})
			var log wireEvents
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, log.add)
			if got := len(ws.requests()); got != tt.wantReqs {
				t.Errorf("requests = %d, want %d", got, tt.wantReqs)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || resp.Text != "ok" {
				t.Fatalf("resp = %+v, err = %v", resp, err)
			}
			if len(log.kinds(EventRetry)) != 1 {
				t.Errorf("retry events = %d, want 1", len(log.kinds(EventRetry)))
			}
		})
	}
}
