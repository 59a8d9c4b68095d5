package permconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/permissions"
)

// tree is a real directory tree in t.TempDir(), the part of the engine's test tree
// (permissions/fixture_test.go) that testConfig names:
//
//	root/ws                    agent_a's workspace
//	root/other_ws              agent_b's workspace
//	root/temp/agent1           a temp workspace
//	root/project               a context path (write), golden/ protected, docs/ agent_b's read path
//	root/files/config.yaml     a file context path (read)
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
	for _, d := range []string{"ws", "other_ws", "temp/agent1", "project/src", "project/golden", "project/docs", "files", "outside"} {
		if err := os.MkdirAll(tr.p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"ws/a.txt", "other_ws/x.txt", "project/src/main.go", "files/config.yaml"} {
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

func mustPolicy(t testing.TB, s permissions.Spec) *permissions.Policy {
	t.Helper()
	p, err := permissions.New(s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}
