package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/configscmd"
	"github.com/massgen-go/massgen/cmd/permissionscmd"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/display"
	"github.com/massgen-go/massgen/logging"
	"github.com/massgen-go/massgen/orchestrator"
	"github.com/massgen-go/massgen/prompt"
)

// TurnRunner runs one turn (one task through the agents) and returns its result, whose final
// answer is printed on stdout. It is the single point where the orchestrator plugs into the
// CLI (see turn.go).
type TurnRunner func(ctx context.Context, opts *RunOptions, t *Turn) (*orchestrator.Result, error)

// Turn is what one turn runs with, set up by runRun.
type Turn struct {
	Task   string
	Number int             // 1-based, in this invocation
	Config *configs.Config // paths resolved, context paths checked
	Logger *zap.Logger
	RunDir string // the turn's log folder
	// Multi-turn sessions (cmd/session.go): the conversation so far and the previous turn's
	// final workspace, read-only.
	History  []orchestrator.Exchange
	ReadOnly []string
}

// runState is what one invocation keeps between turns: the config (the /context command adds
// to it), the logger, the log folder, the number of turns run and the session.
type runState struct {
	cfg     *configs.Config
	logger  *zap.Logger
	runDir  string // .massgen/logs/log_<timestamp>/
	turns   int
	answers int // printed on stdout (cmd/piped.go)
	session *sessionState
}

// ContextPrompter asks the user which context paths to add (prompt.AskContextPaths).
type ContextPrompter func(ctx context.Context, o prompt.ContextPathOptions) ([]configs.ContextPath, error)

// Display modes of --display.
var displayModes = []string{"auto", "plain", "silent"}

// RunOptions are the inputs of `massgen [flags] [QUESTION]`: dependencies and flags.
type RunOptions struct {
	IO *cmdutil.IOStreams
	// LoadConfig loads a config by name ("": the default one); cmdutil.Factory.LoadConfig.
	LoadConfig func(name string) (*configs.Config, []configs.Warning, error)
	Getwd      func() (string, error)
	HomeDir    func() (string, error)
	LookupEnv  func(string) (string, bool)
	Now        func() time.Time

	ConfigName string   // --config
	Contexts   []string // --context PATH[:read|write], repeatable
	Yes        bool     // --yes: accept defaults, never prompt
	Debug      bool     // --debug: debug-level logs
	Display    string   // --display auto|plain|silent
	SessionID  string   // --session ID: continue that session (interactive sessions)
	Continue   bool     // --continue: continue the latest session
	Question   string   // the QUESTION argument; empty: interactive mode

	// PromptContextPaths asks for context paths; nil uses prompt.AskContextPaths.
	PromptContextPaths ContextPrompter
	// RunTurn runs one turn; nil uses runTurn (turn.go).
	RunTurn TurnRunner
}

func newRunOptions(f *cmdutil.Factory) *RunOptions {
	return &RunOptions{
		IO: f.IO, LoadConfig: f.LoadRunConfig, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv, Now: time.Now,
	}
}

// runRun is the root command: config -> --context -> prompt -> context-path check -> log dir
// and logger -> one turn (with a question) or the interactive loop.
func runRun(ctx context.Context, opts *RunOptions) (err error) {
	if !slices.Contains(displayModes, opts.Display) {
		return cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("--display %q: want one of %s", opts.Display, strings.Join(displayModes, ", ")))
	}
	if opts.SessionID != "" && opts.Continue {
		return cmdutil.WithCode(cmdutil.ExitUsage, errors.New("--session and --continue cannot be used together"))
	}
	wd, err := opts.Getwd()
	if err != nil {
		return fmt.Errorf("current directory: %w", err)
	}
	home, _ := opts.HomeDir() // no home: ~/.massgen/.env and ~/.massgen/config.yaml are skipped

	cfg, warnings, err := opts.LoadConfig(opts.ConfigName)
	configscmd.PrintWarnings(opts.IO.ErrOut, warnings)
	if err != nil {
		if cmdutil.CodeOf(err) != cmdutil.ExitUsage || opts.ConfigName == "" {
			return err
		}
		configscmd.PrintLoadError(opts.IO.ErrOut, opts.ConfigName, err)
		return cmdutil.Silent(cmdutil.ExitUsage)
	}
	// Rule files an agent could have written (.massgen/permissions.yaml, a config with hooks)
	// take effect only once the user approved them.
	if err := permissionscmd.RequireApproval(cfg, permissionscmd.ApproveOptions{IO: opts.IO, Now: opts.Now, Yes: opts.Yes}); err != nil {
		return err
	}

	var flagPaths []configs.ContextPath
	for _, s := range opts.Contexts {
		cp, err := configs.ParseContextFlag(s)
		if err != nil {
			return cmdutil.WithCode(cmdutil.ExitUsage, err)
		}
		flagPaths = append(flagPaths, cp)
	}
	if err := cfg.AddContextPaths(wd, flagPaths...); err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}

	prompted := false
	if shouldPromptContext(opts, cfg) {
		ask := opts.PromptContextPaths
		if ask == nil {
			ask = prompt.AskContextPaths
		}
		_, accessible := opts.LookupEnv("ACCESSIBLE") // huh's convention for screen readers
		cps, err := ask(ctx, prompt.ContextPathOptions{
			In: opts.IO.In, Out: opts.IO.ErrOut, Accessible: accessible,
			Cwd: wd, Home: home, Existing: cfg.Orchestrator.ContextPaths,
		})
		if err != nil {
			return cancelOr(err, cmdutil.ExitFailure)
		}
		if err := cfg.AddContextPaths(wd, cps...); err != nil {
			return cmdutil.WithCode(cmdutil.ExitUsage, err)
		}
		prompted = true
	}
	if opts.Display != "silent" {
		switch {
		case prompted || len(cfg.Orchestrator.ContextPaths) > 0:
			fmt.Fprintln(opts.IO.ErrOut, prompt.FormatContextPaths(cfg.Orchestrator.ContextPaths))
		case cfg.HasWorkspaces():
			// --yes (or no terminal) never adds a context path: writing the user's files is opt-in.
			fmt.Fprintln(opts.IO.ErrOut, "No context paths: agents work only in .massgen/ (add --context PATH to share your files).")
		}
	}
	if err := cfg.CheckContextPaths(); err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}

	runDir, err := logging.NewRunDir(cfg.MassgenDir(), opts.Now())
	if err != nil {
		return err
	}
	logger, closeLog, err := logging.New(runDir, opts.Debug)
	if err != nil {
		return err
	}
	defer func() { _ = closeLog() }()
	defer func() { logger.Info(logging.RunEnd, zap.Int("exit_code", cmdutil.CodeOf(err))) }() // `massgen logs --follow` stops here
	st := &runState{cfg: cfg, logger: logger, runDir: runDir}
	logger.Info("run start",
		zap.String("config", cfg.Source), zap.String("cwd", wd),
		zap.Int("agents", len(cfg.Agents)), zap.Any("context_paths", cfg.Orchestrator.ContextPaths),
		zap.Bool("interactive", opts.Question == ""))
	for _, w := range warnings {
		logger.Warn("config", zap.String("warning", w.String()))
	}
	if opts.Display != "silent" {
		fmt.Fprintf(opts.IO.ErrOut, "Logs: %s\n", runDir)
	}

	if opts.Question == "" || opts.SessionID != "" || opts.Continue {
		if err := startSession(opts, st); err != nil {
			return err
		}
	}
	if opts.Question != "" {
		return turn(ctx, opts, st, opts.Question)
	}
	return interactive(ctx, opts, st)
}

// shouldPromptContext: a terminal is attached (the prompt reads stdin and draws on stderr),
// some agent has a workspace, and neither --context nor --yes was given.
func shouldPromptContext(opts *RunOptions, cfg *configs.Config) bool {
	return opts.IO.StdinTTY && opts.IO.StderrTTY && cfg.HasWorkspaces() &&
		len(opts.Contexts) == 0 && !opts.Yes
}

// turn runs one task and prints its answer on stdout.
func turn(ctx context.Context, opts *RunOptions, st *runState, task string) error {
	st.turns++
	runner := opts.RunTurn
	if runner == nil {
		runner = runTurn
	}
	t := &Turn{
		Task: task, Number: st.turns, Config: st.cfg, Logger: st.logger, RunDir: st.runDir,
		History: st.session.history(), ReadOnly: st.session.readOnly(),
	}
	if opts.Question == "" { // interactive: one log folder per turn
		t.RunDir = filepath.Join(st.runDir, fmt.Sprintf("turn_%d", t.Number))
		if err := os.MkdirAll(t.RunDir, 0o755); err != nil {
			return cmdutil.WithCode(cmdutil.ExitFailure, err)
		}
	}
	st.logger.Info("turn start", zap.Int("turn", t.Number), zap.String("task", task))
	started := opts.Now()
	res, err := runner(ctx, opts, t)
	if err == nil && res == nil {
		err = errors.New("the turn returned no result")
	}
	if err != nil {
		st.logger.Error("turn failed", zap.Int("turn", t.Number), zap.Error(err))
		return cancelOr(err, cmdutil.ExitFailure)
	}
	answer := res.FinalAnswer
	st.logger.Info("turn done", zap.Int("turn", t.Number), zap.Int("answer_bytes", len(answer)))
	if opts.IO.StdoutTTY { // redirected output stays exactly what the model wrote
		answer = display.ForTerminal(answer)
	}
	separateTurn(opts, st, t) // piped interactive mode: "--- turn N ---" between answers (cmd/piped.go)
	fmt.Fprintln(opts.IO.Out, strings.TrimRight(answer, "\n"))
	return saveTurn(opts, st, t, started, res)
}

// interactive reads one task per line until end of input or /quit. On a terminal a failed turn
// is reported and the loop goes on; when stdin is not a terminal (a script), the first failure
// ends the run with its exit code.
func interactive(ctx context.Context, opts *RunOptions, st *runState) error {
	tty := opts.IO.StdinTTY
	if tty && opts.Display != "silent" {
		fmt.Fprintln(opts.IO.ErrOut, "Interactive mode: type a task and press Enter; /quit or Ctrl-D to leave.")
	}
	in := bufio.NewReader(opts.IO.In)
	var editor *lineEditor // line editing and history on a terminal (cmd/lineedit.go)
	if tty && opts.IO.StderrTTY {
		editor = newLineEditor(opts.IO.In, opts.IO.ErrOut, "massgen> ")
	}
	for {
		if tty && editor == nil {
			fmt.Fprint(opts.IO.ErrOut, "massgen> ")
		}
		var line string
		var ok bool
		var err error
		if editor != nil {
			line, ok, err = editor.readLine(ctx)
		} else {
			line, ok, err = readLine(ctx, in)
		}
		if err != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
			fmt.Fprintln(opts.IO.ErrOut) // Ctrl-C at the prompt: leave quietly, exit 130
			return cmdutil.Silent(cmdutil.ExitCanceled)
		}
		if err != nil {
			return cancelOr(err, cmdutil.ExitFailure)
		}
		if !ok {
			if tty {
				fmt.Fprintln(opts.IO.ErrOut)
			}
			return nil
		}
		switch line = strings.TrimSpace(line); line {
		case "":
			continue
		case "/quit", "/exit", "quit", "exit":
			return nil
		}
		if strings.HasPrefix(line, "/") {
			if quit, err := slashCommand(ctx, opts, st, line); quit || err != nil {
				return err
			}
			continue
		}
		tctx, endTurn := turnContext(ctx) // Ctrl-C cancels this turn only (cmd/interrupt.go)
		err = turn(tctx, opts, st, line)
		turnCancelled := err != nil && ctx.Err() == nil && tctx.Err() != nil
		endTurn()
		if turnCancelled {
			fmt.Fprintln(opts.IO.ErrOut, "Turn cancelled; the session is kept (Ctrl-C again at the prompt exits).")
			continue
		}
		if err != nil {
			if !tty || cmdutil.CodeOf(err) == cmdutil.ExitCanceled {
				return err
			}
			fmt.Fprintln(opts.IO.ErrOut, "Error:", err)
		}
	}
}

// readLine reads one line, or returns ctx's error when it is cancelled first (Ctrl-C at the
// prompt). Only one read is in flight, and only while waiting for a task, so nothing reads
// stdin while a turn runs (a permission prompt may need it). ok is false at end of input.
func readLine(ctx context.Context, r *bufio.Reader) (line string, ok bool, err error) {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := r.ReadString('\n')
		ch <- result{s, err}
	}()
	select {
	case <-ctx.Done():
		return "", false, ctx.Err()
	case res := <-ch:
		switch {
		case res.err == nil:
			return res.s, true, nil
		case errors.Is(res.err, io.EOF) && res.s != "":
			return res.s, true, nil // a last line without a newline
		case errors.Is(res.err, io.EOF):
			return "", false, nil
		default:
			return "", false, fmt.Errorf("reading stdin: %w", res.err)
		}
	}
}

// cancelOr maps a cancellation (Ctrl-C, prompt aborted) to exit 130 and any other error to code
// unless it already carries one.
func cancelOr(err error, code int) error {
	var ee *cmdutil.ExitError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, prompt.ErrAborted):
		return cmdutil.WithCode(cmdutil.ExitCanceled, err)
	default:
		return cmdutil.WithCode(code, err)
	}
}
