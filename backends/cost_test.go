package backends

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
)

func TestPricingProvider(t *testing.T) {
	tests := []struct {
		typ, baseURL, want string
	}{
		{"openai", "", "openai"},
		{"chatcompletion", "", "openai"},
		{"chatcompletion", "https://api.openai.com/v1", "openai"},
		{"chatcompletion", "https://api.x.ai/v1", "xai"},
		{"chatcompletion", "http://localhost:8000/v1", ""}, // a local server: prices unknown
		{"openai", "https://proxy.example.com/v1", ""},
		{"claude", "", "anthropic"},
		{"claude_code", "", "anthropic"},
		{"gemini", "", "google"},
		{"grok", "", "xai"},
		{"groq", "", "groq"},
		{"scripted", "", "scripted"},
	}
	for _, tt := range tests {
		if got := PricingProvider(configs.Backend{Type: tt.typ, BaseURL: tt.baseURL}); got != tt.want {
			t.Errorf("PricingProvider(%s, %q) = %q, want %q", tt.typ, tt.baseURL, got, tt.want)
		}
	}
}

// Requests ask for prompt caching of their stable prefix: Anthropic requests carry cache_control
// breakpoints (the last tool, the system prompt, the end of the prompt's shared part, and the
// last tool result once in a tool loop); OpenAI requests carry the run's prompt_cache_key,
// which Chat Completions sends only to OpenAI itself.
func TestPromptCaching(t *testing.T) {
	srv := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply { return fakeprovider.Reply{Text: "ok"} })
	defer srv.Close()
	tool := ToolSpec{Name: "read_file", Description: "reads", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}
	first := Request{System: "sys", Tools: []ToolSpec{tool}, CacheKey: "massgen-run1",
		Messages: []Message{{Role: "user", Content: "SHARED:task and answers|MINE:paths", SharedPrefix: len("SHARED:task and answers|")}}}
	loop := first
	loop.Messages = append(slices.Clone(first.Messages),
		Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{}`)}}},
		Message{Role: "tool", ToolCallID: "c1", ToolName: "read_file", Content: "contents"})
	send := func(t *testing.T, typ string, req Request) map[string]any {
		t.Helper()
		b, err := New(configs.Backend{Type: typ, Model: "m", APIKey: "k", BaseURL: srv.BaseURL(typ)}, Options{MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Generate(testContext(t), req, nil); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		var body map[string]any
		if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	marked := func(v any) bool { m, _ := v.(map[string]any); return m["cache_control"] != nil }
	at := func(v any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				v = v.(map[string]any)[k]
			case int:
				l := v.([]any)
				if k < 0 {
					k += len(l)
				}
				v = l[k]
			}
		}
		return v
	}

	t.Run("anthropic", func(t *testing.T) {
		body := send(t, "claude", first)
		if !marked(at(body, "tools", -1)) || !marked(at(body, "system", 0)) {
			t.Errorf("tools and system not marked: %v / %v", at(body, "tools"), at(body, "system"))
		}
		content := at(body, "messages", 0, "content").([]any)
		if len(content) != 2 || at(content, 0, "text") != "SHARED:task and answers|" || !marked(content[0]) || marked(content[1]) {
			t.Errorf("the prompt is not split at its shared prefix with a breakpoint: %v", content)
		}
		body = send(t, "claude", loop)
		if last := at(body, "messages", -1, "content", -1); !marked(last) {
			t.Errorf("in the tool loop the last tool result is not marked: %v", last)
		}
	})
	t.Run("openai", func(t *testing.T) {
		if body := send(t, "openai", first); body["prompt_cache_key"] != "massgen-run1" {
			t.Errorf("prompt_cache_key = %v", body["prompt_cache_key"])
		}
		if body := send(t, "chatcompletion", first); body["prompt_cache_key"] != nil {
			t.Errorf("a compatible server was sent prompt_cache_key %v", body["prompt_cache_key"])
		}
	})
}
