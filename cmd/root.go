// Package cmd wires the cobra command tree: it parses flags, calls the packages that do the work,
// and prints. It holds no logic of its own beyond that.
package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/configscmd"
	"github.com/massgen-go/massgen/cmd/mcpcmd"
	"github.com/massgen-go/massgen/cmd/permissionscmd"
	"github.com/massgen-go/massgen/cmd/sessionscmd"
	"github.com/massgen-go/massgen/cmd/toolscmd"
	"github.com/massgen-go/massgen/cmd/trashcmd"
)

// NewRootCmd builds `massgen [flags] [QUESTION]` and its subcommands.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "massgen [flags] [QUESTION]",
		Short:         "Run several LLM agents on one task; they answer, vote, and the winner delivers",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitFailure, errors.New("massgen: not implemented yet"))
		},
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.AddCommand(
		configscmd.NewCmd(f),
		permissionscmd.NewCmd(f),
		toolscmd.NewCmd(f),
		trashcmd.NewCmd(f),
		mcpcmd.NewCmd(f),
		sessionscmd.NewCmd(f),
	)
	return root
}

// Execute runs the command line and returns the process exit code.
func Execute(ctx context.Context, f *cmdutil.Factory, args []string) int {
	root := NewRootCmd(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	code := cmdutil.CodeOf(err)
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Err != nil {
		fmt.Fprintln(f.IO.ErrOut, "Error:", err)
	}
	if ee == nil && isUsageError(err) {
		code = cmdutil.ExitUsage
	}
	return code
}

// isUsageError reports cobra's own flag and argument errors, which exit 2.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "accepts at most", "accepts ", "requires at least", "unknown command", "required flag"} {
		if len(msg) >= len(p) && contains(msg, p) {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
