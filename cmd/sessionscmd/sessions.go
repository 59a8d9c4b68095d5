// Package sessionscmd implements `massgen sessions list|show`: the multi-turn sessions kept under
// .massgen/sessions (or the config's session_storage).
package sessionscmd

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/display"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
	"github.com/massgen-go/massgen/session"
)

// Options are the flags shared by the subcommands.
type Options struct {
	IO        *cmdutil.IOStreams
	Getwd     func() (string, error)
	HomeDir   func() (string, error)
	LookupEnv func(string) (string, bool)
	// Project finds the project folder (cmdutil.Factory.Project); nil: from Getwd.
	Project func() (wd, dir string, err error)

	Config string // optional: its session_storage names the folder
	ID     string // show: the session ("" = latest)

	OlderThan string // prune --older-than
	Yes       bool   // prune --yes
	Now       func() time.Time
}

// NewCmd returns the `sessions` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv, Project: f.Project, Now: time.Now}
	cmd := &cobra.Command{
		Use:     "sessions",
		Aliases: []string{"session"},
		Short:   "List and show multi-turn sessions (resume one with `massgen --session ID` or `--continue`)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listRun(opts)
		},
	}
	cmd.PersistentFlags().StringVarP(&opts.Config, "config", "c", "", "config whose session_storage holds the sessions (default: ./.massgen/sessions)")
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List sessions with their turn counts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listRun(opts)
		},
	}, &cobra.Command{
		Use:   "show [ID]",
		Short: "Show a session's summary and turns (default: the latest session)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			return showRun(opts)
		},
	}, newPruneCmd(opts))
	return cmd
}

// Dir is the sessions folder: the config's session_storage, or the project's .massgen/sessions
// without --config (the project is found from any folder below it: internal/project). `massgen
// diff` and `massgen undo` find sessions the same way.
func Dir(opts *Options) (string, error) {
	l, err := projectLayout(opts)
	if err != nil {
		return "", err
	}
	return l.Sessions(), nil
}

// projectLayout is the project's .massgen layout: the config's (with its session_storage), or
// the project's .massgen without --config (found from any folder below it: internal/project).
func projectLayout(opts *Options) (layout.Layout, error) {
	wd, proj, err := cmdutil.FindProject(opts.Project, opts.Getwd, opts.HomeDir)
	if err != nil {
		return layout.Layout{}, err
	}
	cmdutil.SayProject(opts.IO.ErrOut, wd, proj)
	if opts.Config == "" {
		return layout.OfProject(proj), nil
	}
	home := ""
	if opts.HomeDir != nil {
		home, _ = opts.HomeDir()
	}
	cfg, _, err := configs.Load(configs.LoadOptions{Name: opts.Config, BaseDir: wd, ProjectDir: proj, Home: home, LookupEnv: opts.LookupEnv, Actions: filesystem.MassGenActions()})
	if err != nil {
		return layout.Layout{}, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	return cfg.Layout(), nil
}

func listRun(opts *Options) error {
	dir, err := Dir(opts)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(opts.IO.ErrOut, "No sessions in %s\n", dir)
		return nil
	}
	store, err := session.Open(dir)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	infos, err := store.List()
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("listing sessions in %s: %w", dir, err))
	}
	if len(infos) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "No sessions in %s\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTURNS\tUPDATED\tLAST TASK")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", termtext.Line(in.ID), in.Turns, formatTime(in.Updated), termtext.Squeeze(in.LastTask, 60))
	}
	return tw.Flush()
}

func showRun(opts *Options) error {
	dir, err := Dir(opts)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		// Do not create the folder just to look into it.
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("no sessions in %s", dir))
	}
	store, err := session.Open(dir)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	var s *session.Session
	if opts.ID == "" {
		s, err = store.Latest()
	} else {
		s, err = store.Get(opts.ID)
	}
	if errors.Is(err, session.ErrNoSessions) {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("no sessions in %s", dir))
	}
	if err != nil {
		what := "the latest session"
		if opts.ID != "" {
			what = "session " + opts.ID
		}
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("%s in %s: %w", what, dir, err))
	}
	return printSession(opts.IO.Out, s, display.Style{Color: display.ColorEnabled(opts.IO.StdoutTTY, opts.LookupEnv)})
}

// printSession prints a session and its turns; each turn's vote tally and timeline are the ones
// printed at the end of its run (display.TallyLines, display.TimelineLines). What agents wrote
// (task and answer text, file names, ids) is cleaned for the terminal (termtext).
func printSession(w io.Writer, s *session.Session, st display.Style) error {
	turns := s.Turns()
	in := s.Info()
	fmt.Fprintf(w, "Session %s\n", s.ID)
	fmt.Fprintf(w, "Folder:  %s\n", termtext.Line(s.Dir))
	fmt.Fprintf(w, "Created: %s\n", formatTime(in.Created))
	fmt.Fprintf(w, "Turns:   %d\n", len(turns))
	fmt.Fprintf(w, "Resume:  massgen --session %s (or --continue for the latest)\n", s.ID)
	for i, t := range turns {
		fmt.Fprintf(w, "\n--- Turn %d (%s) ---\n", i+1, termtext.Line(filepath.Join(s.Dir, fmt.Sprintf("turn_%d", i+1))))
		fmt.Fprintf(w, "When:    %s (%s)\n", formatTime(t.Started), t.Ended.Sub(t.Started).Round(time.Second))
		if t.Run != "" {
			fmt.Fprintf(w, "Run:     %s\n", termtext.Line(t.Run))
		}
		if len(t.Agents) > 0 {
			fmt.Fprintf(w, "Agents:  %s\n", termtext.Line(strings.Join(t.Agents, ", ")))
		}
		if t.Winner != "" {
			fmt.Fprintf(w, "Winner:  %s\n", termtext.Line(t.Winner))
		}
		o := outcome(t)
		for _, l := range append(display.TallyLines(o, st), display.TimelineLines(o, st)...) {
			fmt.Fprintln(w, l)
		}
		if t.Status == session.StatusStopped || t.Status == session.StatusCancelled {
			ended := t.Status
			if t.StoppedBy != "" {
				ended += " by the " + t.StoppedBy
			}
			fmt.Fprintf(w, "Ended:   %s; every agent's work so far is kept (--continue starts from it)\n", ended)
			for _, a := range t.Work {
				printWork(w, a)
			}
		}
		if t.Status == session.StatusInterrupted {
			fmt.Fprintln(w, "Ended:   interrupted: its run ended before saving it (killed, or the session could not be written); recovered from its change journal, with no answer")
		}
		for _, l := range display.SpendLines(spendOf(t)) {
			fmt.Fprintln(w, l)
		}
		for _, f := range t.FilesDelivered {
			fmt.Fprintf(w, "Delivered: %s\n", termtext.Line(f))
		}
		printChanges(w, s.ID, i+1, t)
		if t.Workspace != "" {
			fmt.Fprintf(w, "Workspace: %s\n", termtext.Line(t.Workspace))
		}
		fmt.Fprintf(w, "Task:\n%s\n", indent(termtext.Text(t.Task)))
		fmt.Fprintf(w, "Answer:\n%s\n", indent(termtext.Text(t.Answer)))
	}
	return nil
}

// printWork shows one agent's kept work: its answer's first line and where its files are.
func printWork(w io.Writer, a session.AgentWork) {
	answer := "no answer"
	if a.Answer != "" {
		answer = "answer: " + termtext.Squeeze(a.Answer, 60)
	}
	where := "no files kept"
	if a.Snapshot != "" {
		where = a.Snapshot
	}
	fmt.Fprintf(w, "  %s (%s): %s; %s\n", termtext.Line(a.Agent), termtext.Line(a.Anon), answer, termtext.Line(where))
}

// spendOf is a stored turn's tokens and costs, as the end of its run printed them (an agent's
// cost saved as null, or not saved by an older massgen, is unknown).
func spendOf(t session.Turn) display.Spend {
	s := display.Spend{MaxCostUSD: t.MaxCostUSD, PricesDate: t.PricesDate}
	for _, id := range slices.Sorted(maps.Keys(t.Tokens)) {
		u := t.Tokens[id]
		a := display.AgentSpend{Agent: id, Usage: backends.Usage{InputTokens: u.Input, OutputTokens: u.Output,
			CachedInputTokens: u.CachedInput, CacheWriteTokens: u.CacheWrite, ReasoningTokens: u.Reasoning}}
		if u.CostUSD != nil {
			a.Cost = pricing.Known(*u.CostUSD)
		}
		s.Agents = append(s.Agents, a)
	}
	s.Total = pricing.Free
	for _, a := range s.Agents {
		s.Total = s.Total.Plus(a.Cost)
	}
	if t.TotalCostUSD != nil {
		s.Total = pricing.Known(*t.TotalCostUSD)
	}
	return s
}

// outcome is what a stored turn says of its coordination, for the tally and the timeline.
func outcome(t session.Turn) display.Outcome {
	o := display.Outcome{Winner: t.Winner, Votes: t.Votes}
	for _, m := range t.Timeline {
		o.Timeline = append(o.Timeline, orchestrator.Moment{Time: m.Time, Kind: orchestrator.EventKind(m.Kind), Agent: m.Agent, Target: m.Target, Text: m.Text})
	}
	return o
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "  (empty)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// printChanges shows what a turn changed in context paths and how to review or undo it.
func printChanges(w io.Writer, id string, n int, t session.Turn) {
	if t.ChangesFile == "" {
		return
	}
	cs, err := changes.LoadChangeSet(t.ChangesFile)
	if err != nil {
		fmt.Fprintf(w, "Changes: unreadable (%s)\n", termtext.Line(err.Error()))
		return
	}
	files := cs.Files()
	fmt.Fprintf(w, "Changed: %d file(s) in context paths", len(files))
	if !t.Undone.IsZero() {
		fmt.Fprintf(w, ", undone %s", formatTime(t.Undone))
	}
	fmt.Fprintf(w, " (massgen diff --session %s --turn %d)\n", id, n)
	for _, r := range files {
		fmt.Fprintf(w, "  %-8s %s  %s\n", r.Op(), termtext.Line(r.Path), r.LineCounts())
	}
}
