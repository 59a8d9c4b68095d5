package configs_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/agentenv/permconfig"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// The file tools a mapped read_file or write_file rule names are massgen's, by what each does to
// its paths (filesystem.Builtins, the tools' one declaration): every tool writing or deleting a
// path is named by write_file rules, every tool only reading paths by read_file rules, and the
// rules name no other tool but the reference MCP filesystem server's read tools.
func TestBackendPermissionToolLists(t *testing.T) {
	mapped := func(rule string) []string {
		return configs.MapBackendPermissions(&configs.BackendPermissions{Rules: configs.BackendRules{Deny: []string{rule}}}).Deny
	}
	reads, writes := mapped("read_file(P)"), mapped("write_file(P)")
	named := map[string]bool{}
	for _, tool := range filesystem.Builtins() {
		name, decl := tool.Name(), tool.Decl()
		if len(decl.Args) == 0 || decl.Command {
			continue
		}
		list, kind := reads, "read_file"
		if tool.Writes() {
			list, kind = writes, "write_file"
		}
		named[name+"(P)"] = true
		if !slices.Contains(list, name+"(P)") {
			t.Errorf("%s is not named by a mapped %s rule: %q", name, kind, list)
		}
	}
	for _, r := range writes {
		if !named[r] {
			t.Errorf("a mapped write_file rule names %s, not one of massgen's writing tools", r)
		}
	}
	for _, r := range reads {
		if _, ok := toolargs.Table(nil).Known(strings.TrimSuffix(r, "(P)")); !named[r] && !ok {
			t.Errorf("a mapped read_file rule names %s, neither one of massgen's reading tools nor the reference server's", r)
		}
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
	cfg, _, err := configs.Load(configs.LoadOptions{Name: "c.yaml", BaseDir: base, Home: t.TempDir()})
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
