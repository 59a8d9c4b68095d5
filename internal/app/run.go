// Package app is the run application behind `massgen [flags] [QUESTION]`: it loads the config,
// asks for context paths, takes the run lock, runs each turn through the orchestrator (one
// question, an interactive session, or a piped one), saves it to the session, and reports the
// outcome as text or JSON with its exit code. cmd parses the flags into RunOptions.
package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/configscmd"
	"github.com/massgen-go/massgen/cmd/permissionscmd"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/display"
	"github.com/massgen-go/massgen/internal/ask"
	"github.com/massgen-go/massgen/internal/private"
	"github.com/massgen-go/massgen/internal/project"
	"github.com/massgen-go/massgen/internal/roots"
	"github.com/massgen-go/massgen/internal/runlock"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/internal/tmpsweep"
	"github.com/massgen-go/massgen/logging"
	"github.com/massgen-go/massgen/orchestrator"
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
	// final workspace, read-only; PriorWork, every agent's work of a previous turn that was
	// stopped or cancelled, read-only too.
	History   []orchestrator.Exchange
	ReadOnly  []string
	PriorWork string
	// Outcome is set by the runner: failed agents, state not saved, timeout (nil: none).
	Outcome *Outcome
	// Journal records the final agent's changes to context paths; Changes is what it found at
	// the end of the turn (cmd/changes.go). UserDenials are the calls the user refused.
	Journal     *changes.Journal
	Changes     *changes.ChangeSet
	UserDenials []string
	// JSON is the --output json display (nil otherwise).
	JSON *display.JSON
	// Saved is the turn's number in the session once it is saved there (0: not saved).
	Saved int
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
	maxTask int           // the largest task accepted, in bytes
	code    int           // the worst exit code of the turns that gave an answer (partial, timeout)
	json    *display.JSON // --output json
}

// ContextPrompter asks the user which context paths to add (ask.AskContextPaths).
type ContextPrompter func(ctx context.Context, o ask.ContextPathOptions) ([]configs.ContextPath, error)

// Display modes of --display.
var displayModes = []string{"auto", "plain", "silent"}

// RunOptions are the inputs of `massgen [flags] [QUESTION]`: dependencies and flags.
type RunOptions struct {
	IO *cmdutil.IOStreams
	// LoadConfig loads a config by name ("": the default one); cmdutil.Factory.LoadConfig.
	LoadConfig func(name string) (*configs.Config, []configs.Warning, error)
	// LoadBytes loads quick mode's config, made in memory (cmdutil.Factory.LoadRunBytes).
	LoadBytes func(file string, data []byte) (*configs.Config, []configs.Warning, error)
	Getwd     func() (string, error)
	HomeDir   func() (string, error)
	// Project finds the current directory and the project folder (cmdutil.Factory.Project);
	// nil: the project is found from Getwd.
	Project   func() (wd, dir string, err error)
	LookupEnv func(string) (string, bool)
	Now       func() time.Time

	ConfigName string       // --config
	Quick      QuickOptions // --backend, --model, --system-message, --base-url (quick.go)
	Contexts   []string     // --context PATH[:read|write], repeatable
	Yes        bool         // --yes: accept defaults, never prompt
	Debug      bool         // --debug: debug-level logs
	Display    string       // --display auto|plain|silent
	SessionID  string       // --session ID: continue that session
	Continue   bool         // --continue: continue the latest session (cmd/resume.go)
	Question   string       // the QUESTION argument; empty: interactive mode
	Wait       bool         // --wait: wait for another run of the project to end instead of refusing
	// MaxTaskBytes is --max-task-bytes: the largest task accepted (0: the config's
	// orchestrator.max_task_bytes, else 1 MiB).
	MaxTaskBytes int
	Output       string // --output text|json (cmd/output.go)
	// MaxCost is --max-cost: the turn's budget in USD (0: the config's orchestrator.max_cost_usd).
	MaxCost float64

	// PromptContextPaths asks for context paths; nil uses ask.AskContextPaths.
	PromptContextPaths ContextPrompter
	// RunTurn runs one turn; nil uses runTurn (turn.go).
	RunTurn TurnRunner

	jsonOut *display.JSON // --output json (RunOutput)
	stdout  *stdoutWriter // stdout, remembering a failed write (RunOutput)
}

func NewRunOptions(f *cmdutil.Factory) *RunOptions {
	return &RunOptions{
		IO: f.IO, LoadConfig: f.LoadRunConfig, LoadBytes: f.LoadRunBytes, Getwd: f.Getwd, HomeDir: f.HomeDir, Project: f.Project, LookupEnv: f.LookupEnv, Now: time.Now,
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
	wd, proj, err := cmdutil.FindProject(opts.Project, opts.Getwd, opts.HomeDir)
	if err != nil {
		return err
	}
	home, _ := opts.HomeDir() // no home: ~/.massgen/.env and ~/.massgen/config.yaml are skipped
	if opts.Display != "silent" {
		cmdutil.SayProject(opts.IO.ErrOut, wd, proj)
	}

	// --continue / --session without --config: the session names its config (cmd/resume.go).
	resumed, cfgName, err := resumeBeforeConfig(ctx, opts, proj, home)
	if err != nil {
		return err
	}
	cfg, warnings, err := loadRunConfig(opts, cfgName)
	configscmd.PrintWarnings(opts.IO.ErrOut, warnings)
	if err != nil && resumed != nil {
		return cmdutil.WithCode(cmdutil.CodeOf(err), fmt.Errorf("session %s ran with config %s: %w (pass --config to use another)", resumed.cur.ID, cfgName, err))
	}
	if err != nil {
		if cmdutil.CodeOf(err) != cmdutil.ExitUsage || opts.ConfigName == "" {
			return err
		}
		configscmd.PrintLoadError(opts.IO.ErrOut, opts.ConfigName, err)
		return cmdutil.Reported(cmdutil.ExitUsage, err)
	}
	if err := checkQuickContext(opts, cfg); err != nil { // quick.go
		return err
	}
	if opts.MaxTaskBytes < 0 {
		return cmdutil.FlagErrorf("--max-task-bytes %d: must not be negative", opts.MaxTaskBytes)
	}
	if opts.MaxCost < 0 || math.IsNaN(opts.MaxCost) || math.IsInf(opts.MaxCost, 0) {
		return cmdutil.FlagErrorf("--max-cost %v: want a budget in USD greater than 0", opts.MaxCost)
	}
	if err := checkTask(opts.Question, taskLimit(opts, cfg)); err != nil {
		return err
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
	// A new .massgen/ keeps itself out of git (internal/project).
	if err := project.Init(filepath.Dir(cfg.MassgenDir())); err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("project state folder: %w", err))
	}
	// One run at a time per project: everything below writes under .massgen/.
	lock, err := lockProject(ctx, opts, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Release() }()
	// Turns of runs that ended before saving them become interrupted turns of their sessions
	// (before a session is resumed: it may be one of them).
	recoverTurns(ctx, opts.IO.ErrOut, cfg.Layout().Trash(), nil)
	if opts.resuming() && resumed == nil {
		if resumed, err = openSession(cfg, opts.SessionID, opts.Continue); err != nil {
			return err
		}
	}

	// The context paths this run adds come from one source: --context, else the resumed
	// session's, else --yes's or the prompt's (each asks only without the others).
	extra, from := flagPaths, ""
	if len(opts.Contexts) == 0 {
		if extra, from, err = resumeContextPaths(resumed); err != nil {
			return err
		}
	}
	prompted := false
	if cp, ok, note := yesContextPath(opts, cfg, wd, home); note != "" { // yes.go
		if ok {
			extra = append(extra, cp)
			prompted = true
		}
		if opts.Display != "silent" {
			fmt.Fprintln(opts.IO.ErrOut, note)
		}
	}
	if shouldPromptContext(opts, cfg) {
		cps, err := askContextPaths(ctx, opts, cfg, wd)
		if err != nil {
			return cancelOr(err, cmdutil.ExitFailure)
		}
		extra = append(extra, cps...)
		prompted = true
	}
	// From here on the run reads only the finished config.
	if cfg, err = configs.Resolve(cfg, configs.Inputs{BaseDir: wd, ContextPaths: extra, MaxCostUSD: opts.MaxCost}); err != nil {
		if from != "" {
			err = fmt.Errorf("%s: %w", from, err)
		}
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	if opts.Display != "silent" {
		switch {
		case prompted || len(cfg.Orchestrator.ContextPaths) > 0:
			fmt.Fprintln(opts.IO.ErrOut, ask.FormatContextPaths(cfg.Orchestrator.ContextPaths))
		case cfg.HasWorkspaces():
			// No terminal to ask, or --yes where the current directory may not be added.
			fmt.Fprintln(opts.IO.ErrOut, "No context paths: agents work only in .massgen/ (add --context PATH to share your files).")
		}
		for _, l := range commandNetworkLines(cfg) {
			fmt.Fprintln(opts.IO.ErrOut, l)
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
	st := &runState{cfg: cfg, logger: logger, runDir: runDir, maxTask: taskLimit(opts, cfg), json: newJSONOutput(opts)}
	// Temp files of writes killed half-way, in the user's folders: swept before the agents start
	// and after they are done (internal/tmpsweep).
	sweepTemp(ctx, opts, st, "start")
	defer sweepTemp(context.WithoutCancel(ctx), opts, st, "end")
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

	if err := startSession(opts, st, resumed); err != nil { // every run is a session
		return err
	}
	if opts.Question != "" {
		return turn(ctx, opts, st, opts.Question)
	}
	err = interactive(ctx, opts, st)
	printResumeHint(opts, st)
	return err
}

// loadRunConfig loads the config named by --config, or makes quick mode's.
func loadRunConfig(opts *RunOptions, name string) (*configs.Config, []configs.Warning, error) {
	if !opts.Quick.set() {
		return opts.LoadConfig(name)
	}
	name, data, err := quickConfig(opts.Quick, opts.ConfigName)
	if err != nil {
		return nil, nil, err
	}
	return opts.LoadBytes(name, data)
}

// lockProject takes the project's run lock (cmdutil.LockProject): a second run refuses at once
// (exit 5) naming the first, or with --wait waits for it to end.
func lockProject(ctx context.Context, opts *RunOptions, cfg *configs.Config) (*runlock.Lock, error) {
	return cmdutil.LockProject(ctx, opts.IO.ErrOut, cfg.MassgenDir(), "massgen", opts.Wait, opts.Now())
}

// sweepTemp removes the temp files interrupted writes left in the context paths, and says so.
func sweepTemp(ctx context.Context, opts *RunOptions, st *runState, when string) {
	// Each context path as the agents' environments resolve it (internal/roots): a context path
	// given as a link is swept where it leads, not taken for a file. The sweeps run before the
	// environments are built and after they are gone, so they resolve it themselves.
	var sweep []string
	for _, cp := range st.cfg.Orchestrator.ContextPaths {
		p := cp.Path
		if r, err := roots.Canonical(p); err == nil {
			p = r
		}
		sweep = append(sweep, p)
	}
	rep, err := tmpsweep.Sweep(ctx, sweep, st.logger.With(zap.String("sweep", when)))
	if err != nil {
		st.logger.Warn("sweeping temp files", zap.Error(err))
		fmt.Fprintf(opts.IO.ErrOut, "Warning: removing the temp files of interrupted writes: %s\n", termtext.Line(err.Error()))
	}
	if n := len(rep.Removed); n > 0 && opts.Display != "silent" {
		fmt.Fprintf(opts.IO.ErrOut, "Removed %s left in context paths by an interrupted write (see the log).\n", plural(n, "temp file"))
	}
}

// askContextPaths asks the context-path prompt (ask.AskContextPaths, or opts'), as a run asks
// it before its first turn and /context between turns, showing cfg's context paths first. It
// returns the paths the user chose, for configs.Resolve.
func askContextPaths(ctx context.Context, opts *RunOptions, cfg *configs.Config, wd string) ([]configs.ContextPath, error) {
	askPaths := opts.PromptContextPaths
	if askPaths == nil {
		askPaths = ask.AskContextPaths
	}
	home, _ := opts.HomeDir()
	_, accessible := opts.LookupEnv("ACCESSIBLE") // huh's convention for screen readers
	return askPaths(ctx, ask.ContextPathOptions{
		In: opts.IO.In, Out: opts.IO.ErrOut, Accessible: accessible,
		Cwd: wd, Home: home, Existing: cfg.Orchestrator.ContextPaths,
	})
}

// shouldPromptContext: a terminal is attached (the prompt reads stdin and draws on stderr),
// some agent has a workspace, and neither --context nor --yes was given.
func shouldPromptContext(opts *RunOptions, cfg *configs.Config) bool {
	return opts.IO.StdinTTY && opts.IO.StderrTTY && cfg.HasWorkspaces() &&
		len(opts.Contexts) == 0 && !opts.Yes && !opts.resuming()
}

// turn runs one task and prints its answer on stdout.
func turn(ctx context.Context, opts *RunOptions, st *runState, task string) (err error) {
	st.turns++
	runner := opts.RunTurn
	if runner == nil {
		runner = runTurn
	}
	t := &Turn{
		Task: task, Number: st.turns, Config: st.cfg, Logger: st.logger, RunDir: st.runDir,
		History: st.session.history(), ReadOnly: st.session.readOnly(), PriorWork: st.session.priorWork(), JSON: st.json,
	}
	var res *orchestrator.Result
	// --output json: the turn's last lines, whatever the turn's outcome.
	defer func() { emitResult(st, t, res, BySignal(ctx, err)) }()
	if opts.Question == "" { // interactive: one log folder per turn
		t.RunDir = filepath.Join(st.runDir, fmt.Sprintf("turn_%d", t.Number))
		if err := os.MkdirAll(t.RunDir, private.DirMode); err != nil {
			return cmdutil.WithCode(cmdutil.ExitFailure, err)
		}
	}
	st.logger.Info("turn start", zap.Int("turn", t.Number), logging.Text("task", task))
	started := opts.Now()
	t.Journal = newJournal(st, t, started)
	res, err = runner(ctx, opts, t)
	if err == nil && res == nil {
		err = errors.New("the turn returned no result")
	}
	out := t.Outcome
	if out == nil {
		out = &Outcome{}
	}
	if err != nil {
		st.logger.Error("turn failed", zap.Int("turn", t.Number), zap.Error(err))
		cs := finishChanges(ctx, t)
		if res != nil && (res.Cancelled || res.StoppedBy != "") {
			// A cancelled turn, or one stopped before any answer, keeps every agent's work, and
			// what it changed (undo takes it back).
			if note := changesNote(cs); note != "" {
				fmt.Fprint(opts.IO.ErrOut, note)
			}
			saveTurn(opts, st, t, started, res, out)
		} else {
			// Any other end: what it changed before it stopped is kept as an interrupted turn.
			keepInterrupted(opts, st, t, started)
		}
		if cmdutil.CodeOf(cancelOr(err, cmdutil.ExitFailure)) == cmdutil.ExitCanceled {
			return cancelOr(err, cmdutil.ExitFailure) // said in words, naming the signal: BySignal
		}
		if errors.Is(err, orchestrator.ErrUnpriced) { // a budget over a model without a price
			return cmdutil.WithCode(cmdutil.ExitUsage, err)
		}
		if errors.Is(err, orchestrator.ErrNoAnswer) && res != nil && res.StoppedBy == orchestrator.StoppedByTimeout {
			return reportTimeoutNoAnswer(opts, st, out) // timeout.go
		}
		if errors.Is(err, orchestrator.ErrNoAnswer) {
			// The display showed the event already; the agents' causes end the run, once each.
			switch {
			case res != nil && res.StoppedBy == orchestrator.StoppedByBudget:
				fmt.Fprintf(opts.IO.ErrOut, "Error: %s was spent (%s) before any agent answered: there is nothing to present. Raise it (--max-cost, orchestrator.max_cost_usd); `massgen --continue` starts from the work kept.\n",
					"the budget of "+pricing.Format(res.MaxCostUSD), res.TotalCost)
			case opts.Display == "silent":
				fmt.Fprintln(opts.IO.ErrOut, "Error:", termtext.Text(err.Error()))
			}
			out.print(opts.IO.ErrOut)
			return cmdutil.Reported(cmdutil.ExitFailure, err)
		}
		out.print(opts.IO.ErrOut)
		return cancelOr(err, cmdutil.ExitFailure)
	}
	finishChanges(ctx, t)
	incompleteRecord(out, t)
	answer := res.FinalAnswer
	st.logger.Info("turn done", zap.Int("turn", t.Number), zap.Int("answer_bytes", len(answer)))
	if opts.IO.StdoutTTY { // redirected output stays exactly what the model wrote
		answer = termtext.Text(answer)
	}
	if st.json == nil { // with --output json, stdout carries JSON Lines only
		separateTurn(opts, st, t) // piped interactive mode: "--- turn N ---" between answers (cmd/piped.go)
		fmt.Fprintln(opts.IO.Out, strings.TrimRight(answer, "\n"))
	}
	saveTurn(opts, st, t, started, res, out) // saved even when stdout failed: its record comes first
	out.print(opts.IO.ErrOut)
	code := out.code()
	st.logger.Info("turn outcome", zap.Int("turn", t.Number), zap.Int("exit_code", code),
		zap.Int("failed_agents", len(out.Failed)), zap.Strings("not_saved", out.NotSaved), zap.String("stopped_by", out.StoppedBy),
		zap.Int("denied_changes", out.Denied.Total()))
	if out.StoppedBy == orchestrator.StoppedByTimeout {
		logTimeout(st.logger, st.cfg, true)
	}
	if werr := stdoutError(opts); werr != nil { // a closed pipe, a full disk: the answer is lost
		st.logger.Error("writing stdout", zap.Error(werr))
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("writing the answer to stdout: %w", werr))
	}
	if code != cmdutil.ExitOK {
		st.code = cmdutil.Worst(st.code, code)
		return cmdutil.Reported(code, out.reason())
	}
	return nil
}

// answered: a turn that ended with code still gave its answer (it timed out, spent its budget or
// is partial), so an interactive session goes on.
func answered(code int) bool {
	return code == cmdutil.ExitOK || code == cmdutil.ExitPartial || code == cmdutil.ExitTimeout || code == cmdutil.ExitBudget
}

// interactive reads one task per line until end of input or /quit. On a terminal a failed turn
// is reported and the loop goes on; when stdin is not a terminal (a script), the first failure
// ends the run with its exit code.
func interactive(ctx context.Context, opts *RunOptions, st *runState) error {
	tty := opts.IO.StdinTTY
	if tty && opts.Display != "silent" {
		fmt.Fprintln(opts.IO.ErrOut, "Interactive mode: type a task and press Enter; /help lists the commands; /exit or Ctrl-D to leave.")
	}
	in := bufio.NewReader(opts.IO.In)
	var editor *lineEditor // line editing and history on a terminal (cmd/lineedit.go)
	if tty && opts.IO.StderrTTY {
		editor = newLineEditor(opts.IO.In, opts.IO.ErrOut, interactivePrompt)
	}
	for {
		if tty && editor == nil {
			fmt.Fprint(opts.IO.ErrOut, interactivePrompt)
		}
		var line string
		var ok bool
		var err error
		if editor != nil {
			line, ok, err = editor.readLine(ctx)
		} else {
			line, ok, err = readLine(ctx, in, st.maxTask)
		}
		if err == nil && ok {
			err = checkTask(strings.TrimRight(line, "\r\n"), st.maxTask) // the line editor reads whole lines
		}
		var tooLarge *taskTooLargeError
		if errors.As(err, &tooLarge) {
			if !tty {
				return cmdutil.WithCode(cmdutil.ExitUsage, err)
			}
			fmt.Fprintln(opts.IO.ErrOut, "Error:", termtext.Text(err.Error()))
			continue
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
			return st.exit()
		}
		switch line = promptCommand(strings.TrimSpace(line)); line { // promptwords.go
		case "":
			continue
		case "/quit", "/exit", "quit", "exit":
			return st.exit()
		}
		if strings.HasPrefix(line, "/") {
			if quit, err := slashCommand(ctx, opts, st, line); quit || err != nil {
				if err == nil {
					err = st.exit()
				}
				return err
			}
			continue
		}
		if tty && oneWord(line) {
			run, err := confirmOneWord(ctx, opts, st, editor, in, line)
			if err != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
				fmt.Fprintln(opts.IO.ErrOut)
				return cmdutil.Silent(cmdutil.ExitCanceled)
			}
			if err != nil {
				return cancelOr(err, cmdutil.ExitFailure)
			}
			if !run {
				continue
			}
		}
		tctx, endTurn := turnContext(ctx) // Ctrl-C cancels this turn only (cmd/interrupt.go)
		err = turn(tctx, opts, st, line)
		turnCancelled := err != nil && ctx.Err() == nil && tctx.Err() != nil
		endTurn()
		if turnCancelled && !tty { // a script's session ends with the cancel
			return cmdutil.WithCode(cmdutil.ExitCanceled, err)
		}
		if turnCancelled {
			fmt.Fprintln(opts.IO.ErrOut, "Turn cancelled; the session is kept (Ctrl-C again at the prompt exits).")
			continue
		}
		if err != nil && answered(cmdutil.CodeOf(err)) {
			continue // reported; the worst code is kept in st.code for the end
		}
		if err != nil {
			if !tty || cmdutil.CodeOf(err) == cmdutil.ExitCanceled {
				return err
			}
			fmt.Fprintln(opts.IO.ErrOut, "Error:", termtext.Text(err.Error()))
		}
	}
}

// exit is how an interactive session ends: with the worst code of its turns that answered
// (partial, timeout), already reported.
func (st *runState) exit() error {
	if st.code != cmdutil.ExitOK {
		return cmdutil.Silent(st.code)
	}
	return nil
}

// readLine reads one line of at most limit bytes, or returns ctx's error when it is cancelled
// first (Ctrl-C at the prompt). Only one read is in flight, and only while waiting for a task, so
// nothing reads stdin while a turn runs (a permission prompt may need it). ok is false at end of
// input. A longer line is read to its end without being kept (memory stays bounded) and gives a
// *taskTooLargeError.
func readLine(ctx context.Context, r *bufio.Reader, limit int) (line string, ok bool, err error) {
	type result struct {
		s    string
		size int64 // bytes in the line, without its newline
		over bool  // the line was longer than limit: s is empty
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		var buf []byte
		var res result
		for {
			chunk, err := r.ReadSlice('\n')
			res.size += int64(len(chunk))
			if !res.over {
				buf = append(buf, chunk...)
				res.over = len(bytes.TrimSuffix(buf, []byte("\n"))) > limit
				if res.over {
					buf = nil
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
				res.size--
			}
			res.s, res.err = string(buf), err
			ch <- res
			return
		}
	}()
	select {
	case <-ctx.Done():
		return "", false, ctx.Err()
	case res := <-ch:
		switch {
		case res.over:
			return "", true, &taskTooLargeError{size: res.size, limit: limit}
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

// taskLimit is the largest task accepted: --max-task-bytes, else the config's
// orchestrator.max_task_bytes, else 1 MiB.
func taskLimit(opts *RunOptions, cfg *configs.Config) int {
	if opts.MaxTaskBytes > 0 {
		return opts.MaxTaskBytes
	}
	return cfg.MaxTaskBytes()
}

// taskTooLargeError is a task over the size limit (exit 2).
type taskTooLargeError struct {
	size  int64
	limit int
}

func (e *taskTooLargeError) Error() string {
	return fmt.Sprintf("the task is %d bytes, more than the limit of %d bytes: shorten it (put long material in a file and add it with --context), or raise the limit with --max-task-bytes N or orchestrator.max_task_bytes in the config", e.size, e.limit)
}

// checkTask refuses a task over limit bytes.
func checkTask(task string, limit int) error {
	if len(task) > limit {
		return cmdutil.WithCode(cmdutil.ExitUsage, &taskTooLargeError{size: int64(len(task)), limit: limit})
	}
	return nil
}

// cancelOr maps a cancellation (Ctrl-C, prompt aborted) to exit 130 and any other error to code
// unless it already carries one.
func cancelOr(err error, code int) error {
	var ee *cmdutil.ExitError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, ask.ErrAborted):
		return cmdutil.WithCode(cmdutil.ExitCanceled, err)
	default:
		return cmdutil.WithCode(code, err)
	}
}
