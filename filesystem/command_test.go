package filesystem

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/permissions"
)

func sandboxModes(t *testing.T) []sandbox.Mode {
	t.Helper()
	var ms []sandbox.Mode
	if sandbox.LandlockABI() >= 3 {
		ms = append(ms, sandbox.ModeLandlock)
	}
	if sandbox.BubblewrapPath() != "" {
		ms = append(ms, sandbox.ModeBubblewrap)
	}
	if sandbox.NamespacesError() == nil {
		ms = append(ms, sandbox.ModeNamespaces)
	}
	if len(ms) == 0 {
		t.Skip("SANDBOX TESTS SKIPPED: neither Landlock (ABI >= 3) nor bubblewrap is available on this machine")
	}
	return ms
}

func withSandbox(mode sandbox.Mode) envOpt {
	return func(_ *permissions.Spec, o *ToolsetOptions) { o.Sandbox = mode }
}

func TestExecuteCommand(t *testing.T) {
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			t.Run("coordination", func(t *testing.T) {
				e := newEnv(t, permissions.Coordination, withSandbox(mode))
				m := e.ok("execute_command", map[string]any{"command": "cat " + filepath.Join(e.proj, "index.html") + " > copy.html && echo done"})
				if m["stdout"] != "done\n" || m["sandbox"] != string(mode) || read(t, filepath.Join(e.ws, "copy.html")) != "<h1>hi</h1>\n" {
					t.Fatalf("result = %v", m)
				}
				// The context path is read-only during coordination, whatever the command does.
				e.fail("execute_command", map[string]any{"command": "echo pwned > " + filepath.Join(e.proj, "index.html")}, "")
				m, _ = e.call("execute_command", map[string]any{"command": fmt.Sprintf(`python3 -c "open('%s','w').write('pwned')"`, filepath.Join(e.proj, "index.html"))})
				if read(t, filepath.Join(e.proj, "index.html")) != "<h1>hi</h1>\n" {
					t.Fatalf("read-only context path written by a command: %v", m)
				}
				e.call("execute_command", map[string]any{"command": "cd ..; echo pwned > escaped.txt"})
				if exists(filepath.Join(e.base, "escaped.txt")) {
					t.Fatal("cd .. escape")
				}
				e.call("execute_command", map[string]any{"command": "printf 'cat %s\\n' > s.sh; sh s.sh", "work_dir": "."})
				m, _ = e.call("execute_command", map[string]any{"command": "sh s.sh"})
				if strings.Contains(fmt.Sprint(m), "outside secret") {
					t.Fatal("script read outside")
				}
				m, _ = e.call("execute_command", map[string]any{"command": "cat " + filepath.Join(e.single, "sibling.txt")})
				if strings.Contains(fmt.Sprint(m), "sibling secret") {
					t.Fatal("command read the sibling of a single-file context path")
				}
				e.ok("execute_command", map[string]any{"command": "cat " + filepath.Join(e.single, "config.yaml")})
				e.ok("execute_command", map[string]any{"command": "ls", "work_dir": filepath.Join(e.temp, "agent2")})
			})
			t.Run("final", func(t *testing.T) {
				e := newEnv(t, permissions.Final, withSandbox(mode))
				mkdir(t, filepath.Join(e.proj, "src"))
				e.ok("execute_command", map[string]any{"command": "echo new-rule >> styles.css && mkdir -p src/lib && echo x > src/lib/a.js", "work_dir": e.proj})
				if !strings.Contains(read(t, filepath.Join(e.proj, "styles.css")), "new-rule") {
					t.Fatal("final agent could not write its context path")
				}
				for _, c := range []string{"echo pwned > golden/expected.txt", "echo pwned > .git/HEAD", "rm -f .env", "echo x > " + filepath.Join(e.temp, "agent2", "notes.md")} {
					e.call("execute_command", map[string]any{"command": c, "work_dir": e.proj})
				}
				if read(t, filepath.Join(e.proj, "golden", "expected.txt")) != "golden\n" || read(t, filepath.Join(e.proj, ".git", "HEAD")) != "ref: main\n" ||
					!exists(filepath.Join(e.proj, ".env")) || read(t, filepath.Join(e.temp, "agent2", "notes.md")) != "agent2 notes\n" {
					t.Fatal("protected, system or temp files changed by a command")
				}
			})
		})
	}
}

// TestExecuteCommandCreatesAtTop: a final agent's command can create new entries at the top
// of a context path that also holds .git and protected paths under bubblewrap and the
// namespaces mode, which auto prefers (pure Landlock cannot express it: documented), while
// .git and the protected paths hold.
func TestExecuteCommandCreatesAtTop(t *testing.T) {
	var ms []sandbox.Mode
	if sandbox.BubblewrapPath() != "" {
		ms = append(ms, sandbox.ModeBubblewrap)
	}
	if sandbox.NamespacesError() == nil {
		ms = append(ms, sandbox.ModeNamespaces, sandbox.ModeAuto)
	}
	if len(ms) == 0 {
		t.Skip("neither bubblewrap nor user namespaces here: with Landlock alone new top-level entries next to .git cannot be created (documented)")
	}
	for _, mode := range ms {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, permissions.Final, withSandbox(mode))
			m := e.ok("execute_command", map[string]any{"command": "mkdir -p dist && echo ok > dist/out.txt && echo x > NEW.md && ls", "work_dir": e.proj})
			if m["sandbox"] == string(sandbox.ModeLandlock) || read(t, filepath.Join(e.proj, "dist", "out.txt")) != "ok\n" || !strings.Contains(fmt.Sprint(m["stdout"]), "NEW.md") {
				t.Fatalf("result = %v", m)
			}
			e.call("execute_command", map[string]any{"command": "echo pwned > golden/expected.txt; rm -rf .git; mv golden g2", "work_dir": e.proj})
			if read(t, filepath.Join(e.proj, "golden", "expected.txt")) != "golden\n" || !exists(filepath.Join(e.proj, ".git", "HEAD")) {
				t.Fatal("protected or system path changed")
			}
		})
	}
}

func TestExecuteCommandResult(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	m := e.fail("execute_command", map[string]any{"command": "echo out; echo err >&2; exit 3"}, "")
	if m["exit_code"].(float64) != 3 || m["stdout"] != "out\n" || m["stderr"] != "err\n" || m["success"] != false {
		t.Fatalf("result = %v", m)
	}
	m = e.fail("execute_command", map[string]any{"command": "sleep 30", "timeout": 1}, "")
	if m["timed_out"] != true {
		t.Fatalf("timeout = %v", m)
	}
	e.fail("execute_command", map[string]any{"command": "ls", "work_dir": e.out}, "")
}

func TestCommandSandboxNoneWarns(t *testing.T) {
	e := newEnv(t, permissions.Coordination, withSandbox(sandbox.ModeNone))
	m := e.ok("execute_command", map[string]any{"command": "echo hi"})
	if m["sandbox"] != "none" {
		t.Fatalf("sandbox = %v", m["sandbox"])
	}
}

// fakeExternal is an MCP server stand-in: it records what reaches it.
type fakeExternal struct {
	calls []string
	panic bool
}

func (f *fakeExternal) Tools() []Tool {
	return []Tool{
		{Name: "fetch_page", Description: "Fetch a URL.", Parameters: map[string]any{"type": "object"}},
		{Name: "write_note", Description: "Write a note file.", Parameters: map[string]any{"type": "object"}},
	}
}

func (f *fakeExternal) Call(ctx context.Context, name string, args map[string]any) Result {
	if f.panic {
		panic("server exploded")
	}
	f.calls = append(f.calls, name)
	b, _ := json.Marshal(map[string]any{"ok": true, "tool": name})
	return Result{Content: string(b)}
}

func TestExternalTools(t *testing.T) {
	fx := &fakeExternal{}
	e := newEnv(t, permissions.Coordination, func(_ *permissions.Spec, o *ToolsetOptions) {
		o.External = map[string]External{"web": fx}
	})
	names := map[string]Tool{}
	for _, tl := range e.ts.Tools() {
		names[tl.Name] = tl
	}
	if _, ok := names["mcp__web__fetch_page"]; !ok {
		t.Fatalf("external tool not offered with its prefix: %v", names)
	}
	if !names["mcp__web__write_note"].Write {
		t.Error("write_note not classified as a write tool")
	}
	e.ok("mcp__web__fetch_page", map[string]any{"url": "https://example.com"})
	e.ok("mcp__web__write_note", map[string]any{"path": filepath.Join(e.ws, "n.txt")})
	// The permission layer sees the path argument and refuses before the server is called.
	e.fail("mcp__web__write_note", map[string]any{"path": filepath.Join(e.proj, "n.txt")}, "")
	e.fail("mcp__web__write_note", map[string]any{"path": filepath.Join(e.out, "n.txt")}, "")
	if len(fx.calls) != 2 {
		t.Fatalf("server calls = %v", fx.calls)
	}
	fx.panic = true
	e.fail("mcp__web__fetch_page", map[string]any{"url": "https://example.com"}, "internal error")
}
