// Package trashcmd implements `massgen trash`: list the files agents deleted from context paths
// (kept in .massgen/trash/<run>/) and put them back.
package trashcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/termtext"
)

// NewCmd returns the `trash` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trash",
		Short: "List or restore files agents deleted from context paths",
		Long: `Files an agent deletes from a context path (your files) are moved to
.massgen/trash/<run>/<n>/ instead of being removed. "trash list" shows them; "trash restore ID"
puts one back where it was (never over an existing file); "trash empty" deletes them for good. Files deleted from an agent's own
workspace are not kept.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitUsage, errors.New("massgen trash: missing subcommand (list, restore or empty)"))
		},
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdRestore(f, nil), NewCmdEmpty(f, nil))
	return cmd
}

// Options are the inputs of `trash list` and `trash restore`.
type Options struct {
	IO    *cmdutil.IOStreams
	Getwd func() (string, error)

	MassgenDir string // --massgen-dir (default ./.massgen)
	JSON       bool
	IDs        []string
	Wait       bool // restore --wait: wait for a run in the project to end instead of refusing
	Now        func() time.Time
	Yes        bool // empty --yes: do not ask
}

func newOptions(f *cmdutil.Factory) *Options {
	return &Options{IO: f.IO, Getwd: f.Getwd, Now: time.Now}
}

func addDir(cmd *cobra.Command, o *Options) {
	cmd.Flags().StringVar(&o.MassgenDir, "massgen-dir", "", "the .massgen folder (default: ./.massgen)")
}

func (o *Options) dir() (string, error) {
	if o.MassgenDir != "" {
		return filepath.Abs(o.MassgenDir)
	}
	wd, err := o.Getwd()
	if err != nil {
		return "", cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("current directory: %w", err))
	}
	return layout.OfProject(wd).Dir(), nil
}

// NewCmdList returns `trash list`; runF replaces listRun in tests.
func NewCmdList(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:           "list [--json]",
		Short:         "List trashed files, oldest first",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return listRun(o)
		},
	}
	addDir(cmd, o)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON array")
	return cmd
}

// NewCmdRestore returns `trash restore`; runF replaces restoreRun in tests.
func NewCmdRestore(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:     "restore ID...",
		Short:   "Put trashed files back where they were",
		Example: "  massgen trash restore log_20250101_120000/0001",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.WithCode(cmdutil.ExitUsage, errors.New("massgen trash restore: give at least one ID (see `massgen trash list`)"))
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IDs = args
			if runF != nil {
				return runF(o)
			}
			return restoreRun(cmd.Context(), o)
		},
	}
	addDir(cmd, o)
	cmd.Flags().BoolVar(&o.Wait, "wait", false, "when a massgen run works in this project, wait for it to end (default: refuse, exit 5)")
	return cmd
}

// NewCmdEmpty returns `trash empty`; runF replaces emptyRun in tests.
func NewCmdEmpty(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:   "empty [--yes]",
		Short: "Delete every trashed file for good (asks first)",
		Long: `Deletes .massgen/trash and everything in it; the files cannot be restored afterwards. It asks
first (--yes skips the question; without a terminal --yes is required), and refuses while a
massgen run works in the project (exit 5), since that run may trash more files.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return emptyRun(cmd.Context(), o)
		},
	}
	addDir(cmd, o)
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func emptyRun(ctx context.Context, o *Options) error {
	dir, err := o.dir()
	if err != nil {
		return err
	}
	trash := layout.At(dir).Trash()
	if _, err := os.Lstat(trash); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(o.IO.ErrOut, "the trash is empty (%s)\n", trash)
		return nil // nothing to lock for: creating .massgen/ here would leave a folder behind
	}
	lock, err := cmdutil.LockProjectNow(ctx, dir, "massgen trash empty")
	if err != nil {
		return err
	}
	defer func() { _ = lock.Release() }()
	entries, err := changes.ListTrash(dir)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	q := fmt.Sprintf("Delete the %d trashed file(s) in %s for good? They cannot be restored", len(entries), termtext.Line(trash))
	if err := cmdutil.Confirm(o.IO, q, o.Yes); err != nil {
		return err
	}
	// Through the .massgen folder's handle: a symlink planted as trash (or inside it) is removed,
	// never followed.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	defer root.Close()
	if err := root.RemoveAll(filepath.Base(trash)); err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("emptying the trash: %w", err))
	}
	fmt.Fprintf(o.IO.Out, "deleted %d trashed file(s) from %s\n", len(entries), termtext.Line(trash))
	return nil
}

func listRun(o *Options) error {
	dir, err := o.dir()
	if err != nil {
		return err
	}
	entries, err := changes.ListTrash(dir)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	if o.JSON {
		if entries == nil {
			entries = []changes.TrashEntry{}
		}
		enc := json.NewEncoder(termtext.JSONWriter(o.IO.Out))
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	if len(entries) == 0 {
		fmt.Fprintf(o.IO.ErrOut, "the trash is empty (%s)\n", layout.At(dir).Trash())
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDELETED\tTYPE\tAGENT\tORIGINAL PATH")
	for _, e := range entries {
		kind := "file"
		if e.IsDir {
			kind = "dir"
		}
		// An agent chose the path (and could put a tab or an escape sequence in it).
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Line(e.ID), e.DeletedAt.Local().Format(time.DateTime), kind, termtext.Line(e.Agent), termtext.Line(e.OriginalPath))
	}
	return tw.Flush()
}

func restoreRun(ctx context.Context, o *Options) error {
	dir, err := o.dir()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		// Restoring writes the user's files: not while a run works in the project.
		now := time.Now()
		if o.Now != nil {
			now = o.Now()
		}
		lock, err := cmdutil.LockProject(ctx, o.IO.ErrOut, dir, "massgen trash restore", o.Wait, now)
		if err != nil {
			return err
		}
		defer func() { _ = lock.Release() }()
	}
	var failed error
	entries, _ := changes.ListTrash(dir)
	where := map[string]string{}
	for _, e := range entries {
		where[e.ID] = e.OriginalPath
	}
	for _, id := range o.IDs {
		if err := changes.RestoreTrash(dir, id); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "massgen trash restore: %s\n", termtext.Line(err.Error()))
			failed = err
			continue
		}
		fmt.Fprintf(o.IO.Out, "restored %s -> %s\n", termtext.Line(id), termtext.Line(where[id]))
	}
	if failed != nil {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
}
