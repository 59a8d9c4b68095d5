package filesystem

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// fakeCustom records the calls that reach it and the sandbox they are handed.
type fakeCustom struct {
	mu    sync.Mutex
	calls []string
	sbs   []CommandSandbox
}

func (f *fakeCustom) Tools() []Tool {
	return []Tool{
		{Name: "custom_tool__add", Description: "adds", Parameters: map[string]any{"type": "object"}},
		{Name: "custom_tool__save_report", Description: "saves", Parameters: map[string]any{"type": "object"}},
	}
}

func (f *fakeCustom) Call(ctx context.Context, name string, args map[string]any, sb CommandSandbox) Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.sbs = append(f.calls, name), append(f.sbs, sb)
	return Result{Content: `{"result":"ok"}`}
}

func withCustom(c Custom, hide ...string) envOpt {
	return func(_ *permissions.Spec, o *ToolsetOptions) {
		o.Custom = c
		o.Hide = func(server, tool string) bool { return server == "" && slices.Contains(hide, tool) }
	}
}

// Custom tools are offered under their own names and reach the provider only through the
// permission check, with the agent's command sandbox for the role.
func TestCustomToolsGoThroughTheGuard(t *testing.T) {
	fc := &fakeCustom{}
	e := newEnv(t, permissions.Coordination, withCustom(fc))
	var names []string
	for _, tl := range e.ts.Tools() {
		names = append(names, tl.Name)
		if tl.Name == "custom_tool__add" && !strings.Contains(tl.Description, "DIRECTORY ACCESS") {
			t.Errorf("custom tool description lacks the directory limits: %q", tl.Description)
		}
	}
	if !slices.Contains(names, "custom_tool__add") || !slices.Contains(names, "custom_tool__save_report") {
		t.Fatalf("tools %v lack the custom tools", names)
	}
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		allowed bool
	}{
		{"no path", "custom_tool__add", map[string]any{"x": 1}, true},
		{"readable path", "custom_tool__add", map[string]any{"path": filepath.Join(e.proj, "index.html")}, true},
		{"path outside every root", "custom_tool__add", map[string]any{"path": filepath.Join(e.out, "secret.txt")}, false},
		{"write into a context path while coordinating", "custom_tool__save_report", map[string]any{"path": filepath.Join(e.proj, "r.md"), "content": "x"}, false},
		{"write into the workspace", "custom_tool__save_report", map[string]any{"path": filepath.Join(e.ws, "r.md"), "content": "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(fc.calls)
			_, res := e.call(tt.tool, tt.args)
			reached := len(fc.calls) > before
			if reached != tt.allowed || res.IsError == tt.allowed {
				t.Fatalf("allowed=%v: reached the provider %v, result %+v", tt.allowed, reached, res)
			}
			if !tt.allowed && res.Denied == nil {
				t.Errorf("a refused call carries no decision: %+v", res)
			}
		})
	}
	sb := fc.sbs[0]
	if sb.Workspace != e.ws || !slices.Contains(sb.Policy.Write, e.ws) || slices.Contains(sb.Policy.Write, e.proj) {
		t.Errorf("the provider got sandbox %+v, want the coordination policy (workspace writable, project not)", sb)
	}
	if !e.ts.Cancellable("custom_tool__add") {
		t.Error("a custom tool call must be cancelled with the run, like a command")
	}
}

// A custom tool left out by exclude_tools is neither offered nor run; in the final role the
// sandbox the provider gets lets it write the context path.
func TestCustomToolsHiddenAndFinalRole(t *testing.T) {
	fc := &fakeCustom{}
	e := newEnv(t, permissions.Final, withCustom(fc, "custom_tool__save_report"))
	for _, tl := range e.ts.Tools() {
		if tl.Name == "custom_tool__save_report" {
			t.Fatal("an excluded custom tool is offered")
		}
	}
	if _, res := e.call("custom_tool__save_report", map[string]any{"content": "x"}); !res.IsError || len(fc.calls) != 0 {
		t.Fatalf("an excluded custom tool ran: %+v", res)
	}
	if _, res := e.call("custom_tool__add", nil); res.IsError {
		t.Fatalf("custom_tool__add: %+v", res)
	}
	if !slices.Contains(fc.sbs[0].Policy.Write, e.proj) {
		t.Errorf("final role: the provider's sandbox cannot write the context path: %+v", fc.sbs[0].Policy)
	}
}

// A provider whose names would shadow massgen's tools is refused.
func TestCustomToolNamesCannotShadow(t *testing.T) {
	pol, err := permissions.New(permissions.Spec{Agent: "a", Role: permissions.Coordination, Workspace: t.TempDir(), Sandboxed: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"write_file", "mcp__fs__read_file"} {
		_, err := NewToolset(ToolsetOptions{Guard: guard.New(pol, guard.Options{}), Custom: namedCustom(name)})
		if err == nil {
			t.Errorf("a custom tool named %s was accepted", name)
		}
	}
}

type namedCustom string

func (n namedCustom) Tools() []Tool { return []Tool{{Name: string(n)}} }
func (n namedCustom) Call(context.Context, string, map[string]any, CommandSandbox) Result {
	return Result{}
}
