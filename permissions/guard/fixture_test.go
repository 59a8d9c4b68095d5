package guard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// tree is a real directory tree in t.TempDir(), the part of the engine's test tree
// (permissions/fixture_test.go) that the Guard's tests decide on:
//
//	root/ws                    the agent's workspace
//	root/temp/agent1           a temp workspace (read)
//	root/prev                  a read-only root (previous turn)
//	root/project               a context path (write for the final agent), golden/ protected
//	root/files/config.yaml     a file context path (read)
//	root/other_ws              another agent's workspace (private)
//	root/outside               not managed at all (the home)
type tree struct {
	root string
}

func newTree(t testing.TB) *tree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{root: root}
	for _, d := range []string{"ws/sub", "temp/agent1", "prev", "project/src", "project/golden", "files", "other_ws", "outside"} {
		if err := os.MkdirAll(tr.p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"ws/a.txt", "project/src/main.go", "project/expected_output.txt", "project/.env",
		"files/config.yaml"} {
		if err := os.WriteFile(tr.p(f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func (tr *tree) p(rel string) string {
	if rel == "" {
		return tr.root
	}
	return tr.root + "/" + rel
}

// spec is the standard spec over the tree for a role.
func (tr *tree) spec(role permissions.Role) permissions.Spec {
	return permissions.Spec{
		Agent:          "agent_a",
		Role:           role,
		Workspace:      tr.p("ws"),
		TempWorkspaces: []string{tr.p("temp/agent1")},
		ReadOnly:       []string{tr.p("prev")},
		ContextPaths: []permissions.ContextPath{
			{Path: tr.p("project"), Write: true, Protected: []string{tr.p("project/golden"), tr.p("project/expected_output.txt")}},
			{Path: tr.p("files/config.yaml")},
		},
		Private: []string{tr.p("other_ws")},
		Home:    tr.p("outside"),
		Tools:   testTools,
	}
}

// testTools declares the built-in tools these tests call, as filesystem.Table() does.
var testTools = toolargs.NewTable(
	toolargs.Tool{Name: "read_file", Args: []toolargs.Arg{{Name: "path"}}},
	toolargs.Tool{Name: "write_file", Args: []toolargs.Arg{{Name: "path", Access: permissions.Write}}},
	toolargs.Tool{Name: "delete_files_batch", Args: []toolargs.Arg{{Name: "base_path", Access: permissions.Write}}},
	toolargs.Tool{Name: "execute_command", Args: []toolargs.Arg{{Name: "work_dir", Optional: true}}, Command: true, Cancellable: true},
)

func mustPolicy(t testing.TB, s permissions.Spec) *permissions.Policy {
	t.Helper()
	p, err := permissions.New(s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}
