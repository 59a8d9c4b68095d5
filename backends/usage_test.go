package backends

import (
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
)

// Every API backend reads the provider's cached and reasoning tokens into Usage, counting them
// as input and output: OpenAI's prompt_tokens_details.cached_tokens and
// completion_tokens_details.reasoning_tokens (and the Responses API's input_tokens_details and
// output_tokens_details), Anthropic's cache_read_input_tokens and cache_creation_input_tokens
// (beside input_tokens), Gemini's cachedContentTokenCount and thoughtsTokenCount (beside
// candidatesTokenCount).
func TestUsageKinds(t *testing.T) {
	sent := fakeprovider.Usage{Input: 1000, CachedInput: 600, CacheWrite: 100, Output: 300, Reasoning: 120}
	srv := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply {
		u := sent
		return fakeprovider.Reply{Text: "hi", Usage: &u}
	})
	defer srv.Close()
	tests := []struct {
		typ, model string
		want       Usage
	}{
		// No field for tokens written to the cache in OpenAI's and Gemini's usage.
		{"openai", "gpt-5", Usage{InputTokens: 1000, CachedInputTokens: 600, OutputTokens: 300, ReasoningTokens: 120}},
		{"chatcompletion", "gpt-5", Usage{InputTokens: 1000, CachedInputTokens: 600, OutputTokens: 300, ReasoningTokens: 120}},
		{"claude", "claude-sonnet-4-5", Usage{InputTokens: 1000, CachedInputTokens: 600, CacheWriteTokens: 100, OutputTokens: 300}},
		{"gemini", "gemini-2.5-flash", Usage{InputTokens: 1000, CachedInputTokens: 600, OutputTokens: 300, ReasoningTokens: 120}},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			b, err := New(configs.Backend{Type: tt.typ, Model: tt.model, APIKey: "k", BaseURL: srv.BaseURL(tt.typ)}, Options{MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hello"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != tt.want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tt.want)
			}
		})
	}
}
