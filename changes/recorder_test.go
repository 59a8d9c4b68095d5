package changes

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/internal/safefs"
)

// TestJournalAsRecorder: the journal works through Recorder alone, as a tool runner drives it
// with the descriptors of its walks: an overwrite, a created directory and a deletion into the
// trash make one change set, and undo puts every path back.
func TestJournalAsRecorder(t *testing.T) {
	ctx := context.Background()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, trash := filepath.Join(base, "proj"), filepath.Join(base, "trash")
	edited, gone, made := filepath.Join(proj, "a.txt"), filepath.Join(proj, "gone.txt"), filepath.Join(proj, "new")
	write(t, edited, "old\n")
	write(t, gone, "bye\n")
	j, err := NewJournal(filepath.Join(trash, JournalPrefix+"run_turn1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var rec Recorder = j
	walk := func(p string) *safefs.Walk {
		t.Helper()
		w, err := safefs.Resolve(p, true)
		if err != nil || !w.Exists {
			t.Fatalf("resolve %s: %v", p, err)
		}
		return w
	}

	w := walk(edited)
	if err := rec.KeepOriginal(ctx, w.Dir, w.Name, w.Path); err != nil {
		t.Fatal(err)
	}
	w.Close()
	write(t, edited, "new\n")

	if err := os.Mkdir(made, 0o755); err != nil {
		t.Fatal(err)
	}
	rec.Created(made)

	w = walk(gone)
	e, err := MoveEntryToTrash(filepath.Join(trash, "run"), w.Dir, w.Name, w.Path, w.Info, "agent_a",
		func(data string) error { return rec.AboutToTrash(gone, data) })
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	rec.Trashed(gone, e.Data)

	cs, err := j.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]File{
		edited: {Path: edited, Change: Modified, Added: 1, Removed: 1},
		gone:   {Path: gone, Change: Deleted, Removed: 1},
	}
	got := cs.FilesChanged()
	if len(got) != len(want) {
		t.Fatalf("files changed %+v, want %+v", got, want)
	}
	for _, f := range got {
		if want[f.Path] != f {
			t.Errorf("changed %+v, want %+v", f, want[f.Path])
		}
	}
	if len(cs.Records) != 3 {
		t.Errorf("records %+v: want the file, the deletion and the directory", cs.Records)
	}

	rep, err := cs.Undo(ctx, UndoOptions{TrashDir: filepath.Join(trash, "undo")})
	if err != nil || len(rep.Skipped) != 0 {
		t.Fatalf("undo: %+v, %v", rep, err)
	}
	if got := read(t, edited); got != "old\n" {
		t.Errorf("%s after undo = %q", edited, got)
	}
	if got := read(t, gone); got != "bye\n" {
		t.Errorf("%s after undo = %q", gone, got)
	}
	if _, err := os.Lstat(made); !os.IsNotExist(err) {
		t.Errorf("%s after undo: %v, want gone", made, err)
	}
}
