package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/changes"
)

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestThreeTurns(t *testing.T) {
	base := t.TempDir()
	st, err := Open(filepath.Join(base, ".massgen", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 9, 28, 14, 30, 22, 0, time.Local)
	ses, err := st.New(t0)
	if err != nil {
		t.Fatal(err)
	}
	if ses.ID != "session_20250928_143022" {
		t.Fatalf("id %q", ses.ID)
	}
	if ses.LastWorkspace() != "" || len(ses.History()) != 0 {
		t.Fatal("new session has turns")
	}
	ws := filepath.Join(base, ".massgen", "workspaces", "workspace1")
	tasks := []string{"Create a React app with authentication", "Add user profile management", "Add password reset functionality"}
	for i, task := range tasks {
		writeFile(t, filepath.Join(ws, "src", "App.js"), "version "+task)
		turn := Turn{
			Task: task, Answer: "Done: " + task + "\nline 2", Winner: "gemini",
			Votes: map[string]string{"gemini": "gemini", "gemini2": "gemini"}, Agents: []string{"gemini", "gemini2"},
			Started: t0.Add(time.Duration(i) * time.Hour), Ended: t0.Add(time.Duration(i)*time.Hour + 90*time.Second),
			Tokens: map[string]TokenUsage{"gemini": {Input: 1000, Output: 200}, "gemini2": {Input: 900, Output: 100}},
			// What was delivered is read from the change set; a list given beside it is not kept.
			FilesDelivered: []string{filepath.Join(base, "not-delivered.txt")},
			Changes: &changes.ChangeSet{Version: 1, Records: []changes.ChangeRecord{
				{Path: filepath.Join(base, "src", "App.js"), Before: changes.EntryState{Type: changes.EntryAbsent}, After: changes.EntryState{Type: changes.EntryFile}},
			}},
			Workspace: ws,
		}
		dir, err := ses.SaveTurn(turn)
		if err != nil {
			t.Fatal(err)
		}
		n := i + 1
		if want := filepath.Join(ses.Dir, "turn_"+string(rune('0'+n))); dir != want {
			t.Fatalf("turn dir %q, want %q", dir, want)
		}
		if got := readFile(t, filepath.Join(dir, "answer.txt")); got != turn.Answer {
			t.Errorf("answer.txt = %q", got)
		}
		if got := readFile(t, filepath.Join(dir, "workspace", "src", "App.js")); got != "version "+task {
			t.Errorf("workspace copy = %q", got)
		}
		var md map[string]any
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "metadata.json"))), &md); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]any{"task": task, "winner": "gemini", "turn": float64(n), "duration_seconds": 90.0, "session": ses.ID} {
			if md[k] != want {
				t.Errorf("metadata %s = %v, want %v", k, md[k], want)
			}
		}
		if tot := md["total_tokens"].(map[string]any); tot["input"] != 1900.0 || tot["output"] != 300.0 {
			t.Errorf("total_tokens = %v", tot)
		}
		if v := md["votes"].(map[string]any); v["gemini2"] != "gemini" {
			t.Errorf("votes = %v", v)
		}
		if f := md["files_delivered"].([]any); len(f) != 1 || f[0] != filepath.Join(base, "src", "App.js") {
			t.Errorf("files_delivered = %v, want the change set's created file", f)
		}
		if ses.LastWorkspace() != filepath.Join(dir, "workspace") {
			t.Errorf("LastWorkspace = %q", ses.LastWorkspace())
		}
		sum := readFile(t, filepath.Join(ses.Dir, "SESSION_SUMMARY.txt"))
		for _, want := range []string{"Turns: " + string(rune('0'+n)), "Task: " + task, "Winner: gemini", "gemini2 -> gemini", "Tokens: 1900 in / 300 out"} {
			if !strings.Contains(sum, want) {
				t.Errorf("summary after turn %d lacks %q:\n%s", n, want, sum)
			}
		}
		// The agent's workspace is cleared for the next turn; the stored copy stays.
		if err := os.RemoveAll(ws); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing else in the session folder (no temp leftovers).
	ents, _ := os.ReadDir(ses.Dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"SESSION_SUMMARY.txt", "turn_1", "turn_2", "turn_3"}; !slices.Equal(names, want) {
		t.Errorf("session folder holds %v, want %v", names, want)
	}

	// Resume (--session ID / --continue): the same history and last workspace.
	st2, _ := Open(filepath.Join(base, ".massgen", "sessions"))
	for _, get := range []func() (*Session, error){func() (*Session, error) { return st2.Get(ses.ID) }, st2.Latest} {
		again, err := get()
		if err != nil {
			t.Fatal(err)
		}
		h := again.History()
		if len(h) != 3 || h[1].Task != tasks[1] || h[2].Answer != "Done: "+tasks[2]+"\nline 2" {
			t.Fatalf("history after reopen: %+v", h)
		}
		if again.LastWorkspace() != ses.LastWorkspace() {
			t.Fatalf("LastWorkspace after reopen %q, want %q", again.LastWorkspace(), ses.LastWorkspace())
		}
		if tr := again.Turns(); tr[0].Tokens["gemini"].Input != 1000 || !tr[0].Ended.Equal(t0.Add(90*time.Second)) {
			t.Fatalf("turn 1 after reopen: %+v", tr[0])
		}
	}
}

func TestListLatestAndIDs(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Latest(); !errors.Is(err, ErrNoSessions) {
		t.Fatalf("Latest on empty store: %v", err)
	}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.Local)
	// A session exists once its first turn is saved: nothing on disk before.
	a, _ := st.New(t0)
	if _, err := os.Stat(a.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a new session's folder exists before its first turn: %v", err)
	}
	if _, err := a.SaveTurn(Turn{Task: "first", Answer: "1"}); err != nil {
		t.Fatal(err)
	}
	b, err := st.New(t0) // same second
	if err != nil {
		t.Fatal(err)
	}
	if b.ID != "session_20250102_030405_2" {
		t.Fatalf("second session in the same second: %q", b.ID)
	}
	if _, err := b.SaveTurn(Turn{Task: "hello", Answer: "hi"}); err != nil {
		t.Fatal(err)
	}
	// An empty folder an older massgen left, the latest by its id: listed, but not Latest.
	c := filepath.Join(st.Root(), "session_20250102_030505")
	if err := os.Mkdir(c, 0o700); err != nil {
		t.Fatal(err)
	}
	// Not sessions: ignored.
	writeFile(t, filepath.Join(st.Root(), "notes.txt"), "x")
	if err := os.Mkdir(filepath.Join(st.Root(), "session_bogus"), 0o755); err != nil {
		t.Fatal(err)
	}
	list, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range list {
		ids = append(ids, in.ID)
	}
	if want := []string{a.ID, b.ID, filepath.Base(c)}; !slices.Equal(ids, want) {
		t.Fatalf("List = %v, want %v", ids, want)
	}
	if list[1].Turns != 1 || list[1].LastTask != "hello" || list[2].Turns != 0 {
		t.Fatalf("List details: %+v", list)
	}
	if l, _ := st.Latest(); l.ID != b.ID {
		t.Fatalf("Latest = %s, want %s (the empty folder is passed over)", l.ID, b.ID)
	}
	tests := []struct{ id, want string }{
		{"../../etc", "not a session id"},
		{"session_20250102_030405/../x", "not a session id"},
		{"session_20990101_000000", "no session"},
	}
	for _, tt := range tests {
		if _, err := st.Get(tt.id); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Get(%q) = %v, want error with %q", tt.id, err, tt.want)
		}
	}
}

func TestKilledTurnLeavesNothingHalfWritten(t *testing.T) {
	st, _ := Open(t.TempDir())
	ses, _ := st.New(time.Now())
	if _, err := ses.SaveTurn(Turn{Task: "one", Answer: "1"}); err != nil {
		t.Fatal(err)
	}
	// What a run killed while saving turn 2 leaves: a hidden build folder and a temp file.
	writeFile(t, filepath.Join(ses.Dir, ".turn_2-123", "answer.txt"), "half")
	writeFile(t, filepath.Join(ses.Dir, ".SESSION_SUMMARY.txt-999"), "half")
	again, err := st.Get(ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := again.History(); len(h) != 1 || h[0].Task != "one" {
		t.Fatalf("history: %+v", h)
	}
	// The next turn is turn_2, complete.
	dir, err := again.SaveTurn(Turn{Task: "two", Answer: "2"})
	if err != nil || filepath.Base(dir) != "turn_2" {
		t.Fatalf("SaveTurn: %q %v", dir, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "workspace")); err != nil || !fi.IsDir() {
		t.Fatal("turn without a workspace has no workspace/ folder")
	}
	// A corrupt metadata.json is reported with its path.
	writeFile(t, filepath.Join(dir, "metadata.json"), "{")
	if _, err := st.Get(ses.ID); err == nil || !strings.Contains(err.Error(), filepath.Join("turn_2", "metadata.json")) {
		t.Fatalf("corrupt metadata: %v", err)
	}
}

func TestWorkspaceCopyIsSafe(t *testing.T) {
	base := t.TempDir()
	st, _ := Open(filepath.Join(base, "sessions"))
	ses, _ := st.New(time.Now())
	ws := filepath.Join(base, "ws")
	writeFile(t, filepath.Join(base, "secret"), "secret")
	writeFile(t, filepath.Join(ws, "index.html"), "<p>")
	if err := os.Symlink("../secret", filepath.Join(ws, "leak")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("index.html", filepath.Join(ws, "home.html")); err != nil {
		t.Fatal(err)
	}
	dir, err := ses.SaveTurn(Turn{Task: "t", Answer: "a", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "workspace", "leak")); !os.IsNotExist(err) {
		t.Error("symlink out of the workspace was copied")
	}
	if tg, err := os.Readlink(filepath.Join(dir, "workspace", "home.html")); err != nil || tg != "index.html" {
		t.Errorf("inside symlink: %q %v", tg, err)
	}
	// A copy, not a link: changing the workspace later does not change the session.
	writeFile(t, filepath.Join(ws, "index.html"), "changed")
	if got := readFile(t, filepath.Join(dir, "workspace", "index.html")); got != "<p>" {
		t.Errorf("stored workspace follows the live one: %q", got)
	}
}
