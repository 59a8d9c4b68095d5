package app

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/ask"
	"github.com/massgen-go/massgen/internal/testing/clienv"
	"github.com/massgen-go/massgen/orchestrator"
)

// testEnv is clienv's Env with this package's ways to run it.
type testEnv struct{ *clienv.Env }

func newTestEnv(t *testing.T, stdin string) *testEnv { return &testEnv{clienv.New(t, stdin)} }

// runOpts builds RunOptions like NewRootCmd does, with a recording TurnRunner.
func (e *testEnv) runOpts(rec *recorder) *RunOptions {
	f := e.Factory()
	return &RunOptions{IO: f.IO, LoadConfig: f.LoadRunConfig, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv,
		Now:     func() time.Time { return time.Date(2025, 9, 28, 14, 30, 22, 0, time.UTC) },
		Display: "auto", RunTurn: rec.run}
}

// recorder is a TurnRunner that records its calls.
type recorder struct {
	tasks  []string
	turn   *Turn // the last one
	failOn string
}

func (r *recorder) run(ctx context.Context, opts *RunOptions, t *Turn) (*orchestrator.Result, error) {
	r.tasks = append(r.tasks, t.Task)
	r.turn = t
	if t.Config == nil || t.Logger == nil || t.RunDir == "" {
		return nil, errors.New("the turn is not set up")
	}
	if t.Task == r.failOn {
		return nil, errors.New("boom")
	}
	return &orchestrator.Result{FinalAnswer: "answer to " + t.Task + "\n"}, nil
}

const workspaceConfig = clienv.WorkspaceConfig

// Before any prompt or model call, a run checks every agent's key and every MCP server command
// and lists all problems at once, naming the variables; it refuses with exit 2 and creates
// nothing.
func TestRunPreflightListsEveryProblem(t *testing.T) {
	e := newTestEnv(t, "")
	e.Vars = map[string]string{} // no keys at all
	e.IO.StdinTTY, e.IO.StderrTTY = true, true
	e.Write(t, "c.yaml", `agents:
  - id: a1
    backend: {type: openai, model: gpt-5, cwd: workspace1}
  - id: a2
    backend: {type: claude, model: claude-sonnet-4, cwd: workspace2}
  - id: a3
    backend:
      type: gemini
      model: gemini-2.5-flash
      mcp_servers: [{name: tool, command: massgen-test-no-such-command}]
`)
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.ConfigName, opts.Question = "c.yaml", "Write hello.txt"
	opts.PromptContextPaths = func(context.Context, ask.ContextPathOptions) ([]configs.ContextPath, error) {
		t.Error("the context-path prompt ran before the preflight refused")
		return nil, nil
	}
	err := runRun(context.Background(), opts)
	if code := cmdutil.CodeOf(err); code != cmdutil.ExitUsage {
		t.Fatalf("exit %d (%v), want 2; stderr:\n%s", code, err, e.ErrOut)
	}
	for _, want := range []string{
		"c.yaml:3: agents[0].backend.api_key: agent \"a1\": backend \"openai\": no API key: set OPENAI_API_KEY",
		"c.yaml:5: agents[1].backend.api_key: agent \"a2\": backend \"claude\": no API key: set ANTHROPIC_API_KEY",
		"agents[2].backend.api_key: agent \"a3\": backend \"gemini\": no API key: set GEMINI_API_KEY or GOOGLE_API_KEY",
		"agents[2].backend.mcp_servers[0].command: MCP server \"tool\": command \"massgen-test-no-such-command\" is not on PATH",
	} {
		if !strings.Contains(e.ErrOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, e.ErrOut)
		}
	}
	if len(rec.tasks) != 0 || e.Out.Len() != 0 {
		t.Errorf("a turn ran (%q) or stdout was written (%q)", rec.tasks, e.Out)
	}
	if _, err := os.Stat(filepath.Join(e.Wd, ".massgen")); !os.IsNotExist(err) {
		t.Errorf(".massgen/ was created: %v", err)
	}
	// The same config with the keys set and the server removed runs.
	e.Vars = map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GOOGLE_API_KEY": "k"}
	e.Write(t, "c.yaml", workspaceConfig)
	opts = e.runOpts(rec)
	opts.ConfigName, opts.Question, opts.Yes = "c.yaml", "Write hello.txt", true
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("with keys: %v\n%s", err, e.ErrOut)
	}
}

func TestRunQuestion(t *testing.T) {
	e := newTestEnv(t, "")
	e.Write(t, "c.yaml", workspaceConfig)
	e.Write(t, "src/main.go", "package main\n")
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.ConfigName, opts.Question, opts.Debug = "c.yaml", "Add tests", true
	opts.Contexts = []string{"src:write", "c.yaml:read"}
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if e.Out.String() != "answer to Add tests\n" {
		t.Errorf("stdout = %q", e.Out)
	}
	want := []configs.ContextPath{
		{Path: filepath.Join(e.Wd, "src"), Permission: "write"},
		{Path: filepath.Join(e.Wd, "c.yaml"), Permission: "read"},
	}
	if !reflect.DeepEqual(rec.turn.Config.Orchestrator.ContextPaths, want) {
		t.Errorf("context paths = %+v", rec.turn.Config.Orchestrator.ContextPaths)
	}
	if rec.turn.RunDir != filepath.Join(e.Wd, ".massgen/logs/log_20250928_143022") || rec.turn.Number != 1 {
		t.Errorf("RunDir/Turn = %s / %d", rec.turn.RunDir, rec.turn.Number)
	}
	if !strings.Contains(e.ErrOut.String(), "Context paths:\n   "+filepath.Join(e.Wd, "src")+" (write)") {
		t.Errorf("the context paths are shown before the run:\n%s", e.ErrOut)
	}
}

func TestInteractivePiped(t *testing.T) {
	e := newTestEnv(t, "first task\n\n  second task  \n")
	e.Write(t, "c.yaml", workspaceConfig)
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.ConfigName, opts.Yes = "c.yaml", true
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rec.tasks, []string{"first task", "second task"}) {
		t.Errorf("tasks = %q", rec.tasks)
	}
	// Each answer is separated from the previous one by a line "--- turn N ---" (README).
	if e.Out.String() != "answer to first task\n--- turn 2 ---\nanswer to second task\n" {
		t.Errorf("stdout = %q", e.Out)
	}
	if rec.turn.Number != 2 || rec.turn.RunDir != filepath.Join(e.Wd, ".massgen/logs/log_20250928_143022/turn_2") {
		t.Errorf("Turn = %d, RunDir = %s", rec.turn.Number, rec.turn.RunDir)
	}

	// Piped input stops at the first failed turn, with its exit code.
	e2 := newTestEnv(t, "one\nbad\nthree\n")
	e2.Write(t, "c.yaml", workspaceConfig)
	rec2 := &recorder{failOn: "bad"}
	opts2 := e2.runOpts(rec2)
	opts2.ConfigName = "c.yaml"
	err := runRun(context.Background(), opts2)
	if cmdutil.CodeOf(err) != cmdutil.ExitFailure || !reflect.DeepEqual(rec2.tasks, []string{"one", "bad"}) {
		t.Errorf("err = %v (code %d), tasks = %q", err, cmdutil.CodeOf(err), rec2.tasks)
	}

	// /quit ends the loop.
	e3 := newTestEnv(t, "one\n/quit\ntwo\n")
	e3.Write(t, "c.yaml", workspaceConfig)
	rec3 := &recorder{}
	opts3 := e3.runOpts(rec3)
	opts3.ConfigName = "c.yaml"
	if err := runRun(context.Background(), opts3); err != nil || !reflect.DeepEqual(rec3.tasks, []string{"one"}) {
		t.Errorf("err = %v, tasks = %q", err, rec3.tasks)
	}
}

func TestContextPromptConditions(t *testing.T) {
	noCWD := "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5}\n"
	tests := []struct {
		name           string
		config         string
		stdinTTY, tty  bool
		contexts       []string
		yes            bool
		wantPrompt     bool
		wantContextLen int
	}{
		{name: "terminal, cwd, no flags: prompt", config: workspaceConfig, stdinTTY: true, tty: true, wantPrompt: true, wantContextLen: 1},
		{name: "--yes: no prompt, its default (the current directory)", config: workspaceConfig, stdinTTY: true, tty: true, yes: true, wantContextLen: 1},
		{name: "--yes without a terminal: the default too", config: workspaceConfig, yes: true, wantContextLen: 1},
		{name: "--yes, no cwd: nothing to share", config: noCWD, stdinTTY: true, tty: true, yes: true},
		{name: "--context: no prompt", config: workspaceConfig, stdinTTY: true, tty: true, contexts: []string{"."}, wantContextLen: 1},
		{name: "no cwd: no prompt", config: noCWD, stdinTTY: true, tty: true},
		{name: "stdin not a terminal: no prompt", config: workspaceConfig, tty: true},
		{name: "stderr not a terminal: no prompt", config: workspaceConfig, stdinTTY: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, "")
			e.IO.StdinTTY, e.IO.StderrTTY = tt.stdinTTY, tt.tty
			e.Write(t, "c.yaml", tt.config)
			rec := &recorder{}
			opts := e.runOpts(rec)
			opts.ConfigName, opts.Question, opts.Contexts, opts.Yes = "c.yaml", "q", tt.contexts, tt.yes
			prompted := false
			opts.PromptContextPaths = func(ctx context.Context, o ask.ContextPathOptions) ([]configs.ContextPath, error) {
				prompted = true
				if o.Cwd != e.Wd || o.Out != e.IO.ErrOut {
					t.Errorf("prompt options: cwd %q, out is stderr: %v", o.Cwd, o.Out == e.IO.ErrOut)
				}
				return []configs.ContextPath{{Path: o.Cwd, Permission: "write"}}, nil
			}
			if err := runRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if prompted != tt.wantPrompt {
				t.Errorf("prompted = %v, want %v", prompted, tt.wantPrompt)
			}
			if got := len(rec.turn.Config.Orchestrator.ContextPaths); got != tt.wantContextLen {
				t.Errorf("context paths = %d, want %d", got, tt.wantContextLen)
			}
		})
	}
}

// byteReader returns one byte per Read, so each huh accessible field gets exactly its line.
type byteReader struct{ r io.Reader }

func (b byteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return b.r.Read(p[:1])
}

func TestContextPromptAccessible(t *testing.T) {
	e := newTestEnv(t, "")
	e.IO.In = byteReader{strings.NewReader("2\ntests/golden\n\n")} // Protected, one path, done
	e.IO.StdinTTY, e.IO.StderrTTY = true, true
	e.Vars["ACCESSIBLE"] = "1"
	e.Write(t, "c.yaml", workspaceConfig)
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.ConfigName, opts.Question = "c.yaml", "q"
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, e.ErrOut)
	}
	want := []configs.ContextPath{{Path: e.Wd, Permission: "write", ProtectedPaths: []string{filepath.Join(e.Wd, "tests/golden")}}}
	if !reflect.DeepEqual(rec.turn.Config.Orchestrator.ContextPaths, want) {
		t.Errorf("context paths = %+v", rec.turn.Config.Orchestrator.ContextPaths)
	}
	for _, s := range []string{"Add current directory as context path?", e.Wd + " (write)", "protected: " + filepath.Join(e.Wd, "tests/golden")} {
		if !strings.Contains(e.ErrOut.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, e.ErrOut)
		}
	}
	if e.Out.String() != "answer to q\n" {
		t.Errorf("stdout = %q (the prompt must not draw on stdout)", e.Out)
	}

	// End of input during the prompt cancels the run: exit 130.
	e2 := newTestEnv(t, "")
	e2.IO.In = byteReader{strings.NewReader("4\n")}
	e2.IO.StdinTTY, e2.IO.StderrTTY = true, true
	e2.Vars["ACCESSIBLE"] = "1"
	e2.Write(t, "c.yaml", workspaceConfig)
	opts2 := e2.runOpts(&recorder{})
	opts2.ConfigName, opts2.Question = "c.yaml", "q"
	if err := runRun(context.Background(), opts2); cmdutil.CodeOf(err) != cmdutil.ExitCanceled {
		t.Errorf("err = %v (code %d), want 130", err, cmdutil.CodeOf(err))
	}
}

func TestDefaultConfig(t *testing.T) {
	e := newTestEnv(t, "")
	e.Write(t, ".massgen/config.yaml", workspaceConfig)
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.Question, opts.Yes = "q", true
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if rec.turn.Config.Source != filepath.Join(e.Wd, ".massgen/config.yaml") {
		t.Errorf("Source = %s", rec.turn.Config.Source)
	}
}

func TestCancelledTurnExits130(t *testing.T) {
	e := newTestEnv(t, "")
	e.Write(t, "c.yaml", workspaceConfig)
	opts := e.runOpts(&recorder{})
	opts.ConfigName, opts.Question = "c.yaml", "q"
	opts.RunTurn = func(ctx context.Context, _ *RunOptions, _ *Turn) (*orchestrator.Result, error) {
		return nil, context.Canceled
	}
	if err := runRun(context.Background(), opts); cmdutil.CodeOf(err) != cmdutil.ExitCanceled {
		t.Errorf("code %d, want 130", cmdutil.CodeOf(err))
	}
}

// Ctrl-C while waiting for the next task ends the interactive loop with exit 130, without
// waiting for input.
func TestInteractiveCancelAtPrompt(t *testing.T) {
	e := newTestEnv(t, "")
	pr, pw := io.Pipe()
	defer pw.Close()
	e.IO.In = pr
	e.Write(t, "c.yaml", workspaceConfig)
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.ConfigName = "c.yaml"
	ctx, cancel := context.WithCancel(context.Background())
	opts.RunTurn = func(ctx context.Context, o *RunOptions, t *Turn) (*orchestrator.Result, error) {
		cancel() // the user presses Ctrl-C after the first turn
		return rec.run(ctx, o, t)
	}
	done := make(chan error, 1)
	go func() { done <- runRun(ctx, opts) }()
	if _, err := io.WriteString(pw, "first\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; cmdutil.CodeOf(err) != cmdutil.ExitCanceled {
		t.Errorf("err = %v (code %d), want 130", err, cmdutil.CodeOf(err))
	}
	if !reflect.DeepEqual(rec.tasks, []string{"first"}) {
		t.Errorf("tasks = %q", rec.tasks)
	}
}
