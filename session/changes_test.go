package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
)

// TestTurnsRecordWhatResumeNeedsAndTheirChanges: a turn keeps its config, context paths and
// changes; a reloaded session gives them back, and an undo mark persists.
func TestTurnsRecordWhatResumeNeedsAndTheirChanges(t *testing.T) {
	root := t.TempDir()
	st, err := Open(filepath.Join(root, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.New(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	cps := []configs.ContextPath{{Path: "/p", Permission: "write", ProtectedPaths: []string{"/p/golden"}}}
	trash := filepath.Join(root, "trash")
	kept := filepath.Join(trash, "j", "originals", "1")
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := &changes.ChangeSet{Version: 1, Dir: filepath.Join(trash, "j"), TrashRoot: trash, Records: []changes.ChangeRecord{
		{Path: "/p/a.txt", Before: changes.EntryState{Type: changes.EntryFile, Kept: kept}, After: changes.EntryState{Type: changes.EntryAbsent}, Removed: 1},
	}}
	if _, err := s.SaveTurn(Turn{Task: "one", Answer: "a", Workspace: ws, Config: "/c.yaml", ContextPaths: cps}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveTurn(Turn{Task: "two", Answer: "b", Workspace: ws, Config: "/c2.yaml", ContextPaths: cps, Changes: cs}); err != nil {
		t.Fatal(err)
	}
	again, err := st.Get(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	cfg, got, err := again.Resume()
	if err != nil || cfg != "/c2.yaml" || len(got) != 1 || got[0].Path != "/p" || got[0].ProtectedPaths[0] != "/p/golden" {
		t.Fatalf("Resume = %q, %v, %v", cfg, got, err)
	}
	if c, n, err := again.Changes(1); err != nil || c != nil || n != 1 {
		t.Errorf("turn 1 changed nothing: %v, %d, %v", c, n, err)
	}
	c, n, err := again.Changes(0)
	if err != nil || n != 2 || len(c.Records) != 1 || c.Records[0].Path != "/p/a.txt" {
		t.Fatalf("Changes(0) = %+v, %d, %v", c, n, err)
	}
	meta, _ := os.ReadFile(filepath.Join(s.Dir, "turn_2", "metadata.json"))
	for _, want := range []string{`"config": "/c2.yaml"`, `"change": "deleted"`, `"changes_file": "changes.json"`, `"protected_paths": [`} {
		if !strings.Contains(string(meta), want) {
			t.Errorf("metadata.json lacks %s:\n%s", want, meta)
		}
	}
	if _, _, err := again.Turn(3); err == nil {
		t.Error("Turn(3) of a 2-turn session")
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := again.MarkUndone(2, at, map[string]any{"restored": []string{"/p/a.txt"}}); err != nil {
		t.Fatal(err)
	}
	third, _ := st.Get(s.ID)
	if tr, _, _ := third.Turn(2); !tr.Undone.Equal(at) {
		t.Errorf("undone = %v", tr.Undone)
	}
}
