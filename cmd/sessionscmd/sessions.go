// Package sessionscmd implements `massgen sessions`.
package sessionscmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// NewCmd returns the `sessions` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "sessions",
		Short: "sessions (not implemented yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitFailure, errors.New("massgen sessions: not implemented yet"))
		},
	}
}
