package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/runlock"
	"github.com/massgen-go/massgen/session"
)

// Every run is a session, and --continue / --session ID restore what the session ran with: its
// config (unless --config is given) and its context paths with their permissions and protected
// paths (unless --context is given).

// resuming reports whether this invocation continues a session.
func (o *RunOptions) resuming() bool { return o.Continue || o.SessionID != "" }

// findSession finds the session --continue or --session names in the sessions folder dir.
// found is false (with no error) for --continue when dir holds no session yet.
func findSession(opts *RunOptions, dir string) (s *sessionState, found bool, err error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) && opts.Continue {
		return nil, false, nil
	}
	store, err := session.OpenExisting(dir) // a lookup creates nothing
	if err != nil {
		return nil, false, cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("sessions: %w", err))
	}
	s = &sessionState{store: store, dir: dir}
	if opts.SessionID != "" {
		if s.cur, err = store.Get(opts.SessionID); err != nil {
			return nil, false, cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("--session %s: %w (see `massgen sessions list`)", opts.SessionID, err))
		}
		return s, true, nil
	}
	s.cur, err = store.Latest()
	if errors.Is(err, session.ErrNoSessions) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("--continue: %w", err))
	}
	return s, true, nil
}

// resumeBeforeConfig runs before the config is loaded: without --config, the session is looked
// for in the project's .massgen/sessions (proj: internal/project.Find) and its config becomes
// the one to load. It returns the session
// (nil when the config decides where sessions are: --config given, or a default config whose
// session_storage may point elsewhere) and the config name to load.
func resumeBeforeConfig(ctx context.Context, opts *RunOptions, proj, home string) (*sessionState, string, error) {
	if !opts.resuming() || opts.ConfigName != "" {
		return nil, opts.ConfigName, nil
	}
	recoverBeforeResume(ctx, opts, layout.OfProject(proj).Dir())
	dir := layout.OfProject(proj).Sessions()
	s, found, err := findSession(opts, dir)
	if err != nil {
		return nil, "", err
	}
	if !found {
		if _, _, ok := configs.DefaultConfigName(proj, home, opts.LookupEnv); ok {
			return nil, "", nil // the default config's session_storage decides
		}
		return nil, "", cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("--continue: no session to continue in %s (run a task first; with another session_storage, pass its --config)", dir))
	}
	name, _, err := s.cur.Resume()
	if err != nil {
		return nil, "", cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("session %s: %w; pass --config", s.cur.ID, err))
	}
	return s, name, nil
}

// recoverBeforeResume recovers the interrupted turns of the project whose .massgen folder is
// massgenDir before --continue picks the latest session (it may be one of them), when no other
// run holds the project; otherwise the run lock decides, and the run recovers them once it has
// it.
func recoverBeforeResume(ctx context.Context, opts *RunOptions, massgenDir string) {
	if _, err := os.Stat(massgenDir); err != nil {
		return
	}
	lock, err := runlock.Acquire(ctx, massgenDir, runlock.Holder{PID: os.Getpid(), Started: opts.Now(), Command: "massgen"}, false, nil)
	if err != nil {
		return
	}
	defer func() { _ = lock.Release() }()
	recoverTurns(ctx, opts.IO.ErrOut, layout.At(massgenDir).Trash(), nil)
}

// resumeContextPaths returns the resumed session's context paths, for configs.Resolve, and the
// session that names them in messages ("session ID"). An older session without them gives
// none: the config's own context paths only.
func resumeContextPaths(s *sessionState) ([]configs.ContextPath, string, error) {
	if s == nil || s.cur == nil {
		return nil, "", nil
	}
	_, cps, err := s.cur.Resume()
	if errors.Is(err, session.ErrNoResumeInfo) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	return cps, "session " + s.cur.ID, nil
}

// printResumeHint tells, when leaving interactive mode, how to come back to the session.
func printResumeHint(opts *RunOptions, st *runState) {
	s := st.session
	if s == nil || s.cur == nil || opts.Display == "silent" {
		return
	}
	fmt.Fprintf(opts.IO.ErrOut, "Session %s (%s) is saved. Resume it with `massgen --continue` or `massgen --session %s`.\n",
		s.cur.ID, plural(s.turns(), "turn"), s.cur.ID)
}
