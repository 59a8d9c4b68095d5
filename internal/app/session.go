package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/ask"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
	"github.com/massgen-go/massgen/session"
)

// sessionState is the multi-turn session of one massgen invocation: every turn is saved under
// .massgen/sessions/session_<time>/turn_N/, and turn N+1 gets the conversation so far and,
// read-only, turn N's final workspace.
type sessionState struct {
	store *session.Store
	dir   string
	cur   *session.Session // nil until the first turn is saved (no empty session folders)
}

// openSession opens the sessions folder and, with --session ID or --continue, the session to
// resume.
func openSession(cfg *configs.Config, id string, latest bool) (*sessionState, error) {
	dir := cfg.Layout().Sessions()
	open := session.Open
	if id != "" || latest {
		open = session.OpenExisting // a lookup that fails creates no folder
	}
	store, err := open(dir)
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("sessions: %w", err))
	}
	s := &sessionState{store: store, dir: dir}
	switch {
	case id != "":
		if s.cur, err = store.Get(id); err != nil {
			return nil, cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("--session %s: %w (see `massgen sessions list`)", id, err))
		}
	case latest:
		if s.cur, err = store.Latest(); err != nil {
			return nil, cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("--continue: no session to continue in %s: %w", dir, err))
		}
	}
	return s, nil
}

// history is the conversation so far, for the orchestrator.
func (s *sessionState) history() []orchestrator.Exchange {
	if s == nil || s.cur == nil {
		return nil
	}
	var out []orchestrator.Exchange
	for _, ex := range s.cur.History() {
		oe := orchestrator.Exchange{User: ex.Task, Assistant: ex.Answer}
		switch ex.Status {
		case session.StatusCancelled:
			oe.Interrupted = "it was cancelled before a final answer"
		case session.StatusStopped:
			oe.Interrupted = "coordination was stopped before every agent voted"
		case session.StatusInterrupted:
			oe.Interrupted = "its run ended before a final answer (the files it changed are as it left them)"
		}
		if oe.Interrupted != "" {
			for _, w := range ex.Work {
				if w.Answer != "" {
					oe.Answers = append(oe.Answers, orchestrator.PriorAnswer{Anon: w.Anon, Text: w.Answer})
				}
			}
		}
		out = append(out, oe)
	}
	return out
}

// priorWork is the previous turn's agents' work when that turn was stopped or cancelled.
func (s *sessionState) priorWork() string {
	if s == nil || s.cur == nil {
		return ""
	}
	return s.cur.LastWork()
}

// readOnly is the previous turn's final workspace (kept in the session), if any.
func (s *sessionState) readOnly() []string {
	if s == nil || s.cur == nil {
		return nil
	}
	if ws := s.cur.LastWorkspace(); ws != "" {
		return []string{ws}
	}
	return nil
}

// save stores a finished turn (or, with res nil, an interrupted one), starting the session on
// the first one (its folder is made with that turn), and marks the turn's change journal
// recorded.
func (s *sessionState) save(cfg *configs.Config, run, task string, started, ended time.Time, res *orchestrator.Result, changes *changes.ChangeSet) (string, error) {
	if s.cur == nil {
		cur, err := s.store.New(started)
		if err != nil {
			return "", fmt.Errorf("sessions: %w", err)
		}
		s.cur = cur
	}
	t := session.Turn{Task: task, Started: started, Ended: ended, Run: run,
		Config: cfg.Source, ContextPaths: cfg.Orchestrator.ContextPaths, Changes: changes}
	if res == nil {
		t.Status = session.StatusInterrupted
	}
	for _, a := range cfg.Agents {
		t.Agents = append(t.Agents, a.ID)
	}
	if res != nil {
		t.Answer, t.Winner, t.Votes = res.FinalAnswer, res.Winner, res.Votes
		t.FilesDelivered, t.Workspace = res.Delivered, res.FinalWorkspace
		for _, m := range res.Timeline {
			t.Timeline = append(t.Timeline, session.Moment{Time: m.Time, Kind: string(m.Kind), Agent: m.Agent, Target: m.Target, Text: m.Text})
		}
		if len(res.Usage) > 0 {
			t.Tokens = map[string]session.TokenUsage{}
			for id, u := range res.Usage {
				t.Tokens[id] = session.TokenUsage{Input: u.InputTokens, Output: u.OutputTokens, CachedInput: u.CachedInputTokens,
					CacheWrite: u.CacheWriteTokens, Reasoning: u.ReasoningTokens, CostUSD: knownUSD(res.Cost[id])}
			}
		}
		t.TotalCostUSD, t.MaxCostUSD, t.PricesDate = knownUSD(res.TotalCost), res.MaxCostUSD, res.PricesDate
		t.Status, t.StoppedBy = session.StatusDone, res.StoppedBy
		switch {
		case res.Cancelled:
			t.Status = session.StatusCancelled
		case res.StoppedBy != "":
			t.Status = session.StatusStopped
		}
		for _, w := range res.Work { // a stopped or cancelled turn keeps every agent's work
			t.Work = append(t.Work, session.AgentWork{Agent: w.ID, Anon: w.Anon, Answer: w.Answer, Snapshot: w.Snapshot})
		}
	}
	dir, err := s.cur.SaveTurn(t)
	if dir != "" {
		// A journal left unmarked is recovered at the next start; the recovery finds this turn.
		_ = session.MarkRecorded(changes, s.cur, s.turns())
	}
	return dir, err
}

// knownUSD is a cost as the session keeps it: nil when unknown.
func knownUSD(c pricing.Cost) *float64 {
	if !c.Known {
		return nil
	}
	usd := pricing.Round(c.USD)
	return &usd
}

// turns is the number of turns saved in the current session.
func (s *sessionState) turns() int {
	if s == nil || s.cur == nil {
		return 0
	}
	return len(s.cur.Turns())
}

// slashHelp is what /help prints.
const slashHelp = `Commands:
  /help                      this list (also: help)
  /status                    session, turns, agents and context paths
  /context [PATH[:read|write]]  add a context path (without PATH: the context-path prompt)
  /clear                     start a new conversation (the one so far is kept on disk; also /reset)
  /exit                      leave (also /quit, exit, quit or Ctrl-D)
Anything else is a task for the agents; a single word is asked about first. While they coordinate, once one has answered, Ctrl-C
answers now (the leader presents); otherwise, or again, Ctrl-C cancels the turn in progress (its
work is kept in the session); Ctrl-C at the prompt exits.`

// slashCommand runs one interactive /command. quit is true for /quit.
func slashCommand(ctx context.Context, opts *RunOptions, st *runState, line string) (quit bool, err error) {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	w := opts.IO.ErrOut
	switch name {
	case "/quit", "/exit":
		return true, nil
	case "/help":
		fmt.Fprintln(w, slashHelp)
	case "/status":
		printStatus(w, st)
	case "/reset", "/clear":
		if st.session != nil {
			st.session.cur = nil
		}
		fmt.Fprintln(w, "New session: the next task starts a fresh conversation.")
	case "/context":
		return false, addContext(ctx, opts, st, arg)
	default:
		fmt.Fprintf(w, "Unknown command %s (/help lists the commands)\n", name)
	}
	return false, nil
}

func printStatus(w io.Writer, st *runState) {
	s := st.session
	switch {
	case s == nil:
		fmt.Fprintln(w, "Session: none")
	case s.cur == nil:
		fmt.Fprintf(w, "Session: new (saved under %s after the first turn)\n", s.dir)
	default:
		fmt.Fprintf(w, "Session: %s (%s) in %s\n", s.cur.ID, plural(s.turns(), "turn"), s.cur.Dir)
		if ws := s.readOnly(); len(ws) > 0 {
			fmt.Fprintf(w, "Previous turn's workspace (read-only for the agents): %s\n", ws[0])
		}
	}
	cfg := st.cfg
	ids := make([]string, 0, len(cfg.Agents))
	for _, a := range cfg.Agents {
		id := a.ID + " (" + a.Backend.Type
		if a.Backend.Model != "" {
			id += " " + a.Backend.Model
		}
		ids = append(ids, id+")")
	}
	fmt.Fprintf(w, "Config: %s\nAgents: %s\n", cfg.Source, strings.Join(ids, ", "))
	fmt.Fprintln(w, ask.FormatContextPaths(cfg.Orchestrator.ContextPaths))
}

// addContext adds a context path from "/context PATH[:perm]", or asks with the context-path
// prompt (protected paths included) when no PATH is given and a terminal is attached. The next
// turn works with a new config (configs.Resolve); on any error st keeps the one it has.
func addContext(ctx context.Context, opts *RunOptions, st *runState, arg string) error {
	wd, err := opts.Getwd()
	if err != nil {
		return err
	}
	var cps []configs.ContextPath
	if arg != "" {
		cp, err := configs.ParseContextFlag(arg)
		if err != nil {
			fmt.Fprintln(opts.IO.ErrOut, "Error:", termtext.Text(err.Error()))
			return nil
		}
		cps = append(cps, cp)
	} else {
		if !opts.IO.StdinTTY {
			fmt.Fprintln(opts.IO.ErrOut, "Usage: /context PATH[:read|write] (the prompt needs a terminal)")
			return nil
		}
		if cps, err = askContextPaths(ctx, opts, st.cfg, wd); err != nil {
			fmt.Fprintln(opts.IO.ErrOut, "Context path not added:", termtext.Text(err.Error()))
			return nil
		}
	}
	next, err := configs.Resolve(st.cfg, configs.Inputs{BaseDir: wd, ContextPaths: cps})
	if err == nil {
		err = next.CheckContextPaths()
	}
	if err != nil {
		fmt.Fprintln(opts.IO.ErrOut, "Error:", termtext.Text(err.Error()))
		return nil
	}
	// A path already listed is replaced in place; the new ones come last.
	for _, cp := range next.Orchestrator.ContextPaths[len(st.cfg.Orchestrator.ContextPaths):] {
		fmt.Fprintf(opts.IO.ErrOut, "Added %s (%s)\n", cp.Path, cp.Permission)
	}
	st.cfg = next
	return nil
}

// startSession opens the session of this invocation (every run is one): resumed, the one
// --continue or --session found; otherwise a new one, saved with the first turn.
func startSession(opts *RunOptions, st *runState, resumed *sessionState) error {
	s := resumed
	if s == nil {
		var err error
		if s, err = openSession(st.cfg, "", false); err != nil {
			return err
		}
	}
	st.session = s
	if s.cur != nil && opts.Display != "silent" {
		fmt.Fprintf(opts.IO.ErrOut, "Continuing session %s (%s)\n", s.cur.ID, plural(s.turns(), "turn"))
	}
	st.logger.Info("session", zap.String("dir", s.dir), zap.Bool("resumed", s.cur != nil))
	return nil
}

// saveTurn keeps the turn just run in the session (no-op without one). A turn that cannot be
// saved whole is not marked saved; it does not undo the turn (its answer is printed and its files
// delivered) but is recorded in out, so the run ends with "Not saved" and exit code partial.
func saveTurn(opts *RunOptions, st *runState, t *Turn, started time.Time, res *orchestrator.Result, out *Outcome) {
	s := st.session
	if s == nil {
		return
	}
	dir, err := s.save(st.cfg, filepath.Base(st.runDir), t.Task, started, opts.Now(), res, t.Changes)
	if dir != "" {
		t.Saved = s.turns()
	}
	switch {
	case err != nil && dir != "":
		st.logger.Error("saving the session summary", zap.String("dir", dir), zap.Error(err))
		out.notSaved("turn %d was saved in %s, but the session summary was not updated: %v", t.Number, dir, err)
	case err != nil:
		st.logger.Error("saving the turn", zap.Error(err))
		out.notSaved("turn %d was not saved in the session: %v", t.Number, err)
		return
	default:
		st.logger.Info("turn saved", zap.String("dir", dir))
	}
	wd, _ := opts.Getwd()
	switch {
	case opts.Display == "silent":
	case res != nil && (res.Cancelled || res.FinalAnswer == ""):
		fmt.Fprint(opts.IO.ErrOut, fitSummary(fmt.Sprintf("Kept every agent's work so far as turn %d of session %s (massgen --continue starts from it): %s\n", s.turns(), s.cur.ID, dir), wd, maxSummaryWidth))
	case t.Changes != nil && t.Changes.Incomplete != "": // nothing is "saved" that is not whole
		fmt.Fprint(opts.IO.ErrOut, fitSummary(fmt.Sprintf("Kept turn %d of session %s, with an incomplete record of its changes (see below): %s\n", s.turns(), s.cur.ID, dir), wd, maxSummaryWidth))
	default:
		fmt.Fprint(opts.IO.ErrOut, fitSummary(fmt.Sprintf("Saved turn %d of session %s: %s\n", s.turns(), s.cur.ID, dir), wd, maxSummaryWidth))
	}
}

// keepInterrupted saves turn t, which ended without an answer (cancelled, failed), as an
// interrupted turn when it changed something in context paths: `massgen undo` takes it back.
// If it cannot be saved now, its journal stays for the next start (session.Recover).
func keepInterrupted(opts *RunOptions, st *runState, t *Turn, started time.Time) {
	cs := t.Changes
	if cs == nil || (len(cs.Records) == 0 && cs.Incomplete == "") || st.session == nil {
		return
	}
	dir, err := st.session.save(st.cfg, filepath.Base(st.runDir), t.Task, started, opts.Now(), nil, cs)
	if dir == "" {
		st.logger.Error("saving the interrupted turn", zap.Error(err))
		fmt.Fprint(opts.IO.ErrOut, changesNote(cs))
		fmt.Fprintf(opts.IO.ErrOut, "Not saved: turn %d (interrupted) was not saved in the session: %s; the next massgen start in this project (or `massgen undo`) recovers it from its journal\n",
			t.Number, termtext.Line(err.Error()))
		return
	}
	st.logger.Info("interrupted turn saved", zap.String("dir", dir))
	fmt.Fprintf(opts.IO.ErrOut, "The turn changed %d file(s) in context paths before it stopped; kept as interrupted turn %d of session %s: %s\n%s",
		len(cs.Files()), st.session.turns(), st.session.cur.ID, dir, cs.Summary())
	if cs.Incomplete != "" {
		fmt.Fprintf(opts.IO.ErrOut, "Not saved: the record of what turn %d changed in context paths is incomplete (`massgen undo` restores what it kept): %s\n", t.Number, termtext.Line(cs.Incomplete))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
