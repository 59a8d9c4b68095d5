// Package changescmd implements `massgen diff` and `massgen undo`: what one turn of a session
// changed in context paths, shown as a unified diff, or put back as it was before the turn.
package changescmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/sessionscmd"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/roots"
	"github.com/massgen-go/massgen/internal/runlock"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/session"
)

// Options are the inputs of diff and undo.
type Options struct {
	IO        *cmdutil.IOStreams
	Getwd     func() (string, error)
	HomeDir   func() (string, error)
	LookupEnv func(string) (string, bool)
	Now       func() time.Time
	// Project finds the project folder (cmdutil.Factory.Project); nil: from Getwd.
	Project func() (wd, dir string, err error)

	Config  string // --config: its session_storage holds the sessions
	Session string // --session ID ("": the latest)
	Turn    int    // --turn N (0: the latest that changed files)
	Force   bool   // undo --force: also put back what changed since the turn
	Wait    bool   // undo --wait: wait for a run in the project to end instead of refusing
}

func newOptions(f *cmdutil.Factory) *Options {
	return &Options{IO: f.IO, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv, Now: time.Now, Project: f.Project}
}

func addFlags(cmd *cobra.Command, o *Options) {
	fl := cmd.Flags()
	fl.StringVar(&o.Session, "session", "", "session ID (default: the latest session)")
	fl.IntVar(&o.Turn, "turn", 0, "turn number (default: the latest turn that changed files, interrupted or not)")
	fl.StringVarP(&o.Config, "config", "c", "", "config whose session_storage holds the sessions (default: ./.massgen/sessions)")
}

// NewDiffCmd returns `massgen diff`.
func NewDiffCmd(f *cmdutil.Factory) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:   "diff",
		Short: "Show what a turn changed in context paths, as a unified diff",
		Long: `diff prints the unified diff of what one turn of a session changed in context paths: every
file the final agent (or a command it ran) created, modified or deleted, from before the turn's
first change to the end of the turn. It reads the copies kept under .massgen/trash, so it shows
the turn's change even when the files have changed since. Colour on a terminal unless NO_COLOR.`,
		Example: `  massgen diff                       # the latest turn of the latest session
  massgen diff --turn 2
  massgen diff --session session_20250928_143022 --turn 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return diffRun(cmd.Context(), o) },
	}
	addFlags(cmd, o)
	return cmd
}

// NewUndoCmd returns `massgen undo`.
func NewUndoCmd(f *cmdutil.Factory) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Put every context-path file back as it was before a turn",
		Long: `undo puts every file one turn changed in context paths back as it was before the turn:
overwritten and deleted files are restored, created ones go to the trash (restore them with
massgen trash restore). A file changed since the turn (by you or a later turn) is left alone and
reported, unless --force, which puts it back too and keeps its current version in the trash.
Without --turn it takes back the latest turn that changed files and is not undone yet, in any
session (with --session, in that one), including a turn whose run ended before saving it: such
a turn is first recovered from its change journal as an "interrupted" turn. So undo after undo
steps back turn by turn. It says which turn and run it takes back and when. It holds the
project's run lock: during a run it refuses (exit 5), or with --wait waits for the run to end. Exit 0 when everything was put back, 1 when something was left alone.`,
		Example: `  massgen undo                       # the latest turn that changed files, not undone yet
  massgen undo                       # again: the turn before it
  massgen undo --turn 2 --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return undoRun(cmd.Context(), o) },
	}
	addFlags(cmd, o)
	cmd.Flags().Lookup("turn").Usage = "turn number (default: the latest turn that changed files and is not undone yet)"
	cmd.Flags().BoolVar(&o.Force, "force", false, "also put back files changed since the turn (their current version goes to the trash)")
	cmd.Flags().BoolVar(&o.Wait, "wait", false, "when a massgen run works in this project, wait for it to end (default: refuse, exit 5)")
	return cmd
}

// turnChanges finds the session and turn and loads what the turn changed (nil: nothing). pending
// (undo) passes over undone turns when --turn is not given.
func turnChanges(o *Options, pending bool) (*session.Session, int, session.Turn, *changes.ChangeSet, error) {
	if o.Turn < 0 {
		return nil, 0, session.Turn{}, nil, cmdutil.FlagErrorf("--turn %d: turns are numbered from 1", o.Turn)
	}
	dir, err := sessionscmd.Dir(&sessionscmd.Options{IO: o.IO, Getwd: o.Getwd, HomeDir: o.HomeDir, LookupEnv: o.LookupEnv, Project: o.Project, Config: o.Config})
	if err != nil {
		return nil, 0, session.Turn{}, nil, err
	}
	fail := func(err error) (*session.Session, int, session.Turn, *changes.ChangeSet, error) {
		return nil, 0, session.Turn{}, nil, err
	}
	if !session.Exists(dir) {
		return fail(cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("no sessions in %s", dir)))
	}
	store, err := session.Open(dir)
	if err != nil {
		return fail(cmdutil.WithCode(cmdutil.ExitFailure, err))
	}
	// Without --turn: the latest turn that changed files (of --session, or of any session); for
	// undo (pending) the latest not undone yet, so undo after undo steps back turn by turn. With
	// --turn: that turn of --session, or of the latest session.
	var s *session.Session
	var n int
	switch {
	case o.Turn == 0:
		s, n, err = store.LatestChange(o.Session, pending)
	case o.Session == "":
		s, err = store.Latest()
	default:
		s, err = store.Get(o.Session)
	}
	if errors.Is(err, session.ErrAllUndone) {
		t, _, _ := s.Turn(n)
		return fail(cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("nothing left to undo: %w (the latest, %s, on %s); `massgen undo --session %s --turn %d --force` puts its files back again",
			err, which(s, n, t), t.Undone.Local().Format("2006-01-02 15:04:05"), s.ID, n)))
	}
	if errors.Is(err, session.ErrNoSessions) || errors.Is(err, session.ErrNoChanges) && o.Session == "" {
		return fail(cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("%w in %s", err, dir)))
	}
	if errors.Is(err, session.ErrNoChanges) {
		return fail(cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("session %s: %w", o.Session, err)))
	}
	if err != nil {
		return fail(cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("--session %s: %w (see `massgen sessions list`)", o.Session, err)))
	}
	if n == 0 {
		n = o.Turn
	}
	t, n, err := s.Turn(n)
	if err != nil {
		return fail(cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("--turn: %w", err)))
	}
	cs, _, err := s.Changes(n)
	if err != nil {
		return fail(cmdutil.WithCode(cmdutil.ExitFailure, err))
	}
	if cs != nil {
		_, proj, err := cmdutil.FindProject(o.Project, o.Getwd, o.HomeDir)
		if err != nil {
			return fail(err)
		}
		if err := checkChangeSet(cs, layout.OfProject(proj).Trash(), t); err != nil {
			return fail(cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("turn %d of session %s: %w", n, s.ID, err)))
		}
	}
	return s, n, t, cs, nil
}

// checkChangeSet refuses a change set that does not belong here: its copies must be in this
// project's trash (massgen keeps them there; run diff and undo from the folder the run was in)
// and every path it names inside one of the turn's context paths. Undo writes those paths from
// those copies, so a changes.json edited by anyone else must not steer it.
func checkChangeSet(cs *changes.ChangeSet, trash string, t session.Turn) error {
	// Both resolved by the walk that resolves an agent's roots (internal/roots), which follows
	// links only as the kernel would, once.
	same := func(a, b string) bool {
		ra, err1 := roots.Canonical(a)
		rb, err2 := roots.Canonical(b)
		return err1 == nil && err2 == nil && ra == rb
	}
	if !same(cs.TrashRoot, trash) {
		return fmt.Errorf("its changes are kept in %s, not in this folder's %s: run massgen from the folder the run was in", cs.TrashRoot, trash)
	}
	var within []string
	for _, cp := range t.ContextPaths {
		within = append(within, filepath.Clean(cp.Path))
		if r, err := roots.Canonical(cp.Path); err == nil {
			within = append(within, r)
		}
	}
	for _, r := range cs.Records {
		inside := false
		for _, root := range within {
			inside = inside || pathx.Within(r.Path, root)
		}
		if !inside {
			return fmt.Errorf("changes.json names %s, which is in none of the turn's context paths; refusing", r.Path)
		}
	}
	return nil
}

// which names a turn for the user: the session, the run that made it and when, and whether it
// was interrupted.
func which(s *session.Session, n int, t session.Turn) string {
	out := fmt.Sprintf("turn %d of session %s", n, s.ID)
	var about []string
	if t.Run != "" {
		about = append(about, "run "+t.Run)
	}
	if !t.Started.IsZero() {
		about = append(about, t.Started.Local().Format("2006-01-02 15:04:05"))
	}
	switch t.Status {
	case session.StatusInterrupted:
		about = append(about, "interrupted: its run ended before saving it")
	case session.StatusCancelled:
		about = append(about, "cancelled")
	case session.StatusStopped:
		about = append(about, "stopped early")
	}
	if len(about) > 0 {
		out += " (" + strings.Join(about, ", ") + ")"
	}
	return out
}

// recoverFirst saves the project's interrupted turns (session.Recover) before diff or undo pick
// their turn: the one a killed run left is the latest. lock is the project's run lock (taken by
// the caller); without it (diff while a run works) nothing is recovered: the journals are that
// run's.
func recoverFirst(ctx context.Context, o *Options, massgenDir string) {
	rec, err := session.Recover(ctx, layout.At(massgenDir).Trash(), nil)
	for _, r := range rec {
		fmt.Fprintln(o.IO.ErrOut, r.Describe())
	}
	if err != nil {
		fmt.Fprintf(o.IO.ErrOut, "Warning: %s\n", termtext.Line(err.Error()))
	}
}

// massgenDir is the project's .massgen folder (found from any folder below it; "" when there is
// none: nothing to recover).
func massgenDir(o *Options) (string, error) {
	_, proj, err := cmdutil.FindProject(o.Project, o.Getwd, o.HomeDir)
	if err != nil {
		return "", err
	}
	dir := layout.OfProject(proj).Dir()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", nil
	}
	return dir, nil
}

func diffRun(ctx context.Context, o *Options) error {
	mdir, err := massgenDir(o)
	if err != nil {
		return err
	}
	if mdir != "" { // recover when no run holds the project (diff never waits)
		if lock, err := runlock.Acquire(ctx, mdir, runlock.Holder{PID: os.Getpid(), Started: o.Now(), Command: "massgen diff"}, false, nil); err == nil {
			recoverFirst(ctx, o, mdir)
			_ = lock.Release()
		}
	}
	s, n, t, cs, err := turnChanges(o, false)
	if err != nil {
		return err
	}
	if len(cs.Files()) == 0 {
		fmt.Fprintf(o.IO.ErrOut, "Turn %d of session %s changed nothing in context paths.\n", n, s.ID)
		return nil
	}
	fmt.Fprintf(o.IO.ErrOut, "Changes of %s:\n", which(s, n, t))
	if !t.Undone.IsZero() {
		fmt.Fprintf(o.IO.ErrOut, "Turn %d of session %s was undone on %s.\n", n, s.ID, t.Undone.Local().Format("2006-01-02 15:04:05"))
	}
	if cs.Incomplete != "" {
		fmt.Fprintf(o.IO.ErrOut, "Warning: the record of this turn's changes is incomplete: %s\n", termtext.Line(cs.Incomplete))
	}
	_, noColor := o.LookupEnv("NO_COLOR")
	if err := cs.WriteDiff(o.IO.Out, o.IO.StdoutTTY && !noColor); err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	return nil
}

func undoRun(ctx context.Context, o *Options) error {
	mdir, err := massgenDir(o)
	if err != nil {
		return err
	}
	if mdir != "" { // undo writes the user's files from the records: one massgen at a time
		lock, err := cmdutil.LockProject(ctx, o.IO.ErrOut, mdir, "massgen undo", o.Wait, o.Now())
		if err != nil {
			return err
		}
		defer func() { _ = lock.Release() }()
		recoverFirst(ctx, o, mdir)
	}
	s, n, t, cs, err := turnChanges(o, true)
	if err != nil {
		return err
	}
	w := o.IO.ErrOut
	fmt.Fprintf(w, "Undoing %s.\n", which(s, n, t))
	if cs == nil || len(cs.Records) == 0 {
		fmt.Fprintf(w, "Turn %d of session %s changed nothing in context paths: nothing to undo.\n", n, s.ID)
		return nil
	}
	if !t.Undone.IsZero() && !o.Force {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("turn %d of session %s was already undone on %s (use --force to put its files back again)",
			n, s.ID, t.Undone.Local().Format("2006-01-02 15:04:05")))
	}
	now := o.Now()
	trash := filepath.Join(cs.TrashRoot, "undo_"+now.Format("20060102_150405"))
	rep, err := cs.Undo(ctx, changes.UndoOptions{Force: o.Force, TrashDir: trash})
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	for _, p := range rep.Restored {
		fmt.Fprintf(o.IO.Out, "restored  %s\n", termtext.Line(p))
	}
	for _, p := range rep.Removed {
		fmt.Fprintf(o.IO.Out, "removed   %s\n", termtext.Line(p))
	}
	for _, sk := range rep.Skipped {
		fmt.Fprintf(o.IO.Out, "skipped   %s: %s\n", termtext.Line(sk.Path), termtext.Line(sk.Reason))
	}
	if len(rep.TrashIDs) > 0 {
		fmt.Fprintf(w, "What undo replaced or removed is in the trash (massgen trash list): %d entries.\n", len(rep.TrashIDs))
	}
	if len(rep.Skipped) > 0 {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("turn %d of session %s: %d path(s) left alone (see above)", n, s.ID, len(rep.Skipped)))
	}
	if err := s.MarkUndone(n, now, rep); err != nil {
		fmt.Fprintf(w, "Warning: could not record the undo in the session: %s\n", termtext.Line(err.Error()))
	}
	fmt.Fprintf(w, "Turn %d of session %s is undone: %d restored, %d removed.\n", n, s.ID, len(rep.Restored), len(rep.Removed))
	if o.Turn == 0 { // stepping back: say what the next undo takes
		if store, err := session.Open(filepath.Dir(s.Dir)); err == nil {
			if ps, pn, err := store.LatestChange(o.Session, true); err == nil {
				pt, _, _ := ps.Turn(pn)
				fmt.Fprintf(w, "`massgen undo` again takes back %s.\n", which(ps, pn, pt))
			}
		}
	}
	return nil
}
