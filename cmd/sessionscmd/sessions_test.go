package sessionscmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/session"
)

func run(t *testing.T, wd string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getwd:     func() (string, error) { return wd, nil },
		LookupEnv: func(string) (string, bool) { return "", false },
		HomeDir:   func() (string, error) { return t.TempDir(), nil },
	}
	cmd := NewCmd(f)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestSessionsListAndShow(t *testing.T) {
	wd := t.TempDir()
	store, err := session.Open(filepath.Join(wd, ".massgen", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 9, 28, 14, 30, 22, 0, time.UTC)
	older, err := store.New(start)
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(wd, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "app.js"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	turn := func(s *session.Session, task, answer string, at time.Time, timeline ...session.Moment) {
		t.Helper()
		if _, err := s.SaveTurn(session.Turn{
			Task: task, Answer: answer, Winner: "agent_a", Agents: []string{"agent_a", "agent_b"},
			Votes:   map[string]string{"agent_a": "agent_a", "agent_b": "agent_a"},
			Started: at, Ended: at.Add(time.Minute), Workspace: ws, Timeline: timeline,
		}); err != nil {
			t.Fatal(err)
		}
	}
	sec := func(n int) time.Time { return start.Add(time.Duration(n) * time.Second) }
	turn(older, "Create a React app with authentication", "Created the app.", start,
		session.Moment{Time: sec(0), Kind: "run_start"},
		session.Moment{Time: sec(4), Kind: "answer", Agent: "agent_b"},
		session.Moment{Time: sec(5), Kind: "restart", Agent: "agent_a", Text: "new answer from agent2"},
		session.Moment{Time: sec(9), Kind: "answer", Agent: "agent_a"},
		session.Moment{Time: sec(12), Kind: "vote", Agent: "agent_a", Target: "agent_a"},
		session.Moment{Time: sec(12), Kind: "vote", Agent: "agent_b", Target: "agent_a"},
		session.Moment{Time: sec(12), Kind: "decision", Agent: "agent_a", Target: "agent_a", Text: "agent_a (agent1) wins with 2 of 2 votes"},
		session.Moment{Time: sec(30), Kind: "final", Agent: "agent_a"})
	turn(older, "Add user profile management", "Added profiles.", start.Add(time.Hour)) // stored before timelines
	newer, err := store.New(start.Add(24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	turn(newer, "Write a haiku", "Autumn moon rises", start.Add(24*time.Hour))

	out, _, err := run(t, wd, "list")
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("list output:\n%s", out)
	}
	if !strings.Contains(lines[1], older.ID) || !strings.Contains(lines[1], " 2 ") || !strings.Contains(lines[1], "Add user profile management") {
		t.Errorf("row for %s: %q", older.ID, lines[1])
	}
	if !strings.Contains(lines[2], newer.ID) || !strings.Contains(lines[2], " 1 ") {
		t.Errorf("row for %s: %q", newer.ID, lines[2])
	}

	out, _, err = run(t, wd, "show", older.ID)
	if err != nil {
		t.Fatalf("show: %v", err)
	}
	for _, want := range []string{"Session " + older.ID, "Turns:   2", "--- Turn 1", "Create a React app with authentication", "Created the app.", "--- Turn 2", "Added profiles.", "Winner:  agent_a", "Agents:  agent_a, agent_b",
		// Turn 1: the tally and the timeline as the run printed them.
		"Votes (2 cast):\n" +
			"  agent_a #1  ████████████████████  2/2  agent_a, agent_b  winner\n" +
			"  agent_b #1  ░░░░░░░░░░░░░░░░░░░░  0/2\n" +
			"Timeline:\n" +
			"    0:04  answer   agent_b #1\n" +
			"    0:05  restart  agent_a\n" +
			"    0:09  answer   agent_a #1\n" +
			"    0:12  vote     agent_a → agent_a #1, agent_b → agent_a #1\n" +
			"    0:12  decided  agent_a (agent1) wins with 2 of 2 votes\n" +
			"    0:30  final    agent_a presented the final answer\n",
		// Turn 2, stored without a timeline: the tally from the votes.
		"--- Turn 2 (" + filepath.Join(older.Dir, "turn_2") + ") ---\nWhen:    " + start.Add(time.Hour).Local().Format("2006-01-02 15:04:05") + " (1m0s)\nAgents:  agent_a, agent_b\nWinner:  agent_a\n" +
			"Votes (2 cast):\n  agent_a  ████████████████████  2/2  agent_a, agent_b  winner\nWorkspace:", "massgen --session " + older.ID} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}

	out, _, err = run(t, wd, "show") // latest
	if err != nil || !strings.Contains(out, "Session "+newer.ID) || !strings.Contains(out, "Autumn moon rises") {
		t.Errorf("show (latest) = %v\n%s", err, out)
	}

	_, _, err = run(t, wd, "show", "session_19990101_000000")
	if cmdutil.CodeOf(err) != cmdutil.ExitFailure || !strings.Contains(err.Error(), "session_19990101_000000") {
		t.Errorf("show unknown = %v (code %d)", err, cmdutil.CodeOf(err))
	}
}

func TestSessionsListEmpty(t *testing.T) {
	out, errOut, err := run(t, t.TempDir(), "list")
	if err != nil || out != "" || !strings.Contains(errOut, "No sessions in") {
		t.Errorf("list with no sessions: err=%v out=%q err=%q", err, out, errOut)
	}
}

func TestSessionsShowWithoutSessions(t *testing.T) {
	wd := t.TempDir()
	_, _, err := run(t, wd, "show")
	if cmdutil.CodeOf(err) != cmdutil.ExitFailure || err == nil || !strings.Contains(err.Error(), "no sessions in") {
		t.Errorf("show with no sessions: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(wd, ".massgen")); !os.IsNotExist(statErr) {
		t.Errorf("show created .massgen: %v", statErr)
	}
}

// TestShowListsChanges: a turn that changed context paths shows its files with line counts,
// how to diff it, and whether it was undone.
func TestShowListsChanges(t *testing.T) {
	wd := t.TempDir()
	store, err := session.Open(filepath.Join(wd, ".massgen", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.New(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	trash := filepath.Join(wd, ".massgen", "trash")
	cs := &changes.ChangeSet{Version: 1, Dir: filepath.Join(trash, "j"), TrashRoot: trash, Records: []changes.ChangeRecord{
		{Path: "/p/new.txt", Before: changes.EntryState{Type: changes.EntryAbsent}, After: changes.EntryState{Type: changes.EntryFile}, Added: 3},
	}}
	if _, err := s.SaveTurn(session.Turn{Task: "t", Answer: "a", Workspace: t.TempDir(), Changes: cs}); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, wd, "show")
	if err != nil || !strings.Contains(out, "Changed: 1 file(s) in context paths (massgen diff --session "+s.ID+" --turn 1)") ||
		!strings.Contains(out, "created  /p/new.txt  +3") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	if err := s.MarkUndone(1, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := run(t, wd, "show"); !strings.Contains(out, ", undone ") {
		t.Errorf("show after undo:\n%s", out)
	}
}
