package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

func TestQuickModeFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string // "" : the run starts (and fails later for want of a provider)
	}{
		{"model needed", []string{"--backend", "openai", "q"}, "--backend openai needs --model NAME: the openai backend has no default model"},
		{"unknown backend", []string{"--backend", "opnai", "--model", "gpt-5", "q"}, "--backend opnai: unknown backend type; did you mean openai?"},
		{"refused backend", []string{"--backend", "ag2", "--model", "x", "q"}, "--backend ag2: AG2 is a Python framework adapter"},
		{"model of no known backend", []string{"--model", "llama-3", "q"}, "--model llama-3: cannot tell which backend serves it: add --backend TYPE (one of "},
		{"system message alone", []string{"--system-message", "Be terse.", "q"}, "--system-message and --base-url describe quick mode's agent: add --backend TYPE and --model NAME"},
		{"not with --config", []string{"--config", "c.yaml", "--backend", "openai", "--model", "gpt-5", "q"}, "--config and quick mode (--backend, --model, --system-message, --base-url) cannot be used together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, "")
			code := e.exec(tt.args...)
			if code != cmdutil.ExitUsage || !strings.Contains(e.ErrOut.String(), tt.wantErr) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, e.ErrOut, tt.wantErr)
			}
		})
	}
}

// Quick mode runs one agent end to end against a provider speaking the OpenAI Responses API:
// the agent answers with new_answer, then presents; the answer is printed.
func TestQuickModeRuns(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/responses" {
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		coordination := strings.Contains(string(raw), `"new_answer"`)
		w.Header().Set("Content-Type", "text/event-stream")
		writeResponses(w, coordination)
	}))
	defer srv.Close()

	e := newTestEnv(t, "")
	e.Vars["OPENAI_API_KEY"] = "sk-test"
	code := e.exec("--backend", "openai", "--model", "gpt-5", "--system-message", "Be terse.", "--base-url", srv.URL+"/v1",
		"--display", "silent", "What is 2+2?")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, e.ErrOut)
	}
	if got := strings.TrimSpace(e.Out.String()); got != "The answer is 4." {
		t.Errorf("stdout %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2 (answer, then final presentation)", len(bodies))
	}
	for _, b := range bodies {
		if b["model"] != "gpt-5" || !strings.Contains(fmt.Sprint(b["instructions"]), "Be terse.") {
			t.Errorf("request model %v, instructions %q", b["model"], b["instructions"])
		}
	}
}

// writeResponses streams a Responses API reply: a new_answer call in coordination, the final
// text otherwise.
func writeResponses(w http.ResponseWriter, coordination bool) {
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		data, _ := json.Marshal(fields)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
		w.(http.Flusher).Flush()
	}
	base := map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5", "status": "in_progress", "output": []any{}}
	send("response.created", map[string]any{"response": base})
	var item map[string]any
	if coordination {
		args := `{"content":"4"}`
		item = map[string]any{"id": "fc_1", "type": "function_call", "status": "completed", "arguments": args, "call_id": "call_1", "name": "new_answer"}
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1", "name": "new_answer"}})
		send("response.function_call_arguments.delta", map[string]any{"item_id": "fc_1", "output_index": 0, "delta": args})
		send("response.function_call_arguments.done", map[string]any{"item_id": "fc_1", "output_index": 0, "arguments": args})
	} else {
		text := "The answer is 4."
		part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
		item = map[string]any{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		send("response.content_part.added", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		send("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": text, "logprobs": []any{}})
		send("response.output_text.done", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "text": text, "logprobs": []any{}})
		send("response.content_part.done", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "part": part})
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	done := map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5", "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}
	send("response.completed", map[string]any{"response": done})
}
