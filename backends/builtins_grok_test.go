package backends

import (
	"net/http"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// grokSearchReply streams text, then the finish chunk with xAI's citations and usage.
func grokSearchReply(s *wireSSE) {
	s.event("", chatChunk(map[string]any{"role": "assistant", "content": "Go 1.26 is out."}, nil))
	last := chatChunk(map[string]any{}, "stop")
	last["citations"] = []any{"https://go.dev/doc/go1.26", "https://x.com/golang/status/1"}
	last["usage"] = map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "num_sources_used": 2}
	s.event("", last)
	s.event("", "[DONE]")
}

const grokSearchText = "Go 1.26 is out.\n\nSources:\n1. https://go.dev/doc/go1.26\n2. https://x.com/golang/status/1\n"

// grok's search switches as MassGen sends them: enable_web_search is Live Search with
// {mode: auto, return_citations: true}; extra_body.search_parameters go as written; the
// citations xAI returns reach the answer.
func TestGrokLiveSearch(t *testing.T) {
	tests := []struct {
		name       string
		extra      map[string]any
		wantSearch string // JSON of search_parameters ("" = absent)
	}{
		{name: "enable_web_search", extra: map[string]any{"enable_web_search": true},
			wantSearch: `{"mode":"auto","return_citations":true}`},
		{name: "extra_body.search_parameters (grok_single_agent.yaml)", extra: map[string]any{
			"enable_web_search": false,
			"extra_body":        map[string]any{"search_parameters": map[string]any{"mode": "auto", "return_citations": true, "max_search_results": 3}},
		}, wantSearch: `{"max_search_results":3,"mode":"auto","return_citations":true}`},
		{name: "no search", extra: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) { grokSearchReply(startWireSSE(t, w)) })
			env := wireEnv(map[string]string{"XAI_API_KEY": "xai-1"})
			b := newTestChat(t, ws, configs.Backend{Type: "grok", Model: "grok-3-mini", Extra: tt.extra}, Options{HTTPClient: ws.redirectClient(), LookupEnv: env})
			var log wireEvents
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "news?"}}}, log.add)
			if err != nil {
				t.Fatal(err)
			}
			r := ws.requests()[0]
			if r.URL.String() != "https://api.x.ai/v1/chat/completions" {
				t.Errorf("URL = %s", r.URL)
			}
			body := r.JSON(t)
			got := ""
			if v, ok := body["search_parameters"]; ok {
				got = mustJSON(t, v)
			}
			if got != tt.wantSearch {
				t.Errorf("search_parameters = %s, want %s", got, tt.wantSearch)
			}
			for _, k := range []string{"enable_web_search", "extra_body"} {
				if _, ok := body[k]; ok {
					t.Errorf("%s sent in the body", k)
				}
			}
			if resp.Text != grokSearchText || log.text() != grokSearchText {
				t.Errorf("text = %q, streamed %q", resp.Text, log.text())
			}
		})
	}
}

func TestGrokSearchConflict(t *testing.T) {
	env := wireEnv(map[string]string{"XAI_API_KEY": "xai-1"})
	for name, extra := range map[string]map[string]any{
		"both":       {"enable_web_search": true, "extra_body": map[string]any{"search_parameters": map[string]any{"mode": "on"}}},
		"not a bool": {"enable_web_search": "yes"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(configs.Backend{Type: "grok", Model: "grok-4", Extra: extra}, Options{LookupEnv: env})
			if err == nil || !strings.Contains(err.Error(), "enable_web_search") {
				t.Fatalf("err = %v, want one naming enable_web_search", err)
			}
		})
	}
}
