package configscmd

import (
	"os"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// entry returns the block `configs list` printed for a built-in.
func entry(t *testing.T, out, name string) string {
	t.Helper()
	for _, block := range strings.Split(out, "\n\n") {
		if strings.HasPrefix(block, "@examples/"+name+"  (") {
			return block
		}
	}
	t.Fatalf("no entry for %s in:\n%s", name, out)
	return ""
}

// configs list shows each built-in's description, agents and the keys it needs, and says which
// cannot run here and why, with the run's own checks.
func TestList(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want map[string]string // built-in -> its whole entry
	}{
		{"no keys", nil, map[string]string{
			"basic/multi/three_agents_default": `@examples/basic/multi/three_agents_default  (cannot run here)
    Gemini 2.5 Flash, GPT-5-nano and Grok 4 Fast with web search
    agents: gemini gemini-2.5-flash, openai gpt-5-nano, grok grok-4-fast
    keys:   GEMINI_API_KEY or GOOGLE_API_KEY (missing), OPENAI_API_KEY (missing), XAI_API_KEY (missing)
    why:    no GEMINI_API_KEY or GOOGLE_API_KEY; no OPENAI_API_KEY; no XAI_API_KEY`,
			"demo/two_agents_deliver": `@examples/demo/two_agents_deliver  (ready)
    Demo: two agents write files, answer, vote, and the winner delivers into a context path.
    agents: 2 × scripted
    keys:   none needed`,
		}},
		{"keys set", map[string]string{"GOOGLE_API_KEY": "k", "OPENAI_API_KEY": "k", "XAI_API_KEY": "k"}, map[string]string{
			"basic/multi/three_agents_default": `@examples/basic/multi/three_agents_default  (ready)
    Gemini 2.5 Flash, GPT-5-nano and Grok 4 Fast with web search
    agents: gemini gemini-2.5-flash, openai gpt-5-nano, grok grok-4-fast
    keys:   GEMINI_API_KEY or GOOGLE_API_KEY (set), OPENAI_API_KEY (set), XAI_API_KEY (set)`,
			"basic/multi/fifty_gemini_agents": `@examples/basic/multi/fifty_gemini_agents  (ready)
    Stress test: 50 Gemini agents (30 gemini-2.5-flash, 20 gemini-2.5-pro)
    agents: 30 × gemini gemini-2.5-flash, 20 × gemini gemini-2.5-pro
    keys:   GEMINI_API_KEY or GOOGLE_API_KEY (set)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			for k, v := range tt.env {
				e.env[k] = v
			}
			if err := listRun(&ListOptions{IO: e.f.IO, Loader: loader(e.f)}); err != nil {
				t.Fatal(err)
			}
			out := e.out.String()
			for name, want := range tt.want {
				if got := entry(t, out, name); got != want {
					t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
				}
			}
			// A backend type the key table refuses (claude_code until it is driven with massgen's
			// tools; then: its CLI is not on PATH here) is a reason, named.
			if cc := entry(t, out, "tools/filesystem/claude_code_single"); !strings.Contains(cc, "(cannot run here)") ||
				!strings.Contains(cc, "\n    why:    ") || !strings.Contains(cc[strings.Index(cc, "why:"):], "claude_code") {
				t.Errorf("claude_code_single:\n%s", cc)
			}
			if n := strings.Count(out, "\n@examples/") + 1; n != len(configs.Examples()) {
				t.Errorf("%d entries for %d built-ins", n, len(configs.Examples()))
			}
		})
	}
}

// A context path that does not exist here and an MCP command not on PATH are reasons too.
func TestListMissingFoldersAndCommands(t *testing.T) {
	e := newTestEnv(t)
	e.env["GEMINI_API_KEY"] = "k"
	cfgText := `agent:
  id: a
  backend:
    type: gemini
    model: gemini-2.5-flash
    cwd: ws
    mcp_servers: [{name: notes, command: massgen-test-no-such-command}]
orchestrator:
  context_paths: [{path: massgen/configs/resources/v0.0.21-example, permission: write}]
`
	opts := &ListOptions{IO: e.f.IO, Loader: func(string) (*configs.Config, []configs.Warning, error) {
		return configs.LoadBytes("x.yaml", []byte(cfgText), configs.LoadOptions{BaseDir: e.wd, LookupEnv: e.f.LookupEnv})
	}}
	got := describeExample(opts, "demo/two_agents_deliver")
	want := []string{
		`MCP server "notes": command "massgen-test-no-such-command" is not on PATH: the agent would run without its tools; install it or remove the server`,
		"context path " + e.wd + "/massgen/configs/resources/v0.0.21-example does not exist",
	}
	if strings.Join(got.why, "\n") != strings.Join(want, "\n") {
		t.Errorf("why:\n%s\nwant\n%s", strings.Join(got.why, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(e.wd + "/massgen"); !os.IsNotExist(err) {
		t.Errorf("listing created folders: %v", err)
	}
}
