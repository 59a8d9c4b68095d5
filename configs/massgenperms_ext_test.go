package configs_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/agentenv/permconfig"
	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// MassGen's read_file, write_file and command actions map onto the engine's tool classes, which
// name massgen's tools by their one declaration (filesystem.Builtins): a tool that reads a path is
// @read (a copy reads its source, edit_file's dry run shows the file), one that writes or
// deletes a path is @write, one that runs commands is @command; each class names no other tool.
func TestBackendPermissionToolLists(t *testing.T) {
	mapped := func(rule string) string {
		d := configs.MapBackendPermissions(&configs.BackendPermissions{Rules: configs.BackendRules{Deny: []string{rule}}}, filesystem.MassGenActions()).Deny
		if len(d) != 1 {
			t.Fatalf("%s maps to %q, want one rule", rule, d)
		}
		return strings.TrimSuffix(d[0], "(*)")
	}
	classes := map[string]string{"read": mapped("read_file"), "write": mapped("write_file"), "command": mapped("command")}
	for kind, class := range classes {
		if !slices.Contains(permissions.ToolClasses(), class) {
			t.Errorf("%s maps to %s, not one of the engine's classes %v", kind, class, permissions.ToolClasses())
		}
	}
	denied := func(class string, tool tooldecl.Tool) bool {
		pol, err := permissions.New(permissions.Spec{Agent: "a", Role: permissions.Final, Workspace: t.TempDir(),
			Deny: []string{class}, Tools: filesystem.Table(), Sandboxed: true})
		if err != nil {
			t.Fatal(err)
		}
		decl := tool.Decl()
		return pol.Decide(permissions.Request{Tool: tool.Name(), Decl: &decl}).Rule == permissions.RuleDenyRule
	}
	seen := map[string]int{}
	for _, tool := range filesystem.Builtins() {
		decl := tool.Decl()
		reads := slices.ContainsFunc(decl.Args, func(a toolargs.Arg) bool { return a.Access == toolargs.Read || a.ReadIf != "" })
		want := map[string]bool{
			"read":    !decl.Command && reads,
			"write":   !decl.Command && tool.Writes(),
			"command": decl.Command,
		}
		for kind, class := range classes {
			if got := denied(class, tool); got != want[kind] {
				t.Errorf("%s: %s names it %v, want %v", tool.Name(), class, got, want[kind])
			} else if got {
				seen[kind]++
			}
		}
	}
	for kind := range classes {
		if seen[kind] == 0 {
			t.Errorf("no built-in tool is in the %s class", kind)
		}
	}
	// MassGen's file actions are the names of MassGen's file tools, which massgen's share: the
	// table configs maps them with (filesystem.MassGenActions) is read from the declarations
	// that say so (MassGenAction), each word mapped onto the one class its declaration is in,
	// and exactly read_file and write_file say so. configs' own tests use the same table.
	table := filesystem.MassGenActions()
	var actions []string
	for _, tool := range filesystem.Builtins() {
		class, ok := table[tool.Name()]
		if ok != tool.MassGenAction() {
			t.Errorf("%s: in the table %v, declared a MassGen action %v", tool.Name(), ok, tool.MassGenAction())
		}
		if !ok {
			continue
		}
		actions = append(actions, tool.Name())
		if cs := permissions.Classes(tool.Decl()); !slices.Equal(cs, []string{class}) {
			t.Errorf("%s maps onto %s, its declaration is in %v", tool.Name(), class, cs)
		}
		want := classes["read"] + "(x)"
		if tool.Writes() {
			want = classes["write"] + "(x)"
		}
		m := configs.MapBackendPermissions(&configs.BackendPermissions{Rules: configs.BackendRules{Deny: []string{tool.Name() + "(x)"}}}, table)
		if !slices.Equal(m.Deny, []string{want}) || len(m.NotMapped) > 0 {
			t.Errorf("MassGen's %s(x) maps to %q (%v), want %s (the class of massgen's %s)", tool.Name(), m.Deny, m.NotMapped, want, tool.Name())
		}
	}
	if len(table) != len(actions) || !slices.Equal(actions, []string{"read_file", "write_file"}) {
		t.Errorf("MassGen's file actions: %q (table %v), want read_file and write_file", actions, table)
	}
	if !maps.Equal(table, configs.ActionsForTest) {
		t.Errorf("configs' tests map the file actions as %v, the declarations as %v", configs.ActionsForTest, table)
	}
	m := configs.MapBackendPermissions(&configs.BackendPermissions{Rules: configs.BackendRules{Deny: []string{"delete_file(x)"}}}, table)
	if len(m.NotMapped) != 1 || m.NotMapped[0].Why != `"delete_file(x)": unknown action delete_file (MassGen's are command, read_file, write_file, read_url, mcp and *)` {
		t.Errorf("delete_file(x), not a MassGen action: %+v", m)
	}
}

// The mapped rules decide in the permission engine: MassGen's deny rule refuses the command it
// names, a read-only role every write and command, and the rest of the agent's rights stand.
func TestBackendPermissionsDecide(t *testing.T) {
	base := t.TempDir()
	text := `agents:
  - id: guarded
    backend:
      type: openai
      model: m
      cwd: ws_guarded
      permissions:
        rules:
          deny: ["command(git push --force*)", "write_file(**/secret*)"]
  - id: reader
    backend:
      type: openai
      model: m
      cwd: ws_reader
      permissions: {role: read-only}
`
	if err := os.WriteFile(filepath.Join(base, "c.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := configs.Load(configs.LoadOptions{Name: "c.yaml", BaseDir: base, Home: t.TempDir(), Actions: filesystem.MassGenActions()})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(agent, tool string, args map[string]any) permissions.Decision {
		spec, err := permconfig.SpecFromConfig(cfg, agent, permissions.Coordination, permconfig.SpecOptions{Sandboxed: true})
		if err != nil {
			t.Fatal(err)
		}
		spec.Tools = filesystem.Table()
		pol, err := permissions.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		return pol.Decide(permissions.Request{Tool: tool, Args: args})
	}
	tests := []struct {
		agent, tool string
		args        map[string]any
		allow       bool
	}{
		{"guarded", "execute_command", map[string]any{"command": "git push --force origin main"}, false},
		{"guarded", "execute_command", map[string]any{"command": "git status"}, true},
		{"guarded", "write_file", map[string]any{"path": "secrets.txt", "content": "x"}, false},
		{"guarded", "edit_file", map[string]any{"path": "secret.md", "edits": []any{}}, false},
		{"guarded", "write_file", map[string]any{"path": "notes.txt", "content": "x"}, true},
		{"reader", "write_file", map[string]any{"path": "notes.txt", "content": "x"}, false},
		{"reader", "execute_command", map[string]any{"command": "ls"}, false},
		{"reader", "read_file", map[string]any{"path": "notes.txt"}, true},
	}
	for _, tt := range tests {
		if d := decide(tt.agent, tt.tool, tt.args); d.Allow != tt.allow {
			t.Errorf("%s %s %v: allow %v (%s), want %v", tt.agent, tt.tool, tt.args, d.Allow, d.Reason, tt.allow)
		}
	}
}
