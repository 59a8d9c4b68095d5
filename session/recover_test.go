package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// journalOf makes a change journal in trash as a run's final agent leaves it when killed before
// its turn is saved: it wrote file (absent before) through the file tools.
func journalOf(t *testing.T, trash, name string, meta JournalMeta, file string) *changes.Journal {
	t.Helper()
	j, err := changes.NewJournal(filepath.Join(trash, changes.JournalPrefix+name), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.SetMeta(meta); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(filepath.Dir(trash), "workspaces", name)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	pol, err := permissions.New(permissions.Spec{Agent: "a1", Role: permissions.Final, Workspace: ws,
		ContextPaths: []permissions.ContextPath{{Path: filepath.Dir(file), Write: true}}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := filesystem.NewToolset(filesystem.ToolsetOptions{Guard: guard.New(pol, guard.Options{}),
		TrashDir: filepath.Join(trash, name), Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"path": file, "content": "made by the turn\n"})
	if res := ts.Call(context.Background(), "write_file", raw); res.IsError {
		t.Fatalf("write_file: %s", res.Content)
	}
	return j
}

// TestRecoverSavesInterruptedTurns: the journal of a killed run that continued a session becomes
// an interrupted turn of that session; one of a run that had no session yet, a new session; a
// second recovery finds nothing; a journal whose turn was saved but not marked is not saved twice.
func TestRecoverSavesInterruptedTurns(t *testing.T) {
	base := t.TempDir()
	trash := filepath.Join(base, ".massgen", "trash")
	proj := filepath.Join(base, "proj")
	st, err := Open(filepath.Join(base, ".massgen", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 3, 4, 10, 0, 0, 0, time.Local)
	old, _ := st.New(t0)
	if _, err := old.SaveTurn(Turn{Task: "first", Answer: "one", Started: t0, Ended: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	cps := []configs.ContextPath{{Path: proj, Permission: "write"}}
	meta := JournalMeta{Sessions: st.Root(), Session: old.ID, Run: "log_a", Turn: 1, Task: "second", Agents: []string{"a1"},
		Config: "/c.yaml", ContextPaths: cps, Started: t0.Add(time.Hour)}
	journalOf(t, trash, "log_a_turn1", meta, filepath.Join(proj, "a.txt"))
	fresh := meta
	fresh.Session, fresh.Run, fresh.Task, fresh.Started = "", "log_b", "third", t0.Add(2*time.Hour)
	journalOf(t, trash, "log_b_turn1", fresh, filepath.Join(proj, "b.txt"))

	rec, err := Recover(context.Background(), trash, nil)
	if err != nil || len(rec) != 2 {
		t.Fatalf("Recover = %+v, %v", rec, err)
	}
	if rec[0].Session != old.ID || rec[0].Turn != 2 || rec[0].Run != "log_a" || rec[0].Files != 1 {
		t.Errorf("the continued session's turn: %+v", rec[0])
	}
	if rec[1].Session == old.ID || rec[1].Turn != 1 || rec[1].Session != "session_"+fresh.Started.Format(idLayout) {
		t.Errorf("the new session's turn: %+v", rec[1])
	}
	again, _ := st.Get(old.ID)
	turns := again.Turns()
	if len(turns) != 2 || turns[1].Status != StatusInterrupted || turns[1].Task != "second" || turns[1].Config != "/c.yaml" ||
		turns[1].Run != "log_a" || len(turns[1].ContextPaths) != 1 || turns[1].ContextPaths[0].Path != proj || turns[1].ChangesFile == "" {
		t.Fatalf("turns: %+v", turns)
	}
	if ws := again.LastWorkspace(); ws != turns[0].Workspace {
		t.Errorf("LastWorkspace = %s: an interrupted turn kept none", ws)
	}
	if cfg, _, err := again.Resume(); err != nil || cfg != "/c.yaml" {
		t.Errorf("Resume = %q, %v", cfg, err)
	}
	if rec, err := Recover(context.Background(), trash, nil); err != nil || len(rec) != 0 {
		t.Errorf("a second Recover = %+v, %v", rec, err)
	}
	// LatestChange: the newest turn that changed files, across sessions.
	if s, n, err := st.LatestChange("", false); err != nil || s.ID != "session_"+fresh.Started.Format(idLayout) || n != 1 {
		t.Errorf("LatestChange = %v %d %v", s, n, err)
	}
	if s, n, err := st.LatestChange(old.ID, false); err != nil || s.ID != old.ID || n != 2 {
		t.Errorf("LatestChange(%s) = %v %d %v", old.ID, s, n, err)
	}

	// Saved by its run, killed before the mark: found, marked, not saved again.
	late := meta
	late.Run, late.Task, late.Started = "log_c", "fourth", t0.Add(3*time.Hour)
	j := journalOf(t, trash, "log_c_turn1", late, filepath.Join(proj, "c.txt"))
	cs, err := j.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.SaveTurn(Turn{Task: "fourth", Answer: "4", Changes: cs, Started: late.Started}); err != nil {
		t.Fatal(err)
	}
	if rec, err := Recover(context.Background(), trash, nil); err != nil || len(rec) != 0 {
		t.Errorf("Recover of a saved turn = %+v, %v", rec, err)
	}
	if n := len(mustGet(t, st, old.ID).Turns()); n != 3 {
		t.Errorf("%d turns, want 3", n)
	}
}

func mustGet(t *testing.T, st *Store, id string) *Session {
	t.Helper()
	s, err := st.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConcurrentWritersKeepEveryTurn: writers in separate handles (as separate processes have)
// saving turns into one session at once each get their own turn number; none is lost, and the
// summary lists them all.
func TestConcurrentWritersKeepEveryTurn(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	st, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := st.New(time.Now())
	if _, err := first.SaveTurn(Turn{Task: "t0", Answer: "a"}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			other, err := Open(root) // its own store and session, as another process
			if err != nil {
				errs <- err
				return
			}
			ses, err := other.Get(first.ID)
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if _, err := ses.SaveTurn(Turn{Task: fmt.Sprintf("w%d-%d", w, i), Answer: "a"}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := mustGet(t, st, first.ID).Turns()
	if len(got) != 1+writers*each {
		t.Fatalf("%d turns, want %d", len(got), 1+writers*each)
	}
	summary := readFile(t, filepath.Join(first.Dir, summaryFile))
	if want := fmt.Sprintf("Turns: %d\n", 1+writers*each); !containsLine(summary, want) {
		t.Errorf("the summary does not list every turn:\n%.300s", summary)
	}
	if _, err := os.Stat(filepath.Join(first.Dir, fmt.Sprintf("turn_%d", 1+writers*each))); err != nil {
		t.Error(err)
	}
}

func containsLine(s, line string) bool {
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		if i < len(s) && s[:i+1] == line {
			return true
		}
		if i == len(s) {
			return false
		}
		s = s[i+1:]
	}
	return false
}

// TestLatestChangeStepsBack: with pending, LatestChange passes over undone turns, so undo after
// undo steps back turn by turn across sessions; turns that changed nothing never count; once all
// are undone it names the latest with ErrAllUndone. Without pending it is the latest, undone or not.
func TestLatestChangeStepsBack(t *testing.T) {
	base := t.TempDir()
	trash := filepath.Join(base, ".massgen", "trash")
	proj := filepath.Join(base, "proj")
	st, err := Open(filepath.Join(base, ".massgen", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type ref struct {
		ses *Session
		n   int
	}
	var refs []ref // in the order they happened: a1, b1, a2 (a3 changed nothing)
	save := func(ses *Session, name string, at time.Time, change bool) {
		turn := Turn{Task: name, Answer: name, Started: at, Ended: at.Add(time.Minute)}
		if change {
			j := journalOf(t, trash, name, JournalMeta{Run: name, Turn: 1, Started: at}, filepath.Join(proj, name+".txt"))
			cs, err := j.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			turn.Changes = cs
		}
		if _, err := ses.SaveTurn(turn); err != nil {
			t.Fatal(err)
		}
		if change {
			refs = append(refs, ref{ses, len(ses.Turns())})
		}
	}
	a, err := st.New(t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.New(t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	save(a, "a1", t0, true)
	save(b, "b1", t0.Add(time.Hour), true)
	save(a, "a2", t0.Add(2*time.Hour), true)
	save(a, "a3", t0.Add(3*time.Hour), false)

	for i := len(refs) - 1; i >= 0; i-- {
		want := refs[i]
		s, n, err := st.LatestChange("", true)
		if err != nil || s.ID != want.ses.ID || n != want.n {
			t.Fatalf("step %d: LatestChange = %v %d %v, want %s turn %d", len(refs)-i, s, n, err, want.ses.ID, want.n)
		}
		if s, n, err := st.LatestChange("", false); err != nil || s.ID != refs[2].ses.ID || n != refs[2].n {
			t.Errorf("LatestChange without pending = %v %d %v, want the latest (undone or not)", s, n, err)
		}
		if err := s.MarkUndone(n, t0.Add(10*time.Hour), nil); err != nil {
			t.Fatal(err)
		}
	}
	if s, n, err := st.LatestChange("", true); !errors.Is(err, ErrAllUndone) || s.ID != refs[2].ses.ID || n != refs[2].n {
		t.Errorf("all undone: LatestChange = %v %d %v, want the latest with ErrAllUndone", s, n, err)
	}
	if s, n, err := st.LatestChange(b.ID, true); !errors.Is(err, ErrAllUndone) || s.ID != b.ID || n != 1 {
		t.Errorf("all undone in %s: LatestChange = %v %d %v", b.ID, s, n, err)
	}
}
