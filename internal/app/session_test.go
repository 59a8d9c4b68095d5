package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/orchestrator"
)

// sessionRunner is a TurnRunner standing in for the orchestrator: it records what each turn was
// given (History, ReadOnly) and reports a Result whose final workspace holds one file per turn.
type sessionRunner struct {
	t        *testing.T
	root     string
	tasks    []string
	history  [][]orchestrator.Exchange
	readOnly [][]string
	// onTurn, when set, runs inside the turn (e.g. to press Ctrl-C).
	onTurn func(ctx context.Context, task string) error
}

func (r *sessionRunner) run(ctx context.Context, opts *RunOptions, t *Turn) (*orchestrator.Result, error) {
	task := t.Task
	r.tasks = append(r.tasks, task)
	r.history = append(r.history, t.History)
	r.readOnly = append(r.readOnly, t.ReadOnly)
	if r.onTurn != nil {
		if err := r.onTurn(ctx, task); err != nil {
			return nil, err
		}
	}
	n := len(r.tasks)
	ws := filepath.Join(r.root, "final_ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(ws, "turn"+string(rune('0'+n))+".txt"), []byte(task), 0o644); err != nil {
		return nil, err
	}
	// As the final agent's tools do: the journal keeps the original, then the file is written.
	delivered := filepath.Join(r.root, "delivered.txt")
	if t.Journal != nil {
		w, err := safefs.Resolve(delivered, true)
		if err != nil {
			return nil, err
		}
		err = t.Journal.KeepOriginal(ctx, w.Dir, w.Name, w.Path)
		w.Close()
		if err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(delivered, []byte(task), 0o644); err != nil {
		return nil, err
	}
	answer := "answer " + string(rune('0'+n))
	return &orchestrator.Result{
		FinalAnswer: answer, Winner: "a1", WinnerAnon: "agent1",
		Votes:          map[string]string{"a1": "a1", "a2": "a1"},
		Usage:          map[string]backends.Usage{"a1": {InputTokens: 100, OutputTokens: 10}},
		FinalWorkspace: ws,
	}, nil
}

func TestInteractiveSessionKeepsTurnsAndContinues(t *testing.T) {
	e := newTestEnv(t, "first task\nsecond task\nthird task\n")
	e.Write(t, "c.yaml", workspaceConfig)
	rr := &sessionRunner{t: t, root: t.TempDir()}
	opts := e.runOpts(nil)
	opts.RunTurn, opts.ConfigName, opts.Yes = rr.run, "c.yaml", true
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, e.ErrOut)
	}
	if got := e.Out.String(); got != "answer 1\n--- turn 2 ---\nanswer 2\n--- turn 3 ---\nanswer 3\n" {
		t.Errorf("stdout = %q", got)
	}
	sessions, _ := filepath.Glob(filepath.Join(e.Wd, ".massgen", "sessions", "session_*"))
	if len(sessions) != 1 {
		t.Fatalf("sessions: %v\nstderr:\n%s", sessions, e.ErrOut)
	}
	sdir := sessions[0]
	// Turn 1 had nothing before it; turn 2 got turn 1's exchange and its saved workspace.
	if rr.history[0] != nil || rr.readOnly[0] != nil {
		t.Errorf("turn 1 got history %v, read-only %v", rr.history[0], rr.readOnly[0])
	}
	wantHist := []orchestrator.Exchange{{User: "first task", Assistant: "answer 1"}, {User: "second task", Assistant: "answer 2"}}
	if !reflect.DeepEqual(rr.history[1], wantHist[:1]) || !reflect.DeepEqual(rr.history[2], wantHist) {
		t.Errorf("history = %#v", rr.history)
	}
	if len(rr.readOnly[1]) != 1 || !strings.HasPrefix(rr.readOnly[1][0], filepath.Join(sdir, "turn_1")) {
		t.Errorf("turn 2 read-only = %v, want turn_1's workspace in %s", rr.readOnly[1], sdir)
	} else if _, err := os.Stat(filepath.Join(rr.readOnly[1][0], "turn1.txt")); err != nil {
		t.Errorf("turn 1's workspace was not kept: %v", err)
	}
	for n := 1; n <= 3; n++ {
		td := filepath.Join(sdir, "turn_"+string(rune('0'+n)))
		b, err := os.ReadFile(filepath.Join(td, "answer.txt"))
		if err != nil || !strings.Contains(string(b), "answer "+string(rune('0'+n))) {
			t.Errorf("turn %d answer.txt = %q, %v", n, b, err)
		}
		var meta map[string]any
		raw, err := os.ReadFile(filepath.Join(td, "metadata.json"))
		if err != nil || json.Unmarshal(raw, &meta) != nil {
			t.Errorf("turn %d metadata.json: %v %s", n, err, raw)
			continue
		}
		for _, want := range []string{"first task", "second task", "third task"}[n-1 : n] {
			if !strings.Contains(string(raw), want) {
				t.Errorf("turn %d metadata lacks the task %q: %s", n, want, raw)
			}
		}
		for _, want := range []string{`"a1"`, "delivered.txt"} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("turn %d metadata lacks %s: %s", n, want, raw)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(sdir, "SESSION_SUMMARY.txt")); err != nil {
		t.Errorf("SESSION_SUMMARY.txt: %v", err)
	}

	// --continue resumes the latest session: turn 4 sees the three turns before it.
	e2 := newTestEnv(t, "fourth task\n")
	e2.Wd = e.Wd
	rr2 := &sessionRunner{t: t, root: t.TempDir()}
	opts2 := e2.runOpts(nil)
	opts2.RunTurn, opts2.ConfigName, opts2.Yes, opts2.Continue = rr2.run, "c.yaml", true, true
	if err := runRun(context.Background(), opts2); err != nil {
		t.Fatalf("--continue: %v\nstderr:\n%s", err, e2.ErrOut)
	}
	if len(rr2.history) != 1 || len(rr2.history[0]) != 3 || rr2.history[0][2].User != "third task" {
		t.Errorf("--continue history = %#v", rr2.history)
	}
	if !strings.Contains(e2.ErrOut.String(), "Continuing session "+filepath.Base(sdir)) {
		t.Errorf("stderr lacks the resumed session:\n%s", e2.ErrOut)
	}
	if _, err := os.Stat(filepath.Join(sdir, "turn_4", "answer.txt")); err != nil {
		t.Errorf("turn 4 not saved in the resumed session: %v", err)
	}

	// --session ID with a question adds one turn to that session.
	e3 := newTestEnv(t, "")
	e3.Wd = e.Wd
	rr3 := &sessionRunner{t: t, root: t.TempDir()}
	opts3 := e3.runOpts(nil)
	opts3.RunTurn, opts3.ConfigName, opts3.Yes = rr3.run, "c.yaml", true
	opts3.SessionID, opts3.Question = filepath.Base(sdir), "fifth task"
	if err := runRun(context.Background(), opts3); err != nil {
		t.Fatalf("--session: %v", err)
	}
	if len(rr3.history[0]) != 4 {
		t.Errorf("--session history has %d exchanges, want 4", len(rr3.history[0]))
	}

	// An unknown session is a usage error naming it.
	e4 := newTestEnv(t, "")
	e4.Wd = e.Wd
	opts4 := e4.runOpts(nil)
	opts4.RunTurn, opts4.ConfigName, opts4.Yes = rr3.run, "c.yaml", true
	opts4.SessionID, opts4.Question = "session_19990101_000000", "x"
	err := runRun(context.Background(), opts4)
	if cmdutil.CodeOf(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "session_19990101_000000") {
		t.Errorf("unknown --session: %v (code %d)", err, cmdutil.CodeOf(err))
	}
}

func TestSlashCommands(t *testing.T) {
	e := newTestEnv(t, "/help\n/status\n/context shared:read\n/context missing-dir\n/bogus\n/status\n/quit\nnever run\n")
	e.Write(t, "c.yaml", workspaceConfig)
	e.Write(t, "shared/readme.txt", "hi")
	rr := &sessionRunner{t: t, root: t.TempDir()}
	opts := e.runOpts(nil)
	opts.RunTurn, opts.ConfigName, opts.Yes = rr.run, "c.yaml", true
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(rr.tasks) != 0 {
		t.Errorf("commands ran as tasks: %q", rr.tasks)
	}
	errOut := e.ErrOut.String()
	for _, want := range []string{
		"/context [PATH[:read|write]]", // /help
		"Session: new",                 // /status before any turn
		"Agents: a1 (openai gpt-5), a2 (claude claude-sonnet-4)",
		"Added " + filepath.Join(e.Wd, "shared") + " (read)",
		"missing-dir", // the error names the missing path
		"Unknown command /bogus",
		"Context paths:\n   " + e.Wd + " (write)\n   " + filepath.Join(e.Wd, "shared") + " (read)\n", // --yes's, then /context's
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "missing-dir (") {
		t.Errorf("a missing context path was added:\n%s", errOut)
	}
}

func TestResetStartsANewSession(t *testing.T) {
	e := newTestEnv(t, "one\n/reset\ntwo\n")
	e.Write(t, "c.yaml", workspaceConfig)
	rr := &sessionRunner{t: t, root: t.TempDir()}
	opts := e.runOpts(nil)
	now := opts.Now()
	calls := 0
	opts.Now = func() time.Time { calls++; return now.Add(time.Duration(calls) * time.Hour) }
	opts.RunTurn, opts.ConfigName, opts.Yes = rr.run, "c.yaml", true
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if len(rr.history) != 2 || len(rr.history[1]) != 0 || len(rr.readOnly[1]) != 0 {
		t.Errorf("after /reset turn two got history %v, read-only %v", rr.history[1], rr.readOnly[1])
	}
	sessions, _ := filepath.Glob(filepath.Join(e.Wd, ".massgen", "sessions", "session_*"))
	if len(sessions) != 2 {
		t.Errorf("sessions after /reset: %v", sessions)
	}
}

// On a terminal, Ctrl-C cancels the turn in progress only; the session goes on.
func TestCtrlCCancelsOnlyTheTurn(t *testing.T) {
	e := newTestEnv(t, "slow task\nnext task\n")
	e.IO.StdinTTY = true
	e.Write(t, "c.yaml", workspaceConfig)
	root, cancelRoot := context.WithCancel(context.Background())
	defer cancelRoot()
	i := &interrupter{root: cancelRoot}
	ctx := context.WithValue(root, interrupterKey{}, i)
	rr := &sessionRunner{t: t, root: t.TempDir(), onTurn: func(ctx context.Context, task string) error {
		if task != "slow task" {
			return nil
		}
		i.interrupt() // Ctrl-C while the turn runs
		<-ctx.Done()
		return ctx.Err()
	}}
	opts := e.runOpts(nil)
	opts.RunTurn, opts.ConfigName, opts.Yes = rr.run, "c.yaml", true
	opts.IO.StdinTTY = true // at a terminal (a piped session ends with the cancel)
	if err := runRun(ctx, opts); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, e.ErrOut)
	}
	if root.Err() != nil {
		t.Error("the first Ctrl-C ended the whole run")
	}
	if !strings.Contains(e.ErrOut.String(), "Turn cancelled; the session is kept") {
		t.Errorf("stderr:\n%s", e.ErrOut)
	}
	if e.Out.String() != "answer 2\n" || !reflect.DeepEqual(rr.tasks, []string{"slow task", "next task"}) {
		t.Errorf("stdout %q, tasks %q", e.Out, rr.tasks)
	}
	// No turn registered any more: the next Ctrl-C ends everything.
	i.interrupt()
	if root.Err() == nil {
		t.Error("a Ctrl-C with no turn in progress did not cancel the run")
	}
}

// A piped session (a script) ends with the cancel: exit 130, the next task is not run.
func TestCtrlCEndsAPipedSession(t *testing.T) {
	e := newTestEnv(t, "slow task\nnext task\n")
	e.Write(t, "c.yaml", workspaceConfig)
	root, cancelRoot := context.WithCancel(context.Background())
	defer cancelRoot()
	i := &interrupter{root: cancelRoot}
	ctx := context.WithValue(root, interrupterKey{}, i)
	rr := &sessionRunner{t: t, root: t.TempDir(), onTurn: func(ctx context.Context, task string) error {
		i.interrupt() // Ctrl-C while the turn runs
		<-ctx.Done()
		return ctx.Err()
	}}
	opts := e.runOpts(nil)
	opts.RunTurn, opts.ConfigName, opts.Yes = rr.run, "c.yaml", true
	err := runRun(ctx, opts)
	if cmdutil.CodeOf(err) != cmdutil.ExitCanceled {
		t.Fatalf("run: %v (exit %d), want 130\nstderr:\n%s", err, cmdutil.CodeOf(err), e.ErrOut)
	}
	if !reflect.DeepEqual(rr.tasks, []string{"slow task"}) {
		t.Errorf("tasks run: %q", rr.tasks)
	}
}
