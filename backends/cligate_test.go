package backends

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
)

// The gate passes a request that offers only massgen's tools, with the provider's key in place
// of its own token, and refuses one that offers anything else, before it reaches the provider.
func TestCLIGate(t *testing.T) {
	tools := []ToolSpec{ccWriteSpec, ccAnswerSpec}
	tests := []struct {
		name, protocol, path, body string
		foreign                    []string // nil: forwarded
	}{
		{"codex namespace", "responses", "/responses",
			`{"model":"m","input":[{"type":"message","role":"user","content":"hi"}],"tools":[{"type":"namespace","name":"mcp__massgen","tools":[{"type":"function","name":"write_file"},{"type":"function","name":"new_answer"}]},{"type":"function","name":"list_mcp_resources"}]}`, nil},
		{"codex flat names", "responses", "/responses",
			`{"model":"m","input":"hi","tools":[{"type":"function","name":"mcp__massgen__write_file"}]}`, nil},
		{"codex shell", "responses", "/responses",
			`{"model":"m","input":"hi","tools":[{"type":"function","name":"exec_command"},{"type":"function","name":"mcp__massgen__write_file"}]}`, []string{"exec_command"}},
		{"codex tools in the input", "responses", "/responses",
			`{"model":"m","input":[{"type":"additional_tools","tools":[{"type":"namespace","name":"functions","tools":[{"type":"custom","name":"exec"}]}]}]}`, []string{"functions"}},
		{"codex web search and patch", "responses", "/responses",
			`{"model":"m","input":"hi","tools":[{"type":"web_search"},{"type":"custom","name":"apply_patch"}]}`, []string{"apply_patch", "web_search"}},
		{"codex unknown tool of massgen's namespace", "responses", "/responses",
			`{"model":"m","input":"hi","tools":[{"type":"namespace","name":"mcp__massgen","tools":[{"type":"function","name":"delete_everything"}]}]}`, []string{"mcp__massgen.delete_everything"}},
		{"codex side request without tools", "responses", "/responses", `{"model":"m","input":"title this"}`, nil},
		{"gemini", "gemini", "/v1beta/models/g:streamGenerateContent",
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"mcp_massgen_write_file"},{"name":"mcp_massgen_new_answer"}]}]}`, nil},
		{"gemini built-ins", "gemini", "/v1beta/models/g:streamGenerateContent",
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"},{"name":"mcp_massgen_write_file"}]},{"googleSearch":{}}]}`, []string{"googleSearch", "run_shell_command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply { return fakeprovider.Reply{Text: "ok"} })
			defer fp.Close()
			up := fp.URL + "/v1"
			if tt.protocol == "gemini" {
				up = fp.URL
			}
			g, err := newCLIGate(cliGateConfig{protocol: tt.protocol, upstream: up, key: "sk-provider"}, tools, zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			req, _ := http.NewRequest("POST", g.url+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+g.token)
			req.Header.Set("X-Goog-Api-Key", g.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tt.foreign == nil {
				if resp.StatusCode != 200 || len(fp.Requests()) != 1 {
					t.Fatalf("status %d (%s), %d requests forwarded", resp.StatusCode, body, len(fp.Requests()))
				}
				h := fp.Requests()[0].Header
				if h.Get("Authorization") != "Bearer sk-provider" && h.Get("X-Goog-Api-Key") != "sk-provider" {
					t.Errorf("forwarded with %v, want the provider's key", h)
				}
				if strings.Contains(h.Get("Authorization")+h.Get("X-Goog-Api-Key"), g.token) {
					t.Errorf("the gate's token was forwarded")
				}
				select {
				case err := <-g.refused:
					t.Fatalf("refused: %v", err)
				default:
				}
				return
			}
			if resp.StatusCode != 400 || len(fp.Requests()) != 0 {
				t.Fatalf("status %d, %d requests forwarded: want refused", resp.StatusCode, len(fp.Requests()))
			}
			select {
			case err := <-g.refused:
				if !errors.Is(err, ErrCLIOwnTools) || !strings.Contains(err.Error(), strings.Join(tt.foreign, ", ")) {
					t.Fatalf("err = %v, want ErrCLIOwnTools naming %v", err, tt.foreign)
				}
			default:
				t.Fatal("the backend was not told")
			}
		})
	}
}

// Only the CLI the gate was made for gets through (the token it was given), and no WebSocket.
func TestCLIGateRefusesStrangers(t *testing.T) {
	fp := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply { return fakeprovider.Reply{Text: "ok"} })
	defer fp.Close()
	g, err := newCLIGate(cliGateConfig{protocol: "responses", upstream: fp.URL + "/v1", key: "sk-provider"}, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, h := range []http.Header{
		{},
		{"Authorization": {"Bearer sk-provider"}},
		{"Authorization": {"Bearer " + g.token}, "Upgrade": {"websocket"}, "Connection": {"Upgrade"}},
	} {
		req, _ := http.NewRequest("POST", g.url+"/responses", bytes.NewReader([]byte(`{"input":"hi"}`)))
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("headers %v got through", h)
		}
	}
	if n := len(fp.Requests()); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
}

// The stray calls codex answers itself are found in the conversation it sends.
func TestCLIGateFindsStrayCalls(t *testing.T) {
	g, err := newCLIGate(cliGateConfig{protocol: "responses", upstream: "http://127.0.0.1:1/v1"}, []ToolSpec{ccWriteSpec}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.findStrays([]byte(`{"input":[{"type":"function_call","name":"exec_command","call_id":"c1"},{"type":"function_call","name":"write_file","namespace":"mcp__massgen","call_id":"c2"},{"type":"function_call","name":"mcp__massgen__write_file","call_id":"c3"},{"type":"function_call","name":"request_user_input","call_id":"c4"},{"type":"function_call","name":"write_file","call_id":"c5"},{"type":"custom_tool_call","name":"apply_patch","call_id":"c6"}]}`))
	var got []string
	for len(g.strays) > 0 {
		s := <-g.strays
		got = append(got, s.id+":"+s.name)
	}
	if !slices.Equal(got, []string{"c1:exec_command", "c6:apply_patch"}) {
		t.Fatalf("strays %v", got)
	}
}

// copilot and antigravity_cli are refused with a message naming what is available; each CLI
// backend without its CLI says how to install it.
func TestCLIBackendTypes(t *testing.T) {
	for _, typ := range []string{"copilot", "antigravity_cli"} {
		_, err := New(configs.Backend{Type: typ}, Options{})
		if err == nil || !strings.Contains(err.Error(), "claude_code, codex and gemini_cli") || !strings.Contains(err.Error(), "openai") {
			t.Errorf("%s: err = %v", typ, err)
		}
		if err := CheckKey(configs.Backend{Type: typ}, nil); err == nil {
			t.Errorf("%s: CheckKey accepted it", typ)
		}
	}
	t.Setenv("PATH", t.TempDir())
	for typ, want := range map[string]error{"claude_code": ErrClaudeCodeMissing, "codex": ErrCodexMissing, "gemini_cli": ErrGeminiCLIMissing} {
		b, err := New(configs.Backend{Type: typ, BaseURL: "http://127.0.0.1:9/v1"}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil); !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", typ, err, want)
		}
	}
	// codex and gemini_cli need their provider's key (massgen sends it), unless the server is
	// on this machine.
	none := func(string) (string, bool) { return "", false }
	for _, typ := range []string{"codex", "gemini_cli"} {
		if err := CheckKey(configs.Backend{Type: typ}, none); err == nil {
			t.Errorf("%s without a key passed", typ)
		}
		if err := CheckKey(configs.Backend{Type: typ, BaseURL: "http://localhost:8080"}, none); err != nil {
			t.Errorf("%s on localhost: %v", typ, err)
		}
	}
}

// BenchmarkCLIGateRequest: one model request of a codex agent through the gate (read, tools
// checked, forwarded to the provider, the reply streamed back): what the gate adds to every
// model request of codex and gemini_cli.
func BenchmarkCLIGateRequest(b *testing.B) {
	fp := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply { return fakeprovider.Reply{Text: "ok"} })
	defer fp.Close()
	g, err := newCLIGate(cliGateConfig{protocol: "responses", upstream: fp.URL + "/v1", key: "sk"}, []ToolSpec{ccWriteSpec, ccAnswerSpec}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	body := []byte(`{"model":"m","input":[{"type":"message","role":"user","content":"` + strings.Repeat("context ", 2000) + `"}],"tools":[{"type":"namespace","name":"mcp__massgen","tools":[{"type":"function","name":"write_file"},{"type":"function","name":"new_answer"}]}]}`)
	for _, via := range []struct{ name, url string }{{"direct", fp.URL + "/v1"}, {"gate", g.url}} {
		b.Run(via.name, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest("POST", via.url+"/responses", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+g.token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.Status)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
		})
	}
}
