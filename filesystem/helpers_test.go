package filesystem

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// TestMain lets the test binary act as the command sandbox helper (execute_command re-executes
// os.Executable(), i.e. this binary, with the helper marker).
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}

// env is a realistic layout in a temp dir:
//
//	ws/                    the agent's workspace
//	temp/agent2/notes.md   another agent's snapshot (temp workspace, read-only)
//	project/               a context path (write for the final agent) with
//	  index.html styles.css  golden/expected.txt (protected)  .git/HEAD  .env
//	single/config.yaml     a single-file context path (write), next to single/sibling.txt
//	outside/secret.txt     not managed at all
type env struct {
	t                                 testing.TB
	base, ws, temp, proj, single, out string
	massgen, trash                    string
	ts                                *Toolset
	pol                               *permissions.Policy
	role                              permissions.Role
}

type envOpt func(*permissions.Spec, *ToolsetOptions)

func newEnv(t testing.TB, role permissions.Role, opts ...envOpt) *env {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, base: base, role: role,
		ws: filepath.Join(base, "ws"), temp: filepath.Join(base, "temp"), proj: filepath.Join(base, "project"),
		single: filepath.Join(base, "single"), out: filepath.Join(base, "outside"), massgen: filepath.Join(base, ".massgen")}
	e.trash = filepath.Join(e.massgen, "trash", "run1")
	for _, d := range []string{e.ws, e.temp} {
		mkdir(t, d)
	}
	write(t, filepath.Join(e.temp, "agent2", "notes.md"), "agent2 notes\n")
	write(t, filepath.Join(e.proj, "index.html"), "<h1>hi</h1>\n")
	write(t, filepath.Join(e.proj, "styles.css"), "body { color: red; }\n")
	write(t, filepath.Join(e.proj, "golden", "expected.txt"), "golden\n")
	write(t, filepath.Join(e.proj, ".git", "HEAD"), "ref: main\n")
	write(t, filepath.Join(e.proj, ".env"), "KEY=1\n")
	write(t, filepath.Join(e.single, "config.yaml"), "a: 1\n")
	write(t, filepath.Join(e.single, "sibling.txt"), "sibling secret\n")
	write(t, filepath.Join(e.out, "secret.txt"), "outside secret\n")
	spec := permissions.Spec{
		Agent: "agent_a", Role: role, Workspace: e.ws, TempWorkspaces: []string{e.temp},
		ContextPaths: []permissions.ContextPath{
			{Path: e.proj, Write: true, Protected: []string{filepath.Join(e.proj, "golden")}},
			{Path: filepath.Join(e.single, "config.yaml"), Write: true},
		},
		Sandboxed: true,
	}
	to := ToolsetOptions{TrashDir: e.trash, EnforceReadBeforeDelete: true}
	for _, o := range opts {
		o(&spec, &to)
	}
	pol, err := permissions.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	e.pol = pol
	to.Guard = guard.New(pol, guard.Options{})
	e.ts, err = NewToolset(to)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mkdir(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, p, s string) {
	t.Helper()
	mkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// call runs a tool and decodes its JSON result.
func (e *env) call(name string, args map[string]any) (map[string]any, Result) {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	res := e.ts.Call(context.Background(), name, raw)
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Content), &m); err != nil {
		e.t.Fatalf("%s: result is not a JSON object: %q", name, res.Content)
	}
	return m, res
}

// ok runs a tool that must succeed.
func (e *env) ok(name string, args map[string]any) map[string]any {
	e.t.Helper()
	m, res := e.call(name, args)
	if res.IsError {
		e.t.Fatalf("%s(%v) failed: %s", name, args, res.Content)
	}
	return m
}

// fail runs a tool that must fail, and checks the reason mentions want (case-insensitive).
func (e *env) fail(name string, args map[string]any, want string) map[string]any {
	e.t.Helper()
	m, res := e.call(name, args)
	if !res.IsError {
		e.t.Fatalf("%s(%v) succeeded, want an error containing %q: %s", name, args, want, res.Content)
	}
	if msg, _ := m["error"].(string); !strings.Contains(strings.ToLower(msg), strings.ToLower(want)) {
		e.t.Fatalf("%s(%v) error %q does not mention %q", name, args, msg, want)
	}
	return m
}

func strs(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
