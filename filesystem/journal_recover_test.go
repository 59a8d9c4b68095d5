package filesystem

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/permissions"
)

// recoverAndUndo recovers the journal of e (as the next start would after a kill), checks the
// change set against want, undoes it and checks the context path is as before.
func recoverAndUndo(t *testing.T, e *env, j *changes.Journal, before map[string]string, want []wantChange) {
	t.Helper()
	pending, err := changes.PendingJournals(filepath.Dir(j.Dir()))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) > 0 && (len(pending) != 1 || pending[0].Dir != j.Dir() || pending[0].Finished || string(pending[0].Meta) != "{\n  \"turn\": 1\n}\n") {
		t.Fatalf("pending journals: %+v", pending)
	}
	cs, err := changes.RecoverJournal(context.Background(), j.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []wantChange
	for _, r := range cs.Files() {
		rel, _ := filepath.Rel(e.proj, r.Path)
		got = append(got, wantChange{filepath.ToSlash(rel), r.Op(), r.Added, r.Removed})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("recovered changes = %+v, want %+v", got, want)
	}
	if cs.Incomplete != "" || (len(want) > 0 && !cs.Recovered) {
		t.Errorf("incomplete %q, recovered %v", cs.Incomplete, cs.Recovered)
	}
	if len(want) == 0 {
		if exists(j.Dir()) {
			t.Errorf("a journal that recorded no net change is left: %s", j.Dir())
		}
		return
	}
	// A second recovery reads the same set (changes.json), and a recorded journal is not pending.
	again, err := changes.RecoverJournal(context.Background(), j.Dir(), nil)
	if err != nil || len(again.Records) != len(cs.Records) {
		t.Fatalf("second recovery: %v, %d records (first: %d)", err, len(again.Records), len(cs.Records))
	}
	if err := changes.MarkRecorded(j.Dir(), map[string]int{"turn": 1}); err != nil {
		t.Fatal(err)
	}
	if p, _ := changes.PendingJournals(filepath.Dir(j.Dir())); len(p) != 0 {
		t.Errorf("a recorded journal is pending: %+v", p)
	}
	rep, err := cs.Undo(context.Background(), changes.UndoOptions{TrashDir: filepath.Join(e.massgen, "trash", "undo")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) > 0 {
		t.Errorf("undo skipped %+v", rep.Skipped)
	}
	if after := treeState(t, e.proj); !equalTrees(before, after) {
		t.Errorf("after undo the context path differs:\nbefore %v\nafter  %v", before, after)
	}
}

// TestRecoverJournalAfterAKill: a run killed after any of the journal scenarios (no Finish: the
// journal is left as the kill leaves it) is recovered to the same change set, which undoes the
// turn.
func TestRecoverJournalAfterAKill(t *testing.T) {
	modes := sandboxModes(t)
	for _, tt := range journalScenarios {
		t.Run(tt.name, func(t *testing.T) {
			var j *changes.Journal
			e := newEnv(t, permissions.Final, withJournal(&j), withSandbox(modes[0]))
			for rel, content := range tt.setup {
				write(t, filepath.Join(e.proj, rel), content)
			}
			before := treeState(t, e.proj)
			tt.run(e)
			recoverAndUndo(t, e, j, before, tt.want)
		})
	}
}

// TestRecoverJournalKilledDuringACommand: the run is killed while a command runs (after the
// inventory, before the comparison): the inventory kept on disk tells what it changed.
func TestRecoverJournalKilledDuringACommand(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	write(t, filepath.Join(e.proj, "app", "main.c"), "int main;\n")
	write(t, filepath.Join(e.proj, "app", "old.c"), "old\n")
	before := treeState(t, e.proj)
	// What execute_command does before it starts the command.
	inv, _, note := e.ts.beforeCommand(context.Background(), e.ts.sandboxPolicy())
	if inv == nil || note != "" {
		t.Fatalf("no inventory: %q", note)
	}
	// The command's work, then the kill: afterCommand never runs.
	write(t, filepath.Join(e.proj, "app", "main.c"), "int main;\nx\n")
	if err := os.Remove(filepath.Join(e.proj, "app", "old.c")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(e.proj, "app", "gen", "out.txt"), "built\n")
	recoverAndUndo(t, e, j, before, []wantChange{{"app/gen/out.txt", changes.Created, 1, 0}, {"app/main.c", changes.Modified, 1, 0}, {"app/old.c", changes.Deleted, 0, 1}})
}

// TestRecoverJournalKilledAfterTheMoveToTrash: a deletion is in the journal before the entry
// moves to the trash: a run killed right after the move (before the tool records the trashed
// tree) still has it.
func TestRecoverJournalKilledAfterTheMoveToTrash(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	write(t, filepath.Join(e.proj, "old", "a.txt"), "a\n")
	before := treeState(t, e.proj)
	w := resolveT(t, filepath.Join(e.proj, "old"))
	if _, err := e.ts.trash(w.Dir, w.Name, w.Path, w.Info); err != nil { // no noteTrashed: killed
		t.Fatal(err)
	}
	w.Close()
	recoverAndUndo(t, e, j, before, []wantChange{{"old/a.txt", changes.Deleted, 0, 1}})
}

// TestRecoverJournalDropsALineCutShort: the last line of journal.jsonl cut short by the kill
// (its change never landed) is dropped; a damaged line before it fails the recovery, naming it.
func TestRecoverJournalDropsALineCutShort(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	before := treeState(t, e.proj)
	e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "index.html"), "content": "new\n"})
	lines := filepath.Join(j.Dir(), "journal.jsonl")
	f, err := os.OpenFile(lines, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"path":"` + filepath.Join(e.proj, "styles.css") + `","before":{"ty`)
	f.Close()
	recoverAndUndo(t, e, j, before, []wantChange{{"index.html", changes.Modified, 1, 1}})

	var j2 *changes.Journal
	e2 := newEnv(t, permissions.Final, withJournal(&j2))
	e2.ok("write_file", map[string]any{"path": filepath.Join(e2.proj, "index.html"), "content": "new\n"})
	raw, _ := os.ReadFile(filepath.Join(j2.Dir(), "journal.jsonl"))
	os.WriteFile(filepath.Join(j2.Dir(), "journal.jsonl"), append([]byte("{not json\n"), raw...), 0o600)
	if _, err := changes.RecoverJournal(context.Background(), j2.Dir(), nil); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a damaged journal: %v", err)
	}
}

// TestFinishIncompleteKeepsWhatItCan: when the "after" copies cannot be kept (here their folder
// cannot be made), the set is Incomplete (failures are counted after the after-states), the
// hashes and line counts are still right, and undo restores without claiming a conflict.
func TestFinishIncompleteKeepsWhatItCan(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	before := treeState(t, e.proj)
	e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "index.html"), "content": "one\ntwo\nthree\n"})
	write(t, filepath.Join(j.Dir(), "after"), "not a folder") // the copies' folder cannot be made
	cs, err := j.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cs.Incomplete, "keeping "+filepath.Join(e.proj, "index.html")+" as the turn left it") {
		t.Fatalf("incomplete = %q", cs.Incomplete)
	}
	saved, err := changes.LoadChangeSet(filepath.Join(j.Dir(), "changes.json"))
	if err != nil || saved.Incomplete == "" {
		t.Fatalf("changes.json: %v, incomplete %q", err, saved.Incomplete)
	}
	r := saved.Files()[0]
	if r.After.SHA256 == "" || r.After.Kept != "" || r.Binary || r.Added != 3 || r.Removed != 1 {
		t.Errorf("record = %+v", r)
	}
	rep, err := saved.Undo(context.Background(), changes.UndoOptions{TrashDir: filepath.Join(e.massgen, "trash", "undo")})
	if err != nil || len(rep.Skipped) > 0 {
		t.Fatalf("undo: %v %+v", err, rep.Skipped)
	}
	if after := treeState(t, e.proj); !equalTrees(before, after) {
		t.Errorf("after undo: %v", after)
	}
	// An "after" the journal could not read at all is unknown: undo does not call it a conflict.
	r.After.SHA256 = ""
	unknown := &changes.ChangeSet{Version: 1, TrashRoot: saved.TrashRoot, Records: []changes.ChangeRecord{r}}
	write(t, r.Path, "one\ntwo\nthree\n")
	rep, err = unknown.Undo(context.Background(), changes.UndoOptions{TrashDir: filepath.Join(e.massgen, "trash", "undo2")})
	if err != nil || len(rep.Skipped) > 0 || read(t, r.Path) != "<h1>hi</h1>\n" {
		t.Errorf("undo with an unknown after-state: %v %+v", err, rep.Skipped)
	}
}

// TestUndoRestoresDirectoryModesExactly: directories the turn removed come back with their exact
// modes whatever the umask (0775, 0700), even one without write permission holding files (0555:
// set once its files are back).
func TestUndoRestoresDirectoryModesExactly(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	dirs := map[string]fs.FileMode{"shared": 0o775, "shared/private": 0o700, "ro": 0o555}
	write(t, filepath.Join(e.proj, "shared", "private", "key.txt"), "k\n")
	write(t, filepath.Join(e.proj, "ro", "frozen.txt"), "f\n")
	for _, rel := range []string{"shared/private", "shared", "ro"} {
		if err := os.Chmod(filepath.Join(e.proj, rel), dirs[rel]); err != nil {
			t.Fatal(err)
		}
	}
	before := treeState(t, e.proj)
	for _, rel := range []string{"shared", "ro"} {
		e.ok("move_file", map[string]any{"source": filepath.Join(e.proj, rel), "destination": filepath.Join(e.proj, "moved", rel)})
	}
	cs, err := j.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cs.Undo(context.Background(), changes.UndoOptions{TrashDir: filepath.Join(e.massgen, "trash", "undo")})
	if err != nil || len(rep.Skipped) > 0 {
		t.Fatalf("undo: %v %+v", err, rep.Skipped)
	}
	if after := treeState(t, e.proj); !equalTrees(before, after) {
		t.Errorf("after undo:\n%v\nwant\n%v", after, before)
	}
	for rel, want := range dirs {
		fi, err := os.Stat(filepath.Join(e.proj, rel))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, mode %v, want %v", rel, err, fi.Mode().Perm(), want)
		}
	}
}

// The journal's lines are JSON objects naming only absolute paths and copies in the trash: a
// line pointing a copy elsewhere fails the recovery.
func TestRecoverJournalRefusesCopiesOutsideTheTrash(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "index.html"), "content": "new\n"})
	line := struct {
		Path   string             `json:"path"`
		Before changes.EntryState `json:"before"`
	}{filepath.Join(e.proj, "styles.css"), changes.EntryState{Type: changes.EntryFile, Kept: filepath.Join(e.out, "secret.txt")}}
	b, _ := json.Marshal(line)
	f, _ := os.OpenFile(filepath.Join(j.Dir(), "journal.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.Write(append(b, '\n'))
	f.Close()
	if _, err := changes.RecoverJournal(context.Background(), j.Dir(), nil); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("recovery with a copy outside the trash: %v", err)
	}
}

// resolveT walks to p (its final entry not followed).
func resolveT(t *testing.T, p string) *safefs.Walk {
	t.Helper()
	w, err := safefs.Resolve(p, true)
	if err != nil || !w.Exists {
		t.Fatalf("resolve %s: %v", p, err)
	}
	return w
}
