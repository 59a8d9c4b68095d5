// Package trashcmd implements `massgen trash`.
package trashcmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// NewCmd returns the `trash` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "trash",
		Short: "trash (not implemented yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitFailure, errors.New("massgen trash: not implemented yet"))
		},
	}
}
