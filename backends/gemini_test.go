package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// geminiScript is one streamGenerateContent?alt=sse reply: each entry is one data: chunk.
type geminiScript []string

func (g geminiScript) play(w http.ResponseWriter) {
	s := openStream(w)
	for _, d := range g {
		s.dataOnly(d)
	}
}

// textAndToolsChunks: text over two chunks, two parallel functionCalls in one chunk (the first
// with a thought signature), then a third call alone in the last chunk. Gemini sends every
// functionCall with its complete args; usageMetadata is a running total.
var textAndToolsChunks = geminiScript{
	`{"candidates":[{"content":{"parts":[{"text":"Let me "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":30,"candidatesTokenCount":2,"totalTokenCount":32},"modelVersion":"gemini-test","responseId":"r1"}`,
	`{"candidates":[{"content":{"parts":[{"text":"work."}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":30,"candidatesTokenCount":4,"totalTokenCount":34},"modelVersion":"gemini-test","responseId":"r1"}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"write_file","args":{"path":"a.txt","content":"héllo\n"}},"thoughtSignature":"c2lnQQ=="},{"functionCall":{"name":"read_file","args":{"path":"b.txt"}}}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":30,"candidatesTokenCount":18,"totalTokenCount":48},"modelVersion":"gemini-test","responseId":"r1"}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"list_directory","args":{}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":30,"candidatesTokenCount":20,"thoughtsTokenCount":5,"totalTokenCount":55},"modelVersion":"gemini-test","responseId":"r1"}`,
}

var geminiTextOnly = geminiScript{
	`{"candidates":[{"content":{"parts":[{"text":"done"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":7,"totalTokenCount":18}}`,
}

func newTestGemini(t *testing.T, url string, extra map[string]any) Backend {
	t.Helper()
	b, err := New(configs.Backend{Type: "gemini", Model: "gemini-test", BaseURL: url, Extra: extra}, Options{
		LookupEnv: func(k string) (string, bool) {
			return map[string]string{"GOOGLE_API_KEY": "g-test"}[k], k == "GOOGLE_API_KEY"
		},
		HTTPClient: &http.Client{},
		AgentID:    "agent_b",
	})
	if err != nil {
		t.Fatalf("New(gemini): %v", err)
	}
	return b
}

func TestGeminiStreamsTextAndParallelFunctionCalls(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		textAndToolsChunks.play(w)
	}))
	defer srv.Close()

	b := newTestGemini(t, srv.URL, nil)
	var events []string
	resp, err := b.Generate(testContext(t), Request{
		System:   "You are agent B.",
		Messages: []Message{{Role: "user", Content: "do it"}},
		Tools:    []ToolSpec{testWriteFileTool, {Name: "read_file", Description: "Read.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}},
	}, func(e Event) {
		switch e.Kind {
		case EventTextDelta:
			events = append(events, "text:"+e.Text)
		case EventToolCall:
			events = append(events, "tool:"+e.ToolCall.Name)
		}
	})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text != "Let me work." {
		t.Errorf("Text = %q", resp.Text)
	}
	if want := []string{"text:Let me ", "text:work.", "tool:write_file", "tool:read_file", "tool:list_directory"}; !reflect.DeepEqual(events, want) {
		t.Errorf("events = %q, want %q", events, want)
	}
	if len(resp.ToolCalls) != 3 {
		t.Fatalf("ToolCalls = %+v", resp.ToolCalls)
	}
	assertArgs(t, resp.ToolCalls[0].Arguments, `{"path":"a.txt","content":"héllo\n"}`)
	assertArgs(t, resp.ToolCalls[1].Arguments, `{"path":"b.txt"}`)
	assertArgs(t, resp.ToolCalls[2].Arguments, `{}`)
	ids := map[string]bool{}
	for _, tc := range resp.ToolCalls {
		if tc.ID == "" || ids[tc.ID] {
			t.Errorf("tool call ids must be unique and non-empty: %+v", resp.ToolCalls)
		}
		ids[tc.ID] = true
	}
	// The last running total counts; thoughts are output.
	if want := (Usage{InputTokens: 30, OutputTokens: 25, ReasoningTokens: 5}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v", resp.Usage, want)
	}

	if got := rec.paths[0]; got != "/v1beta/models/gemini-test:streamGenerateContent?alt=sse" {
		t.Errorf("path = %q", got)
	}
	if got := rec.header[0].Get("X-Goog-Api-Key"); got != "g-test" {
		t.Errorf("x-goog-api-key = %q", got)
	}
	body := rec.last()
	if got := mustJSON(t, body["systemInstruction"]); !sameJSONText(t, got, `{"parts":[{"text":"You are agent B."}],"role":"user"}`) {
		t.Errorf("systemInstruction = %s", got)
	}
	if got := mustJSON(t, body["contents"]); !sameJSONText(t, got, `[{"parts":[{"text":"do it"}],"role":"user"}]`) {
		t.Errorf("contents = %s", got)
	}
	// Our JSON schema goes through untouched as parametersJsonSchema.
	wantTools := `[{"functionDeclarations":[` +
		`{"name":"write_file","description":"Write a file.","parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"mode":{"type":"string","enum":["overwrite","append"]}},"required":["path","content"],"additionalProperties":false}},` +
		`{"name":"read_file","description":"Read.","parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string"}}}}]}]`
	if got := mustJSON(t, body["tools"]); !sameJSONText(t, got, wantTools) {
		t.Errorf("tools = %s\nwant %s", got, wantTools)
	}
}

func TestGeminiSendsFunctionResponsesBack(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		if rec.count() == 1 {
			textAndToolsChunks.play(w)
			return
		}
		geminiTextOnly.play(w)
	}))
	defer srv.Close()

	b := newTestGemini(t, srv.URL, nil)
	msgs := []Message{{Role: "user", Content: "do it"}}
	resp, err := b.Generate(testContext(t), Request{Messages: msgs, Tools: []ToolSpec{testWriteFileTool}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls},
		Message{Role: "tool", ToolCallID: resp.ToolCalls[0].ID, ToolName: "write_file", Content: "wrote a.txt"},
		Message{Role: "tool", ToolCallID: resp.ToolCalls[1].ID, Content: "denied: b.txt is protected", IsError: true}, // name found by id
		Message{Role: "tool", ToolCallID: resp.ToolCalls[2].ID, ToolName: "list_directory", Content: "a.txt"},
	)
	resp2, err := b.Generate(testContext(t), Request{Messages: msgs, Tools: []ToolSpec{testWriteFileTool}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp2.Text != "done" || resp2.Usage != (Usage{InputTokens: 11, OutputTokens: 7}) {
		t.Errorf("second reply = %+v", resp2)
	}
	// The model turn is replayed as received (thought signature included; made-up ids are not
	// sent); the three results go back as functionResponse parts of one user turn.
	want := `[{"parts":[{"text":"do it"}],"role":"user"},` +
		`{"parts":[{"text":"Let me "},{"text":"work."},` +
		`{"functionCall":{"name":"write_file","args":{"path":"a.txt","content":"héllo\n"}},"thoughtSignature":"c2lnQQ=="},` +
		`{"functionCall":{"name":"read_file","args":{"path":"b.txt"}}},` +
		`{"functionCall":{"name":"list_directory"}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"write_file","response":{"output":"wrote a.txt"}}},` +
		`{"functionResponse":{"name":"read_file","response":{"error":"denied: b.txt is protected"}}},` +
		`{"functionResponse":{"name":"list_directory","response":{"output":"a.txt"}}}],"role":"user"}]`
	if got := mustJSON(t, rec.last()["contents"]); !sameJSONText(t, got, want) {
		t.Errorf("contents =\n%s\nwant\n%s", got, want)
	}
}

// A conversation the backend did not produce itself (another backend instance, a resumed
// session) is rebuilt from Messages; ids Gemini sent are echoed in the responses.
func TestGeminiRebuildsHistoryWithAPIIDs(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		geminiTextOnly.play(w)
	}))
	defer srv.Close()
	b := newTestGemini(t, srv.URL, nil)
	_, err := b.Generate(testContext(t), Request{Messages: []Message{
		{Role: "user", Content: "task"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "fc_1", Name: "vote", Arguments: json.RawMessage(`{"agent_id":"agent1","reason":"best"}`)}}},
		{Role: "tool", ToolCallID: "fc_1", ToolName: "vote", Content: "vote recorded"},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"parts":[{"text":"task"}],"role":"user"},` +
		`{"parts":[{"functionCall":{"id":"fc_1","name":"vote","args":{"agent_id":"agent1","reason":"best"}}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"id":"fc_1","name":"vote","response":{"output":"vote recorded"}}}],"role":"user"}]`
	if got := mustJSON(t, rec.last()["contents"]); !sameJSONText(t, got, want) {
		t.Errorf("contents =\n%s\nwant\n%s", got, want)
	}
}

func TestGeminiRetriesThenSucceeds(t *testing.T) {
	apiError := func(code int, status, details string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"error":{"code":%d,"message":"try later","status":%q%s}}`, code, status, details)
		}
	}
	retryInfo := `,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.005s"}]`
	tests := []struct {
		name     string
		first    func(http.ResponseWriter)
		attempts int
		wantErr  string
	}{
		{"429 with RetryInfo", apiError(429, "RESOURCE_EXHAUSTED", retryInfo), 2, ""},
		{"503 with backoff", apiError(503, "UNAVAILABLE", ""), 2, ""},
		{"500 with RetryInfo", apiError(500, "INTERNAL", retryInfo), 2, ""},
		{"400 is not retried", apiError(400, "INVALID_ARGUMENT", ""), 1, "INVALID_ARGUMENT"},
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
				geminiTextOnly.play(w)
			}))
			defer srv.Close()
			b := newTestGemini(t, srv.URL, nil)
			var retries int
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, func(e Event) {
				if e.Kind == EventRetry {
					retries++
				}
			})
			if got := int(calls.Load()); got != tt.attempts {
				t.Errorf("server saw %d requests, want %d", got, tt.attempts)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Text != "done" || retries != 1 {
				t.Errorf("text %q, %d retry events; want done, 1", resp.Text, retries)
			}
		})
	}
}

// An error after part of the reply was streamed is retried: the retry event voids the part.
func TestGeminiRetriesAfterPartialOutput(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			geminiTextOnly.play(w)
			return
		}
		geminiScript{
			`{"candidates":[{"content":{"parts":[{"text":"partial"}],"role":"model"},"index":0}]}`,
			`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`,
		}.play(w)
	}))
	defer srv.Close()
	b := newTestGemini(t, srv.URL, nil)
	var log wireEvents
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, log.add)
	if err != nil || resp.Text != "done" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
	if r := log.kinds(EventRetry); calls.Load() != 2 || len(r) != 1 || !strings.Contains(r[0].Text, "overloaded") {
		t.Errorf("requests = %d, retry events %+v", calls.Load(), r)
	}
}

// Cancelling (an agent restart) ends the call with context.Canceled, whether the first chunk
// came or not, and writes nothing through the standard logger (genai logs stream errors there,
// which would land on the user's terminal).
func TestGeminiCancelMidStream(t *testing.T) {
	var stdlog strings.Builder
	prev := log.Writer()
	log.SetOutput(&stdlog)
	defer log.SetOutput(prev)

	for _, firstChunk := range []bool{true, false} {
		t.Run(fmt.Sprintf("first chunk sent %v", firstChunk), func(t *testing.T) {
			arrived := make(chan struct{})
			released := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(released)
				io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
				s := openStream(w)
				s.flush()
				if firstChunk {
					s.dataOnly(`{"candidates":[{"content":{"parts":[{"text":"thinking..."}],"role":"model"},"index":0}]}`)
				}
				close(arrived)
				awaitHangUp(t, r)
			}))
			defer srv.Close()
			b := newTestGemini(t, srv.URL, nil)
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			if !firstChunk {
				go func() {
					select {
					case <-arrived:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			_, err := b.Generate(ctx, Request{Messages: []Message{{Role: "user", Content: "hi"}}}, func(e Event) {
				if e.Kind == EventTextDelta {
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			receive(t, released, "end of the handler after the client hung up")
		})
	}
	if stdlog.Len() != 0 {
		t.Errorf("the standard logger got %q", stdlog.String())
	}
}

func TestGeminiBlockedOrEmptyReplyIsAnError(t *testing.T) {
	tests := []struct {
		name    string
		chunk   string
		wantErr string
	}{
		{"prompt blocked", `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}`, "the prompt was blocked (SAFETY)"},
		{"malformed call", `{"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL","index":0}]}`, "empty reply (finish reason MALFORMED_FUNCTION_CALL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				geminiScript{tt.chunk}.play(w)
			}))
			defer srv.Close()
			_, err := newTestGemini(t, srv.URL, nil).Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestGeminiExtraOptions(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		geminiTextOnly.play(w)
	}))
	defer srv.Close()
	b := newTestGemini(t, srv.URL, map[string]any{
		"temperature":     0.5,
		"top_p":           0.95,
		"max_tokens":      1000,
		"thinking_config": map[string]any{"thinking_budget": 512, "include_thoughts": true},
		"extra_body":      map[string]any{"cachedContent": "cachedContents/abc"},
	})
	if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	body := rec.last()
	want := `{"temperature":0.5,"topP":0.95,"maxOutputTokens":1000,"thinkingConfig":{"thinkingBudget":512,"includeThoughts":true}}`
	if got := mustJSON(t, body["generationConfig"]); !sameJSONText(t, got, want) {
		t.Errorf("generationConfig = %s\nwant %s", got, want)
	}
	if body["cachedContent"] != "cachedContents/abc" {
		t.Errorf("extra_body not merged: cachedContent = %v", body["cachedContent"])
	}
	if _, ok := body["tools"]; ok {
		t.Errorf("tools sent although none were offered: %s", mustJSON(t, body["tools"]))
	}
}

func TestGeminiBadOptionsAndKeys(t *testing.T) {
	tests := []struct {
		name    string
		cfg     configs.Backend
		env     map[string]string
		wantErr string
	}{
		{"no key", configs.Backend{Type: "gemini"}, nil, "GEMINI_API_KEY or GOOGLE_API_KEY"},
		{"top_k not a number", configs.Backend{Type: "gemini", APIKey: "k", Extra: map[string]any{"top_k": []any{1}}}, nil, "top_k: a list is not a whole number"},
		{"bad include_thoughts", configs.Backend{Type: "gemini", Extra: map[string]any{"thinking": map[string]any{"include_thoughts": "yes"}}}, map[string]string{"GEMINI_API_KEY": "k"}, `thinking.include_thoughts: "yes" is not true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			_, err := New(tt.cfg, Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// GEMINI_API_KEY is used when set; the key goes in the x-goog-api-key header.
func TestGeminiKeyFromGeminiAPIKey(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		geminiTextOnly.play(w)
	}))
	defer srv.Close()
	b, err := New(configs.Backend{Type: "gemini", BaseURL: srv.URL}, Options{LookupEnv: func(k string) (string, bool) {
		v, ok := map[string]string{"GEMINI_API_KEY": "from-gemini", "GOOGLE_API_KEY": "from-google"}[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Model() != geminiDefaultModel || b.Provider() != "gemini" {
		t.Errorf("Model/Provider = %q/%q", b.Model(), b.Provider())
	}
	if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := rec.header[0].Get("X-Goog-Api-Key"); got != "from-gemini" {
		t.Errorf("x-goog-api-key = %q, want from-gemini", got)
	}
}

// A stream that stops without a finish reason is not a reply: retried, then the call fails
// with ErrEndedEarly.
func TestGeminiTruncatedStreamIsAnError(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		geminiScript{`{"candidates":[{"content":{"parts":[{"text":"half an ans"}],"role":"model"},"index":0}]}`}.play(w)
	}))
	defer srv.Close()
	b, err := New(configs.Backend{Type: "gemini", Model: "gemini-test", BaseURL: srv.URL, APIKey: "k"}, Options{MaxRetries: 1, retryWait: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
	if !errors.Is(err, ErrEndedEarly) || err.Error() != "gemini gemini-test: the reply ended early: the stream closed before a finish reason after 1 retry" {
		t.Fatalf("err = %v, want the reply ended early", err)
	}
	if calls.Load() != 2 {
		t.Errorf("requests = %d, want 2", calls.Load())
	}
}
