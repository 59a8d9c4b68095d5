package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// Issue 26 item 9: `massgen undo` without --turn steps back turn by turn, across sessions: each
// undo takes back the latest turn that changed files and is not undone yet (a turn that changed
// nothing is passed over), says which turn and run, and names the one the next undo takes; when
// nothing is left it says so (exit 1) and how to put an undone turn's files back again.
func TestUndoStepsBackTurnByTurn(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	keep := filepath.Join(proj, "keep.txt")
	writeFile(t, keep, "original\n")
	file := func(name string) string { return filepath.Join(proj, name) }
	// A continued session's requests hold its earlier tasks too: the latest task decides.
	writes := []struct {
		task  string
		calls []toolCall
	}{
		{"Task D", nil},
		{"Task C", []toolCall{tc("write_file", map[string]any{"path": file("c.txt"), "content": "sea\n"})}},
		{"Task B", []toolCall{
			tc("write_file", map[string]any{"path": file("b.txt"), "content": "bee\n"}),
			tc("write_file", map[string]any{"path": keep, "content": "changed by B\n"}),
		}},
		{"Task A", []toolCall{tc("write_file", map[string]any{"path": file("a.txt"), "content": "ay\n"})}},
	}
	p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
		for _, w := range writes {
			switch {
			case !tr.has(w.task):
			case w.calls == nil:
				return soloScript("nothing to change")(tr)
			default:
				return deliverer(func(turn) ([]toolCall, string) { return w.calls, "answer " + w.task })(tr)
			}
		}
		return reply{text: "unexpected task"}
	}})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
	var runs []string // the log folder of each run, in order
	for _, args := range [][]string{
		{"--config", "cfg.yaml", "--context", "proj", "Task A"},
		{"--continue", "Task B"},
		{"--config", "cfg.yaml", "--context", "proj", "Task C"}, // a second session
		{"--continue", "Task D"},                                // changes nothing
	} {
		if r := run(t, dir, args...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
		logs, _ := filepath.Glob(filepath.Join(dir, ".massgen", "logs", "log_*"))
		if len(logs) != len(runs)+1 {
			t.Fatalf("log folders: %v", logs)
		}
		runs = append(runs, filepath.Base(logs[len(logs)-1]))
	}
	sessions, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "session_*"))
	if len(sessions) != 2 {
		t.Fatalf("sessions: %v", sessions)
	}
	s1, s2 := filepath.Base(sessions[0]), filepath.Base(sessions[1])

	steps := []struct {
		which, next string // "turn N of session S (run R" of this undo and of the next
		gone        string
	}{
		{"turn 1 of session " + s2 + " (run " + runs[2], "turn 2 of session " + s1 + " (run " + runs[1], "c.txt"},
		{"turn 2 of session " + s1 + " (run " + runs[1], "turn 1 of session " + s1 + " (run " + runs[0], "b.txt"},
		{"turn 1 of session " + s1 + " (run " + runs[0], "", "a.txt"},
	}
	for i, st := range steps {
		u := run(t, dir, "undo")
		if u.code != 0 || !strings.Contains(u.stderr, "Undoing "+st.which) {
			t.Fatalf("undo %d: exit %d, want it to take back %s\nstdout:\n%s\nstderr:\n%s", i+1, u.code, st.which, u.stdout, u.stderr)
		}
		if exists(file(st.gone)) {
			t.Errorf("undo %d left %s", i+1, st.gone)
		}
		if st.next != "" && !strings.Contains(u.stderr, "`massgen undo` again takes back "+st.next) {
			t.Errorf("undo %d does not name the next turn (%s):\n%s", i+1, st.next, u.stderr)
		}
		for _, later := range steps[i+1:] {
			if !exists(file(later.gone)) {
				t.Errorf("undo %d took back %s too", i+1, later.gone)
			}
		}
	}
	if readFile(t, keep) != "original\n" {
		t.Errorf("keep.txt = %q after undoing B", readFile(t, keep))
	}
	u := run(t, dir, "undo")
	if u.code != 1 || !strings.Contains(u.stderr, "nothing left to undo") || !strings.Contains(u.stderr, "--session "+s2+" --turn 1 --force") {
		t.Errorf("undo with every turn undone: exit %d\n%s%s", u.code, u.stdout, u.stderr)
	}
}
