package backends

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// chatChunk is one Chat Completions stream chunk in the real wire shape.
func chatChunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m-test",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		"usage":   nil,
	}
}

// chatStream writes a streamed reply: text pieces, then two parallel tool calls whose
// arguments are split over chunks and interleaved, then the usage chunk and [DONE].
func chatStream(s *wireSSE, text []string, calls []respFuncCall) {
	s.event("", chatChunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range text {
		s.event("", chatChunk(map[string]any{"content": p}, nil))
	}
	for i, c := range calls {
		s.event("", chatChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.callID, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""},
		}}}, nil))
	}
	// Interleave the argument pieces of all calls, as parallel calls can arrive.
	for p := 0; ; p++ {
		sent := false
		for i, c := range calls {
			if p < len(c.pieces) {
				sent = true
				s.event("", chatChunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": i, "function": map[string]any{"arguments": c.pieces[p]},
				}}}, nil))
			}
		}
		if !sent {
			break
		}
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	s.event("", chatChunk(map[string]any{}, finish))
	s.event("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m-test", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 42, "completion_tokens": 17, "total_tokens": 59}})
	s.event("", "[DONE]")
}

func newTestChat(t *testing.T, ws *wireServer, cfg configs.Backend, o Options) Backend {
	t.Helper()
	if o.HTTPClient == nil {
		o.HTTPClient = ws.Client()
	}
	if o.LookupEnv == nil {
		o.LookupEnv = wireEnv(map[string]string{"OPENAI_API_KEY": "sk-test"})
	}
	if cfg.Type == "" {
		cfg.Type = "chatcompletion"
	}
	if cfg.Model == "" {
		cfg.Model = "m-test"
	}
	if cfg.BaseURL == "" && o.HTTPClient == ws.Client() {
		cfg.BaseURL = ws.URL + "/v1"
	}
	b, err := New(cfg, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

func TestChatCompletionStreamsTextAndParallelToolCalls(t *testing.T) {
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		chatStream(startWireSSE(t, w), []string{"Let me ", "write."}, []respFuncCall{
			{"call_a", "write_file", []string{`{"pa`, `th":"a.txt",`, `"content":"A"}`}},
			{"call_b", "write_file", []string{`{"path":"b.txt"`, `,"content":"B\n"}`}},
		})
	})
	b := newTestChat(t, ws, configs.Backend{Extra: map[string]any{
		"temperature": 0.2, "top_p": 0.7, "max_tokens": 1000,
		"reasoning":         map[string]any{"effort": "high", "summary": "auto"},
		"text":              map[string]any{"verbosity": "low"},
		"enable_web_search": true, "upload_files": []any{"x"},
		"extra_body": map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}},
	}}, Options{})
	var log wireEvents
	resp, err := b.Generate(testContext(t), Request{
		System:   "sys",
		Messages: []Message{{Role: "user", Content: "task"}},
		Tools:    []ToolSpec{wireWriteFileTool},
	}, log.add)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text != "Let me write." || log.text() != resp.Text {
		t.Errorf("text = %q, streamed %q", resp.Text, log.text())
	}
	want := []ToolCall{
		{ID: "call_a", Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt","content":"A"}`)},
		{ID: "call_b", Name: "write_file", Arguments: json.RawMessage(`{"path":"b.txt","content":"B\n"}`)},
	}
	wireAssertCalls(t, resp.ToolCalls, want)
	var streamed []ToolCall
	for _, e := range log.kinds(EventToolCall) {
		streamed = append(streamed, *e.ToolCall)
	}
	wireAssertCalls(t, streamed, want)
	if resp.Usage != (Usage{InputTokens: 42, OutputTokens: 17}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	r := ws.requests()[0]
	if r.URL.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", r.URL.Path)
	}
	body := r.JSON(t)
	checks := map[string]any{
		"model":                                "m-test",
		"stream":                               true,
		"stream_options.include_usage":         true,
		"temperature":                          0.2,
		"top_p":                                0.7,
		"max_tokens":                           float64(1000),
		"reasoning_effort":                     "high",
		"verbosity":                            "low",
		"chat_template_kwargs.enable_thinking": false,
		"messages.0.role":                      "system",
		"messages.0.content":                   "sys",
		"messages.1.role":                      "user",
		"messages.1.content":                   "task",
		"tools.0.type":                         "function",
		"tools.0.function.name":                "write_file",
		"tools.0.function.description":         "Write a file.",
		"tools.0.function.parameters.type":     "object",
		"tools.0.function.parameters.properties.content.type": "string",
	}
	for path, want := range checks {
		if got := wireDigPath(body, path); got != want {
			t.Errorf("body %s = %#v, want %#v", path, got, want)
		}
	}
	for _, k := range []string{"reasoning", "text", "enable_web_search", "upload_files", "extra_body"} {
		if _, ok := body[k]; ok {
			t.Errorf("key %q was sent to the API", k)
		}
	}
}

func TestChatCompletionSendsToolResultsBack(t *testing.T) {
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		chatStream(startWireSSE(t, w), []string{"ok"}, nil)
	})
	b := newTestChat(t, ws, configs.Backend{}, Options{})
	_, err := b.Generate(testContext(t), Request{
		Messages: []Message{
			{Role: "user", Content: "task"},
			{Role: "assistant", ToolCalls: []ToolCall{
				{ID: "call_a", Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt","content":"A"}`)},
				{ID: "call_b", Name: "delete_file", Arguments: json.RawMessage(`{"path":"x"}`)},
			}},
			{Role: "tool", ToolCallID: "call_a", ToolName: "write_file", Content: "wrote a.txt"},
			{Role: "tool", ToolCallID: "call_b", ToolName: "delete_file", Content: "permission denied", IsError: true},
		},
	}, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := ws.requests()[0].JSON(t)
	checks := map[string]any{
		"messages.1.role":                            "assistant",
		"messages.1.tool_calls.0.id":                 "call_a",
		"messages.1.tool_calls.0.type":               "function",
		"messages.1.tool_calls.0.function.name":      "write_file",
		"messages.1.tool_calls.0.function.arguments": `{"path":"a.txt","content":"A"}`,
		"messages.1.tool_calls.1.id":                 "call_b",
		"messages.2.role":                            "tool",
		"messages.2.tool_call_id":                    "call_a",
		"messages.2.content":                         "wrote a.txt",
		"messages.3.role":                            "tool",
		"messages.3.tool_call_id":                    "call_b",
		"messages.3.content":                         "Error: permission denied",
	}
	for path, want := range checks {
		if got := wireDigPath(body, path); got != want {
			t.Errorf("body %s = %#v, want %#v", path, got, want)
		}
	}
	if _, ok := body["tools"]; ok {
		t.Errorf("tools sent although none were offered")
	}
}

func TestChatCompletionRetries(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		headers  map[string]string
		wantReqs int
		wantErr  string
	}{
		{name: "429 then success", status: 429, headers: map[string]string{"Retry-After": "0"}, wantReqs: 2},
		{name: "500 then success", status: 500, headers: map[string]string{"retry-after-ms": "5"}, wantReqs: 2},
		{name: "401 is not retried", status: 401, wantReqs: 1, wantErr: "bad things"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					wireJSONError(w, tt.status, tt.headers, "bad things")
					return
				}
				chatStream(startWireSSE(t, w), []string{"ok"}, nil)
			})
			b := newTestChat(t, ws, configs.Backend{}, Options{})
			var log wireEvents
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, log.add)
			if got := len(ws.requests()); got != tt.wantReqs {
				t.Errorf("requests = %d, want %d", got, tt.wantReqs)
			}
			if tt.wantErr != "" {
				var se *HTTPStatusError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &se) || se.StatusCode != tt.status {
					t.Fatalf("err = %v, want HTTP %d containing %q", err, tt.status, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Text != "ok" || len(log.kinds(EventRetry)) != 1 {
				t.Errorf("text = %q, retry events = %d", resp.Text, len(log.kinds(EventRetry)))
			}
		})
	}
}

func TestChatCompletionCancelMidStream(t *testing.T) {
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		s := startWireSSE(t, w)
		s.event("", chatChunk(map[string]any{"role": "assistant", "content": "partial"}, nil))
		awaitHangUp(t, r)
	})
	b := newTestChat(t, ws, configs.Backend{}, Options{})
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
		t.Errorf("cancelled request retried: %d requests", len(ws.requests()))
	}
}

// Some OpenAI-compatible servers send every parallel call at index 0 (telling them apart only
// by id), or no id at all.
func TestChatCompletionQuirkyToolCallIndexes(t *testing.T) {
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		s := startWireSSE(t, w)
		s.event("", chatChunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "x1", "type": "function", "function": map[string]any{"name": "list_directory", "arguments": `{"path":`}}}}, nil))
		s.event("", chatChunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": `"."}`}}}}, nil))
		s.event("", chatChunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "x2", "type": "function", "function": map[string]any{"name": "read_file", "arguments": `{"path":"a"}`}}}}, nil))
		s.event("", chatChunk(map[string]any{"tool_calls": []any{map[string]any{"index": 1, "type": "function", "function": map[string]any{"name": "vote", "arguments": ``}}}}, "tool_calls"))
		s.event("", "[DONE]")
	})
	b := newTestChat(t, ws, configs.Backend{}, Options{})
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wireAssertCalls(t, resp.ToolCalls, []ToolCall{
		{ID: "x1", Name: "list_directory", Arguments: json.RawMessage(`{"path":"."}`)},
		{ID: "x2", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
		{ID: "call_3", Name: "vote", Arguments: json.RawMessage(`{}`)},
	})
}

func TestChatCompletionPresets(t *testing.T) {
	tests := []struct {
		name       string
		cfg        configs.Backend
		env        map[string]string
		wantURL    string
		wantAuth   string // Authorization header ("" = none)
		wantHeader [2]string
	}{
		{name: "grok", cfg: configs.Backend{Type: "grok"}, env: map[string]string{"XAI_API_KEY": "xai-1", "OPENAI_API_KEY": "sk-no"},
			wantURL: "https://api.x.ai/v1/chat/completions", wantAuth: "Bearer xai-1"},
		{name: "zai", cfg: configs.Backend{Type: "zai"}, env: map[string]string{"ZAI_API_KEY": "z-1"},
			wantURL: "https://api.z.ai/api/paas/v4/chat/completions", wantAuth: "Bearer z-1"},
		{name: "lmstudio sends no key, not even OPENAI_API_KEY", cfg: configs.Backend{Type: "lmstudio"}, env: map[string]string{"OPENAI_API_KEY": "sk-secret"},
			wantURL: "http://localhost:1234/v1/chat/completions"},
		{name: "vllm", cfg: configs.Backend{Type: "vllm"}, wantURL: "http://localhost:8000/v1/chat/completions"},
		{name: "sglang", cfg: configs.Backend{Type: "sglang"}, wantURL: "http://localhost:30000/v1/chat/completions"},
		{name: "openrouter", cfg: configs.Backend{Type: "openrouter"}, env: map[string]string{"OPENROUTER_API_KEY": "or-1"},
			wantURL: "https://openrouter.ai/api/v1/chat/completions", wantAuth: "Bearer or-1"},
		{name: "base_url in config wins", cfg: configs.Backend{Type: "zai", BaseURL: "https://api.z.ai/api/coding/paas/v4/", APIKey: "cfg-key"},
			wantURL: "https://api.z.ai/api/coding/paas/v4/chat/completions", wantAuth: "Bearer cfg-key"},
		{name: "chatcompletion with cerebras base_url uses CEREBRAS_API_KEY, not the OpenAI key", cfg: configs.Backend{Type: "chatcompletion", BaseURL: "https://api.cerebras.ai/v1"},
			env:     map[string]string{"OPENAI_API_KEY": "sk-1", "CEREBRAS_API_KEY": "cb-1"},
			wantURL: "https://api.cerebras.ai/v1/chat/completions", wantAuth: "Bearer cb-1"},
		{name: "chatcompletion with an unknown host uses OPENAI_API_KEY", cfg: configs.Backend{Type: "chatcompletion", BaseURL: "https://llm.example.com/v1"}, env: map[string]string{"OPENAI_API_KEY": "sk-1"},
			wantURL: "https://llm.example.com/v1/chat/completions", wantAuth: "Bearer sk-1"},
		{name: "chatcompletion on localhost needs no key", cfg: configs.Backend{Type: "chatcompletion", BaseURL: "http://127.0.0.1:9999/v1"},
			wantURL: "http://127.0.0.1:9999/v1/chat/completions"},
		{name: "azure deployment path", cfg: configs.Backend{Type: "azure_openai", Model: "gpt-4.1"},
			env:     map[string]string{"AZURE_OPENAI_API_KEY": "az-1", "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/"},
			wantURL: "https://res.openai.azure.com/openai/deployments/gpt-4.1/chat/completions?api-version=" + defaultAzureAPIVersion, wantHeader: [2]string{"Api-Key", "az-1"}},
		{name: "azure v1 endpoint", cfg: configs.Backend{Type: "azure_openai", Model: "gpt-5-chat", BaseURL: "https://res.openai.azure.com/openai/v1/", APIKey: "az-2"},
			wantURL: "https://res.openai.azure.com/openai/v1/chat/completions", wantHeader: [2]string{"Api-Key", "az-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				chatStream(startWireSSE(t, w), []string{"hi"}, nil)
			})
			if err := CheckKey(tt.cfg, wireEnv(tt.env)); err != nil {
				t.Fatalf("CheckKey: %v", err)
			}
			b := newTestChat(t, ws, tt.cfg, Options{HTTPClient: ws.redirectClient(), LookupEnv: wireEnv(tt.env)})
			if b.Provider() != tt.cfg.Type {
				t.Errorf("Provider() = %q", b.Provider())
			}
			if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			r := ws.requests()[0]
			if r.URL.String() != tt.wantURL {
				t.Errorf("URL = %s, want %s", r.URL, tt.wantURL)
			}
			if got := r.Header.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tt.wantAuth)
			}
			if tt.wantHeader[0] != "" && r.Header.Get(tt.wantHeader[0]) != tt.wantHeader[1] {
				t.Errorf("%s = %q, want %q", tt.wantHeader[0], r.Header.Get(tt.wantHeader[0]), tt.wantHeader[1])
			}
		})
	}
}

// An error object inside the stream (as OpenRouter and others send for rate limits), or a
// connection that ends before anything was said, is retried while nothing has been streamed.
func TestChatCompletionRetriesStreamErrors(t *testing.T) {
	for name, first := range map[string]func(s *wireSSE){
		"error object in the stream": func(s *wireSSE) {
			s.event("", map[string]any{"error": map[string]any{"message": "Rate limit exceeded", "code": 429}})
		},
		"connection cut before any output": func(s *wireSSE) {
			s.event("", chatChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		},
	} {
		t.Run(name, func(t *testing.T) {
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				s := startWireSSE(t, w)
				if n == 0 {
					first(s)
					return
				}
				chatStream(s, []string{"ok"}, nil)
			})
			b := newTestChat(t, ws, configs.Backend{}, Options{})
			var log wireEvents
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, log.add)
			if err != nil || resp.Text != "ok" {
				t.Fatalf("resp = %+v, err = %v", resp, err)
			}
			if len(ws.requests()) != 2 || len(log.kinds(EventRetry)) != 1 {
				t.Errorf("requests = %d, retry events = %d", len(ws.requests()), len(log.kinds(EventRetry)))
			}
		})
	}
}
