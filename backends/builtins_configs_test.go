package backends

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen/configs"
)

// fakeProviders answers every protocol by path, with a complete reply saying "ok".
func fakeProviders(t *testing.T, w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/chat/completions"):
		chatStream(startWireSSE(t, w), []string{"ok"}, nil)
	case strings.HasSuffix(p, "/responses"):
		responsesStream(startWireSSE(t, w), []string{"ok"}, nil, false)
	case strings.HasSuffix(p, "/v1/messages"):
		anthropicScript{
			{"message_start", msgStart},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`},
			{"message_stop", `{"type":"message_stop"}`},
		}.play(w)
	case strings.Contains(p, ":streamGenerateContent"):
		geminiScript{`{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}]}`}.play(w)
	default:
		t.Errorf("unexpected request %s", r.URL)
		w.WriteHeader(http.StatusNotFound)
	}
}

// The backend sections of MassGen's configs (../shared/massgen-configs) that use provider
// tools, verbatim: each produces the request MassGen would send for it.
func TestMassGenConfigSectionsProviderTools(t *testing.T) {
	tests := []struct {
		file    string
		section string
		// check inspects the request body (tools are always offered, as in a run).
		check func(t *testing.T, r wireRequest, body map[string]any)
	}{
		{"basic/multi/fifty_gemini_agents.yaml",
			`{type: "gemini", model: "gemini-2.5-flash", enable_web_search: true, enable_code_execution: true, temperature: 0.3}`,
			func(t *testing.T, r wireRequest, body map[string]any) {
				decls := mustJSON(t, wireDig(body, "tools", 0, "functionDeclarations"))
				if !strings.Contains(decls, `"name":"google_search"`) || !strings.Contains(decls, `"name":"code_execution"`) {
					t.Errorf("built-in tools not offered as functions: %s", decls)
				}
				if wireDig(body, "generationConfig", "temperature") != 0.3 {
					t.Errorf("generationConfig = %s", mustJSON(t, body["generationConfig"]))
				}
			}},
		{"basic/multi/three_agents_default.yaml",
			"type: \"gemini\"\nmodel: \"gemini-2.5-flash\"\nenable_web_search: true\n",
			func(t *testing.T, r wireRequest, body map[string]any) {
				decls := mustJSON(t, wireDig(body, "tools", 0, "functionDeclarations"))
				if !strings.Contains(decls, `"name":"google_search"`) || strings.Contains(decls, `"name":"code_execution"`) {
					t.Errorf("function declarations = %s", decls)
				}
			}},
		{"(a Gemini 3 model)",
			"type: gemini\nmodel: gemini-3-pro-preview\nenable_web_search: true\nenable_code_execution: true\n",
			func(t *testing.T, r wireRequest, body map[string]any) {
				if got := mustJSON(t, body["tools"]); !strings.Contains(got, `{"googleSearch":{}},{"codeExecution":{}}`) || wireDig(body, "toolConfig", "includeServerSideToolInvocations") != true {
					t.Errorf("tools = %s, toolConfig = %s", got, mustJSON(t, body["toolConfig"]))
				}
			}},
		{"basic/multi/gemini_4o_claude.yaml",
			"type: \"claude\"\nmodel: \"claude-3-5-haiku-20241022\"\nenable_web_search: true\nenable_code_execution: true\n",
			func(t *testing.T, r wireRequest, body map[string]any) {
				if r.URL.String() != "https://api.anthropic.com/v1/messages?beta=true" || r.Header.Get("anthropic-beta") != "code-execution-2025-05-22" {
					t.Errorf("URL %s, anthropic-beta %q", r.URL, r.Header.Get("anthropic-beta"))
				}
				if got := mustJSON(t, body["tools"].([]any)[:2]); got != `[{"name":"web_search","type":"web_search_20250305"},{"name":"code_execution","type":"code_execution_20250522"}]` {
					t.Errorf("server tools = %s", got)
				}
			}},
		{"providers/others/grok_single_agent.yaml",
			"type: \"grok\"\nmodel: \"grok-3-mini\"\nenable_web_search: false\nextra_body:\n    search_parameters:\n       mode: \"auto\"                 # Search strategy (see Grok API docs for valid values)\n       return_citations: true       # Include search result citations\n       max_search_results: 3        # Max number of search results to return\n",
			func(t *testing.T, r wireRequest, body map[string]any) {
				if got := mustJSON(t, body["search_parameters"]); got != `{"max_search_results":3,"mode":"auto","return_citations":true}` {
					t.Errorf("search_parameters = %s", got)
				}
			}},
		{"basic/multi/three_agents_default.yaml",
			"type: \"grok\"\nmodel: \"grok-4-fast\"\nenable_web_search: true\n",
			func(t *testing.T, r wireRequest, body map[string]any) {
				if r.URL.String() != "https://api.x.ai/v1/chat/completions" || mustJSON(t, body["search_parameters"]) != `{"mode":"auto","return_citations":true}` {
					t.Errorf("URL %s, search_parameters = %s", r.URL, mustJSON(t, body["search_parameters"]))
				}
			}},
		{"basic/multi/three_agents_default.yaml",
			"type: \"openai\"\nmodel: \"gpt-5-nano\"\ntext:\n  verbosity: \"medium\"\nreasoning:\n  effort: \"low\"\n  summary: \"auto\"\nenable_web_search: true\nenable_code_interpreter: true\n",
			func(t *testing.T, r wireRequest, body map[string]any) {
				var types []string
				for _, tool := range body["tools"].([]any) {
					types = append(types, fmt.Sprint(wireDig(tool, "type")))
				}
				if strings.Join(types, " ") != "function web_search code_interpreter" {
					t.Errorf("tool types = %v", types)
				}
			}},
	}
	env := wireEnv(map[string]string{"OPENAI_API_KEY": "sk", "ANTHROPIC_API_KEY": "sk-ant", "GEMINI_API_KEY": "g", "XAI_API_KEY": "xai"})
	for _, tt := range tests {
		t.Run(tt.file+"/"+strings.SplitN(tt.section, "\n", 3)[0], func(t *testing.T) {
			var cfg configs.Backend
			if err := yaml.Unmarshal([]byte(tt.section), &cfg); err != nil {
				t.Fatal(err)
			}
			ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) { fakeProviders(t, w, r) })
			b, err := New(cfg, Options{HTTPClient: ws.redirectClient(), LookupEnv: env})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "task"}}, Tools: []ToolSpec{testWriteFileTool}}, nil)
			if err != nil || resp.Text != "ok" {
				t.Fatalf("resp = %+v, err = %v", resp, err)
			}
			r := ws.requests()[0]
			body := r.JSON(t)
			for _, k := range []string{"enable_web_search", "enable_code_execution", "enable_code_interpreter", "extra_body"} {
				if _, ok := body[k]; ok {
					t.Errorf("MassGen key %s sent to the API", k)
				}
			}
			tt.check(t, r, body)
		})
	}
}
