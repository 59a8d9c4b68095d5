package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
)

// The real coding-agent CLIs (claude, codex and gemini from npm, installed into .cache/npm by
// `make test-deps`) as two agents of a real massgen run, each CLI pointed at a scripted
// provider speaking its protocol. The agents write in their workspaces, try to write into the
// context path during coordination (denied: it is read-only until the final presentation),
// answer, vote, and the winner delivers into the context path. Skipped, saying so, when a CLI
// is not installed; the fake claude (claudecode_test.go) covers the rest.

type realCLICase struct {
	typ, program, model, protocol string
	// name and ns are how the CLI offers massgen's tool to its model.
	name func(tool string) (string, string)
}

var realCLICases = []realCLICase{
	{"claude_code", "claude", "claude-sonnet-4-5", "claude", func(n string) (string, string) { return "mcp__massgen__" + n, "" }},
	{"codex", "codex", "gpt-5.5", "openai", func(n string) (string, string) { return n, "mcp__massgen" }},
	{"gemini_cli", "gemini", "gemini-2.5-flash", "gemini", func(n string) (string, string) { return "mcp_massgen_" + n, "" }},
}

// realCLIBin is the folder holding the real program, or "" when it is not installed.
func realCLIBin(program string) string {
	bin, _ := filepath.Abs(filepath.Join("..", ".cache", "npm", "node_modules", ".bin"))
	if _, err := os.Stat(filepath.Join(bin, program)); err == nil {
		return bin
	}
	if p, err := exec.LookPath(program); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// tool finds massgen's tool as c's CLI offers it.
func (c realCLICase) tool(r fakeprovider.Request, tool string) (fakeprovider.Tool, bool) {
	want, ns := c.name(tool)
	for _, t := range r.Tools {
		if t.Name == want && t.Namespace == ns {
			return t, true
		}
	}
	return fakeprovider.Tool{}, false
}

func (c realCLICase) call(tool string, args map[string]any) fakeprovider.Call {
	n, ns := c.name(tool)
	return fakeprovider.Call{Name: n, Namespace: ns, Args: args}
}

// model is the scripted model of both agents.
func (c realCLICase) script(proj string) fakeprovider.Model {
	return func(r fakeprovider.Request) fakeprovider.Reply {
		text := r.Text()
		if v, ok := c.tool(r, "vote"); ok && len(v.Enum) > 0 {
			return fakeprovider.Reply{Calls: []fakeprovider.Call{c.call("vote", map[string]any{"agent_id": v.Enum[0], "reason": "it is right"})}}
		}
		if _, ok := c.tool(r, "new_answer"); ok {
			switch {
			case strings.Contains(text, "index.html") && strings.Contains(text, "enied"):
				return fakeprovider.Reply{Calls: []fakeprovider.Call{c.call("new_answer", map[string]any{"content": "Answer: 42"})}}
			case strings.Contains(text, "notes.txt"):
				return fakeprovider.Reply{Calls: []fakeprovider.Call{c.call("write_file", map[string]any{"path": filepath.Join(proj, "index.html"), "content": "hacked"})}}
			default:
				return fakeprovider.Reply{Text: "Taking notes.", Calls: []fakeprovider.Call{c.call("write_file", map[string]any{"path": "notes.txt", "content": "draft"})}}
			}
		}
		if _, ok := c.tool(r, "write_file"); ok { // the final presentation
			if strings.Contains(text, "result.txt") {
				return fakeprovider.Reply{Text: "Final: 42"}
			}
			return fakeprovider.Reply{Calls: []fakeprovider.Call{c.call("write_file", map[string]any{"path": filepath.Join(proj, "result.txt"), "content": "delivered"})}}
		}
		return fakeprovider.Reply{Text: `{"reasoning":"simple","model_choice":"flash"}`} // a CLI's own side request
	}
}

func TestRealCLIAgentsDeliver(t *testing.T) {
	for _, c := range realCLICases {
		t.Run(c.typ, func(t *testing.T) {
			bin := realCLIBin(c.program)
			if bin == "" {
				t.Skipf("the real %s CLI is not installed (run make test-deps, or put it on PATH); the fake claude covers the rest", c.program)
			}
			dir := t.TempDir()
			proj := project(t, dir)
			var mu sync.Mutex
			var offered []string
			model := c.script(proj)
			fp := fakeprovider.New(func(r fakeprovider.Request) fakeprovider.Reply {
				mu.Lock()
				for _, tl := range r.Tools {
					offered = append(offered, strings.TrimPrefix(tl.Namespace+"."+tl.Name, "."))
				}
				mu.Unlock()
				return model(r)
			})
			defer fp.Close()
			writeFile(t, filepath.Join(dir, "cfg.yaml"), fmt.Sprintf(`agents:
  - id: alpha
    backend: {type: %[1]s, cwd: workspace1, model: %[2]s, base_url: %[3]s, api_key: sk-test}
  - id: beta
    backend: {type: %[1]s, cwd: workspace2, model: %[2]s, base_url: %[3]s, api_key: sk-test}
orchestrator:
  timeout_seconds: 400
  context_paths:
    - path: %[4]s
      permission: write
`, c.typ, c.model, fp.BaseURL(c.protocol), proj))
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "--config", "cfg.yaml", "--yes", "--display", "plain", "What is 6*7?")
			cmd.Dir = dir
			home, tmp := t.TempDir(), t.TempDir()
			cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp,
				"XDG_CONFIG_HOME=" + xdgConfig, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("massgen: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
			}
			if strings.TrimSpace(out.String()) != "Final: 42" {
				t.Errorf("stdout %q, want the final answer", out.String())
			}
			if got := readFile(t, filepath.Join(proj, "index.html")); got != "original index" {
				t.Errorf("index.html = %q: a coordination write into the context path went through", got)
			}
			if got := readFile(t, filepath.Join(proj, "result.txt")); got != "delivered" {
				t.Errorf("result.txt = %q, want the final agent's delivery", got)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, o := range offered {
				if !strings.Contains(o, "massgen") && !strings.HasPrefix(o, "list_mcp_resource") && o != "read_mcp_resource" && o != "request_user_input" {
					t.Errorf("the %s CLI offered its model %s", c.program, o)
				}
			}
			// The agents' private folders went with the run.
			if left, _ := filepath.Glob(filepath.Join(tmp, "massgen-cli-*")); len(left) > 0 {
				t.Errorf("private folders left after the run: %v", left)
			}
		})
	}
}
