package sessionscmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/logging"
	"github.com/massgen-go/massgen/session"
)

func newPruneCmd(opts *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION [--yes]",
		Short: "Delete sessions and run logs older than DURATION (asks first)",
		Long: `Deletes the sessions last updated before DURATION ago (their turns, workspace copies and
change records) and the run log folders (.massgen/logs/log_*) of runs started before then. DURATION
is a Go duration (36h, 90m) or a number of days or weeks (7d, 2w). It lists what it will delete
and asks first (--yes skips the question; without a terminal --yes is required). While a massgen
run works in the project it refuses (exit 5): it never deletes the session or log a run is using.`,
		Example: "  massgen sessions prune --older-than 30d",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return pruneRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.OlderThan, "older-than", "", "delete what is older than this: 7d, 2w, 36h (required)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// parseAge parses --older-than: a Go duration, or a whole number of days (d) or weeks (w).
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	var err error
	switch {
	case s == "":
		return 0, errors.New("--older-than is required (for example --older-than 30d)")
	case strings.HasSuffix(s, "d"), strings.HasSuffix(s, "w"):
		unit := 24 * time.Hour
		if strings.HasSuffix(s, "w") {
			unit *= 7
		}
		var n int
		n, err = strconv.Atoi(s[:len(s)-1])
		d = time.Duration(n) * unit
	default:
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--older-than %q: want a positive duration such as 30d, 2w or 36h", s)
	}
	return d, nil
}

// pruneItem is one folder prune deletes: a session in the sessions folder or a run log folder in
// the logs folder.
type pruneItem struct {
	parent, name, what string
	when               time.Time
}

func pruneRun(ctx context.Context, opts *Options) error {
	age, err := parseAge(opts.OlderThan)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	l, err := projectLayout(opts)
	if err != nil {
		return err
	}
	sessionsDir, massgenDir, logsDir := l.Sessions(), l.Dir(), l.Logs()
	cutoff := opts.Now().Add(-age)
	if !exists(sessionsDir) && !exists(logsDir) {
		fmt.Fprintf(opts.IO.ErrOut, "Nothing older than %s: no sessions in %s, no logs in %s\n", opts.OlderThan, sessionsDir, logsDir)
		return nil // and no .massgen/ made just to lock it
	}
	// No run may write a session or a log while they are chosen and deleted.
	lock, err := cmdutil.LockProjectNow(ctx, massgenDir, "massgen sessions prune")
	if err != nil {
		return err
	}
	defer func() { _ = lock.Release() }()

	items, err := pruneItems(sessionsDir, logsDir, cutoff)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	if len(items) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "Nothing older than %s (before %s) in %s or %s\n", opts.OlderThan, cutoff.Local().Format(time.DateTime), sessionsDir, logsDir)
		return nil
	}
	nSessions := 0
	for _, it := range items {
		if it.what == "session" {
			nSessions++
		}
		fmt.Fprintf(opts.IO.ErrOut, "  %-8s %s  (%s)\n", it.what, termtext.Line(filepath.Join(it.parent, it.name)), it.when.Local().Format(time.DateTime))
	}
	q := fmt.Sprintf("Delete %d session(s) and %d run log(s) older than %s (before %s)? They cannot be restored",
		nSessions, len(items)-nSessions, opts.OlderThan, cutoff.Local().Format(time.DateTime))
	if err := cmdutil.Confirm(opts.IO, q, opts.Yes); err != nil {
		return err
	}
	var failed error
	for _, it := range items {
		if err := removeUnder(it.parent, it.name); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "massgen sessions prune: %s\n", termtext.Line(err.Error()))
			failed = err
			continue
		}
		fmt.Fprintf(opts.IO.Out, "deleted %s %s\n", it.what, termtext.Line(it.name))
	}
	if failed != nil {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
}

// pruneItems lists the sessions last updated before cutoff and the run log folders of runs
// started before it.
func pruneItems(sessionsDir, logsDir string, cutoff time.Time) ([]pruneItem, error) {
	var items []pruneItem
	store, err := session.OpenExisting(sessionsDir)
	if err != nil {
		return nil, err
	}
	infos, err := store.List()
	if err != nil {
		return nil, fmt.Errorf("listing sessions in %s: %w", sessionsDir, err)
	}
	for _, in := range infos {
		if in.Updated.Before(cutoff) {
			items = append(items, pruneItem{parent: store.Root(), name: in.ID, what: "session", when: in.Updated})
		}
	}
	ents, err := os.ReadDir(logsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("listing run logs: %w", err)
	}
	for _, e := range ents {
		started, ok := logging.RunStarted(e.Name())
		if ok && e.IsDir() && started.Before(cutoff) {
			items = append(items, pruneItem{parent: logsDir, name: e.Name(), what: "log", when: started})
		}
	}
	return items, nil
}

// removeUnder deletes parent/name through parent's handle: a symlink in the way is removed, never
// followed out of parent.
func removeUnder(parent, name string) error {
	root, err := os.OpenRoot(parent)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.RemoveAll(name); err != nil {
		return fmt.Errorf("deleting %s: %w", filepath.Join(parent, name), err)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
