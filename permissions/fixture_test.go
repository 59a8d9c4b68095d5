package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// tree is a real directory tree in t.TempDir() that most tests share:
//
//	root/ws                    the agent's workspace (with .git/ and links)
//	root/temp/agent1           a temp workspace (read)
//	root/prev                  a read-only root (previous turn)
//	root/project               a context path (write for the final agent)
//	root/project/golden/       protected dir;  root/project/expected_output.txt protected file
//	root/project/.massgen/workspaces/ws_nested   another workspace location (nested test)
//	root/files/config.yaml     a file context path (read); root/files/secrets.yaml its sibling
//	root/other_ws              another agent's workspace (private)
//	root/outside/secret.txt    not managed at all
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
	for _, d := range []string{"ws/.git", "ws/sub", "temp/agent1", "prev", "project/src", "project/golden/subdir",
		"project/.git", "project/node_modules/pkg", "project/.massgen/workspaces/ws_nested", "files", "other_ws", "outside",
		"project/docs"} {
		tr.mkdir(t, d)
	}
	for _, f := range []string{"ws/a.txt", "ws/.git/config", "temp/agent1/answer.txt", "prev/old.txt", "project/src/main.go",
		"project/golden/test1.json", "project/golden/subdir/file.txt", "project/expected_output.txt", "project/.env",
		"project/new_test.py", "files/config.yaml", "files/secrets.yaml", "outside/secret.txt", "other_ws/x.txt",
		"project/docs/readme.md"} {
		tr.write(t, f)
	}
	return tr
}

func (tr *tree) p(rel string) string {
	if rel == "" {
		return tr.root
	}
	return tr.root + "/" + rel
}

func (tr *tree) mkdir(t testing.TB, rel string) {
	t.Helper()
	if err := os.MkdirAll(tr.p(rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (tr *tree) write(t testing.TB, rel string) {
	t.Helper()
	if err := os.WriteFile(tr.p(rel), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (tr *tree) link(t testing.TB, target, rel string) {
	t.Helper()
	if err := os.Symlink(target, tr.p(rel)); err != nil {
		t.Fatal(err)
	}
}

// spec is the standard spec over the tree for a role.
func (tr *tree) spec(role Role) Spec {
	return Spec{
		Agent:          "agent_a",
		Role:           role,
		Workspace:      tr.p("ws"),
		TempWorkspaces: []string{tr.p("temp/agent1")},
		ReadOnly:       []string{tr.p("prev")},
		ContextPaths: []ContextPath{
			{Path: tr.p("project"), Write: true, Protected: []string{tr.p("project/golden"), tr.p("project/expected_output.txt")}},
			{Path: tr.p("files/config.yaml")},
		},
		Private: []string{tr.p("other_ws")},
		Home:    tr.p("outside"),
		Tools:   testTools,
	}
}

// testTools mirrors the path arguments of massgen's built-in tools (filesystem.Table(), which
// this package cannot import; filesystem's tests check the real table decides the same).
var testTools = toolargs.NewTable(
	toolargs.Tool{Name: "read_file", Args: []toolargs.Arg{{Name: "path"}}},
	toolargs.Tool{Name: "read_multiple_files", Args: []toolargs.Arg{{Name: "paths", List: true}}},
	toolargs.Tool{Name: "write_file", Args: []toolargs.Arg{{Name: "path", Access: Write}}},
	toolargs.Tool{Name: "edit_file", Args: []toolargs.Arg{{Name: "path", Access: Write, ReadIf: "dryRun"}}},
	toolargs.Tool{Name: "create_directory", Args: []toolargs.Arg{{Name: "path", Access: Write}}},
	toolargs.Tool{Name: "list_directory", Args: []toolargs.Arg{{Name: "path"}}},
	toolargs.Tool{Name: "directory_tree", Args: []toolargs.Arg{{Name: "path"}}},
	toolargs.Tool{Name: "move_file", Args: []toolargs.Arg{{Name: "source", Access: Delete}, {Name: "destination", Access: Write}}},
	toolargs.Tool{Name: "search_files", Args: []toolargs.Arg{{Name: "path"}}},
	toolargs.Tool{Name: "get_file_info", Args: []toolargs.Arg{{Name: "path"}}},
	toolargs.Tool{Name: "list_allowed_directories"},
	toolargs.Tool{Name: "copy_file", Args: []toolargs.Arg{{Name: "source_path"}, {Name: "destination_path", Access: Write}}},
	toolargs.Tool{Name: "copy_files_batch", Args: []toolargs.Arg{{Name: "source_base_path"}, {Name: "destination_base_path", Access: Write}}},
	toolargs.Tool{Name: "delete_file", Args: []toolargs.Arg{{Name: "path", Access: Delete}}},
	toolargs.Tool{Name: "delete_files_batch", Args: []toolargs.Arg{{Name: "base_path", Access: Write}}},
	toolargs.Tool{Name: "compare_directories", Args: []toolargs.Arg{{Name: "dir1"}, {Name: "dir2"}}},
	toolargs.Tool{Name: "compare_files", Args: []toolargs.Arg{{Name: "file1"}, {Name: "file2"}}},
	toolargs.Tool{Name: "execute_command", Args: []toolargs.Arg{{Name: "work_dir", Optional: true}}, Command: true, Cancellable: true},
)

func mustPolicy(t testing.TB, s Spec) *Policy {
	t.Helper()
	p, err := New(s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// rel makes "R/..." test paths absolute under the tree root.
func (tr *tree) abs(s string) string {
	if strings.HasPrefix(s, "R/") {
		return tr.root + s[1:]
	}
	return s
}
