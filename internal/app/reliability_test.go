package app

import (
	"bufio"
	"context"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/runlock"
	"github.com/massgen-go/massgen/orchestrator"
)

// A second run in a project refuses at once with exit 5, naming the run that holds it, and
// writes nothing under .massgen/logs.
func TestSecondRunIsBusy(t *testing.T) {
	e := newTestEnv(t, "")
	e.Write(t, "c.yaml", workspaceConfig)
	held, err := runlock.Acquire(context.Background(), filepath.Join(e.Wd, ".massgen"), runlock.Holder{PID: 4242}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.ConfigName, opts.Question, opts.Yes = "c.yaml", "q", true
	err = runRun(context.Background(), opts)
	if code := cmdutil.CodeOf(err); code != cmdutil.ExitBusy {
		t.Fatalf("exit %d (%v), want %d", code, err, cmdutil.ExitBusy)
	}
	if !strings.Contains(err.Error(), "pid 4242") || !strings.Contains(err.Error(), "--wait") {
		t.Errorf("message: %v", err)
	}
	if len(rec.tasks) != 0 {
		t.Error("the turn ran")
	}
	if m, _ := filepath.Glob(filepath.Join(e.Wd, ".massgen", "logs", "*")); len(m) != 0 {
		t.Errorf("a busy run made log folders: %v", m)
	}
}

// A task over the limit is refused with exit 2 and a message naming the flag and the key; the
// limit is raised by either. Piped interactive input is read line by line without keeping an
// over-long line.
func TestTaskSizeLimit(t *testing.T) {
	big := strings.Repeat("x", 2000)
	tests := []struct {
		name     string
		flag     int    // --max-task-bytes
		key      string // orchestrator.max_task_bytes
		question string
		stdin    string
		wantCode int
		wantRan  []string
	}{
		{"question under the default", 0, "", "small", "", 0, []string{"small"}},
		{"question over the flag", 1000, "", big, "", cmdutil.ExitUsage, nil},
		{"question over the key", 0, "1000", big, "", cmdutil.ExitUsage, nil},
		{"the flag raises the key", 4000, "1000", big, "", 0, []string{big}},
		{"piped line over the limit stops the run", 1000, "", "", "first\n" + big + "\nthird\n", cmdutil.ExitUsage, []string{"first"}},
		{"piped last line without newline", 1000, "", "", big, cmdutil.ExitUsage, nil},
		{"piped line at the limit", 2000, "", "", big + "\n", 0, []string{big}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, tt.stdin)
			cfg := workspaceConfig
			if tt.key != "" {
				cfg += "  max_task_bytes: " + tt.key + "\n"
			}
			e.Write(t, "c.yaml", cfg)
			rec := &recorder{}
			opts := e.runOpts(rec)
			opts.ConfigName, opts.Question, opts.Yes, opts.MaxTaskBytes = "c.yaml", tt.question, true, tt.flag
			err := runRun(context.Background(), opts)
			if code := cmdutil.CodeOf(err); code != tt.wantCode {
				t.Fatalf("exit %d (%v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode == cmdutil.ExitUsage {
				for _, want := range []string{"2000 bytes", "limit of 1000", "--max-task-bytes", "orchestrator.max_task_bytes"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("message lacks %q: %v", want, err)
					}
				}
			}
			if strings.Join(rec.tasks, "|") != strings.Join(tt.wantRan, "|") {
				t.Errorf("ran %d tasks %.40q, want %.40q", len(rec.tasks), rec.tasks, tt.wantRan)
			}
		})
	}
}

// readLine keeps at most the limit of an over-long line in memory, whatever the line's size.
func TestReadLineBounded(t *testing.T) {
	const size = 8 << 20
	r := bufio.NewReaderSize(io.MultiReader(&repeatReader{n: size}, strings.NewReader("\nnext\n")), 4096)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, ok, err := readLine(context.Background(), r, 1024)
	runtime.ReadMemStats(&after)
	var tooLarge *taskTooLargeError
	if !ok || !errors.As(err, &tooLarge) || tooLarge.size != size {
		t.Fatalf("ok %v, err %v, want a taskTooLargeError of %d bytes", ok, err, size)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("reading an %d-byte line allocated %d bytes", size, grew)
	}
	if line, ok, err := readLine(context.Background(), r, 1024); !ok || err != nil || line != "next\n" {
		t.Errorf("the next line = %q %v %v", line, ok, err)
	}
}

// repeatReader yields n bytes of 'x'.
type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n)
	for i := range n {
		p[i] = 'x'
	}
	r.n -= n
	return n, nil
}

// The event stream decides who failed and what was not saved; the outcome decides the code.
func TestOutcomeFromEvents(t *testing.T) {
	cfg := &configs.Config{Agents: []configs.Agent{{ID: "alpha"}, {ID: "beta"}, {ID: "gamma"}}}
	ev := func(kind orchestrator.EventKind, agent, text string) orchestrator.Event {
		return orchestrator.Event{Kind: kind, Agent: agent, Text: text}
	}
	tests := []struct {
		name       string
		events     []orchestrator.Event
		stoppedBy  string
		wantFailed []string
		wantSaved  int // NotSaved lines
		wantCode   int
	}{
		{"clean", []orchestrator.Event{ev(orchestrator.EventAnswer, "alpha", "x")}, "", nil, 0, cmdutil.ExitOK},
		{"stopped agents in config order", []orchestrator.Event{
			ev(orchestrator.EventStopped, "gamma", "agent timeout (5s) reached"),
			ev(orchestrator.EventStopped, "beta", "backend error: the reply ended early"),
		}, "some agents were stopped: ...", []string{"beta", "gamma"}, 0, cmdutil.ExitPartial},
		{"final presentation failed", []orchestrator.Event{ev(orchestrator.EventError, "alpha", "final presentation failed: boom")}, "", []string{"alpha"}, 0, cmdutil.ExitPartial},
		{"snapshot not saved", []orchestrator.Event{ev(orchestrator.EventError, "beta", "saving the answer snapshot: no space left on device")}, "", nil, 1, cmdutil.ExitPartial},
		{"an MCP server is a warning", []orchestrator.Event{ev(orchestrator.EventError, "beta", "MCP server unavailable, going on without it: x")}, "", nil, 0, cmdutil.ExitOK},
		{"timeout", nil, orchestrator.StoppedByTimeout, nil, 0, cmdutil.ExitTimeout},
		{"timeout and a failure", []orchestrator.Event{ev(orchestrator.EventStopped, "beta", "x")}, orchestrator.StoppedByTimeout, []string{"beta"}, 0, cmdutil.ExitPartial},
		{"answer now", nil, orchestrator.StoppedByUser, nil, 0, cmdutil.ExitOK},
		{"budget", nil, orchestrator.StoppedByBudget, nil, 0, cmdutil.ExitBudget},
		{"an agent's own budget is not a failure", []orchestrator.Event{{Kind: orchestrator.EventStopped, Agent: "beta", Text: "its budget of $0.30 was spent", Budget: true}},
			"", nil, 0, cmdutil.ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newOutcomeRecorder(cfg)
			for _, e := range tt.events {
				r.handle(e)
			}
			o := r.outcome(&orchestrator.Result{StoppedBy: tt.stoppedBy})
			var failed []string
			for _, f := range o.Failed {
				failed = append(failed, f.Agent)
			}
			if strings.Join(failed, ",") != strings.Join(tt.wantFailed, ",") || len(o.NotSaved) != tt.wantSaved || o.code() != tt.wantCode {
				t.Errorf("failed %v, not saved %v, code %d; want %v, %d, %d", failed, o.NotSaved, o.code(), tt.wantFailed, tt.wantSaved, tt.wantCode)
			}
		})
	}
}

// A run with no answer ends with one line per failed agent and says "no agent produced an
// answer" once (the display shows the event; silent mode prints it).
func TestNoAnswerReportedOnce(t *testing.T) {
	for _, display := range []string{"plain", "silent"} {
		t.Run(display, func(t *testing.T) {
			e := newTestEnv(t, "")
			e.Write(t, "c.yaml", workspaceConfig)
			opts := e.runOpts(&recorder{})
			opts.ConfigName, opts.Question, opts.Yes, opts.Display = "c.yaml", "q", true, display
			opts.RunTurn = func(ctx context.Context, _ *RunOptions, tr *Turn) (*orchestrator.Result, error) {
				tr.Outcome = &Outcome{Failed: []AgentFailure{{"a1", "backend error: the reply ended early"}, {"a2", "backend error: HTTP 500"}}}
				return nil, orchestrator.ErrNoAnswer
			}
			err := runRun(context.Background(), opts)
			if code := cmdutil.CodeOf(err); code != cmdutil.ExitFailure {
				t.Fatalf("exit %d (%v)", code, err)
			}
			var printed strings.Builder
			printed.WriteString(e.ErrOut.String())
			if cmdutil.ToPrint(err) {
				printed.WriteString("Error: " + err.Error() + "\n") // what Execute prints
			}
			got := printed.String()
			wantNoAnswer := 0
			if display == "silent" {
				wantNoAnswer = 1 // no display showed the event
			}
			if n := strings.Count(got, orchestrator.ErrNoAnswer.Error()); n != wantNoAnswer {
				t.Errorf("%q appears %d times, want %d:\n%s", orchestrator.ErrNoAnswer, n, wantNoAnswer, got)
			}
			lines := strings.Split(strings.TrimSpace(got), "\n")
			last := lines[len(lines)-2:]
			if last[0] != "Failed: agent a1: backend error: the reply ended early" || last[1] != "Failed: agent a2: backend error: HTTP 500" {
				t.Errorf("the run ends with:\n%s", strings.Join(last, "\n"))
			}
		})
	}
}

// Interactive turns that answered but are partial keep the session going; the run ends with the
// worst code.
func TestInteractivePartialGoesOn(t *testing.T) {
	e := newTestEnv(t, "one\ntwo\n")
	e.Write(t, "c.yaml", workspaceConfig)
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.ConfigName, opts.Yes = "c.yaml", true
	opts.RunTurn = func(ctx context.Context, o *RunOptions, tr *Turn) (*orchestrator.Result, error) {
		if tr.Task == "one" {
			tr.Outcome = &Outcome{Failed: []AgentFailure{{"a2", "agent timeout (5s) reached"}}}
		}
		return rec.run(ctx, o, tr)
	}
	err := runRun(context.Background(), opts)
	if code := cmdutil.CodeOf(err); code != cmdutil.ExitPartial {
		t.Fatalf("exit %d (%v), want partial", code, err)
	}
	if strings.Join(rec.tasks, ",") != "one,two" {
		t.Errorf("ran %v", rec.tasks)
	}
	if !strings.Contains(e.ErrOut.String(), "Failed: agent a2: agent timeout (5s) reached") {
		t.Errorf("stderr:\n%s", e.ErrOut)
	}
}
