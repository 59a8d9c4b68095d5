package backends

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
)

// Option values reach the provider typed by the config's param table, whatever form the YAML
// gave them: a quoted number ("0.5", or a ${VAR} in quotes) is sent as a number, on every
// protocol. Before the table, the Responses and Chat Completions backends sent the YAML as
// written, a string the provider rejects.
func TestParamsReachTheProviderTyped(t *testing.T) {
	srv := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply { return fakeprovider.Reply{Text: "ok"} })
	defer srv.Close()
	tests := []struct {
		typ, model string
		// where the body carries temperature and the longest reply
		temp, maxTokens []string
	}{
		{"openai", "gpt-5", []string{"temperature"}, []string{"max_output_tokens"}},
		{"chatcompletion", "gpt-5", []string{"temperature"}, []string{"max_tokens"}},
		{"claude", "claude-sonnet-4-5", []string{"temperature"}, []string{"max_tokens"}},
		{"gemini", "gemini-2.5-flash", []string{"generationConfig", "temperature"}, []string{"generationConfig", "maxOutputTokens"}},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			yaml := fmt.Sprintf("agent:\n  id: a\n  backend:\n    type: %s\n    model: %s\n    api_key: k\n    base_url: %s\n    temperature: \"0.5\"\n    max_tokens: \"1200\"\n",
				tt.typ, tt.model, srv.BaseURL(tt.typ))
			cfg, _, err := configs.LoadBytes("p.yaml", []byte(yaml), configs.LoadOptions{BaseDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			b, err := New(cfg.Agents[0].Backend, Options{MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			before := len(srv.Requests())
			if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hello"}}}, nil); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			var body map[string]any
			if err := json.Unmarshal(reqs[before].Body, &body); err != nil {
				t.Fatal(err)
			}
			if v := dig(body, tt.temp); v != 0.5 {
				t.Errorf("%s = %#v, want the number 0.5\nbody %s", strings.Join(tt.temp, "."), v, reqs[before].Body)
			}
			if v := dig(body, tt.maxTokens); v != 1200.0 {
				t.Errorf("%s = %#v, want the number 1200\nbody %s", strings.Join(tt.maxTokens, "."), v, reqs[before].Body)
			}
		})
	}
}

func dig(m map[string]any, path []string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// A backend built in code from a value of the wrong type refuses to start, naming the key, as
// validation does for a loaded config: nothing reaches the provider.
func TestParamsWrongValueRefused(t *testing.T) {
	srv := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply { return fakeprovider.Reply{Text: "ok"} })
	defer srv.Close()
	for _, typ := range []string{"openai", "chatcompletion", "claude", "gemini"} {
		t.Run(typ, func(t *testing.T) {
			_, err := New(configs.Backend{Type: typ, Model: "m", APIKey: "k", BaseURL: srv.BaseURL(typ), Extra: map[string]any{"temperature": "hot"}}, Options{MaxRetries: -1})
			if err == nil || !strings.Contains(err.Error(), `temperature: "hot" is not a number`) {
				t.Errorf("err = %v", err)
			}
		})
	}
	if n := srv.Count(); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
}
