package agentenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/wsowner"
)

// The environment creates a workspace and records it as massgen's: ClearWorkspace then empties
// it. A user folder the config gives massgen (cwd_owned) is cleared into the trash, whence
// `massgen trash restore` puts each entry back.
func TestClearWorkspaceByOwnership(t *testing.T) {
	user := t.TempDir()
	write(t, filepath.Join(user, "precious.txt"), "mine")
	write(t, filepath.Join(user, "sub", "deep.txt"), "deep")
	fx, cfg := newFixture(t, `agents:
  - id: made
    backend: {type: openai, model: m, cwd: ws_made}
  - id: given
    backend: {type: openai, model: m, cwd: `+user+`, cwd_owned: true}
`, "")
	runDir := filepath.Join(fx.dir, ".massgen", "logs", "log_1")
	write(t, filepath.Join(runDir, "massgen.log"), "")
	env, made := open(t, Options{Config: cfg, RunDir: runDir}, "made")
	given, err := env.Agent(t.Context(), "given")
	if err != nil {
		t.Fatal(err)
	}
	ws := made.Config().Backend.CWD
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		t.Fatalf("the workspace was not created: %v", err)
	}
	write(t, filepath.Join(ws, "draft.txt"), "draft")
	if err := made.ClearWorkspace(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		t.Errorf("massgen's workspace not cleared: %v", ents)
	}

	if err := given.ClearWorkspace(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(user); len(ents) != 0 {
		t.Errorf("the owned folder was not cleared: %v", ents)
	}
	entries, err := changes.ListTrash(cfg.MassgenDir())
	if err != nil || len(entries) != 2 {
		t.Fatalf("trash = %+v, %v; want the 2 entries of the owned folder", entries, err)
	}
	for _, e := range entries {
		if e.Agent != "given" || !strings.HasPrefix(e.OriginalPath, user) {
			t.Errorf("trash entry %+v", e)
		}
		if err := changes.RestoreTrash(cfg.MassgenDir(), e.ID); err != nil {
			t.Fatal(err)
		}
	}
	for rel, want := range map[string]string{"precious.txt": "mine", "sub/deep.txt": "deep"} {
		if b, err := os.ReadFile(filepath.Join(user, rel)); err != nil || string(b) != want {
			t.Errorf("%s after restore = %q, %v", rel, b, err)
		}
	}
}

// A workspace swapped for a symlink to a user folder after massgen made it is not cleared.
func TestClearWorkspaceRefusesASwappedFolder(t *testing.T) {
	user := t.TempDir()
	write(t, filepath.Join(user, "precious.txt"), "mine")
	_, cfg := newFixture(t, "agents:\n  - id: a\n    backend: {type: openai, model: m, cwd: ws}\n", "")
	_, a := open(t, Options{Config: cfg}, "a")
	ws := a.Config().Backend.CWD
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(user, ws); err != nil {
		t.Fatal(err)
	}
	err := a.ClearWorkspace()
	if _, ok := err.(*wsowner.NotOwnedError); !ok {
		t.Errorf("ClearWorkspace = %v, want a NotOwnedError", err)
	}
	if b, err := os.ReadFile(filepath.Join(user, "precious.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the user's file = %q, %v", b, err)
	}
}
