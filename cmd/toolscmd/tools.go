// Package toolscmd implements `massgen tools`.
package toolscmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// NewCmd returns the `tools` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "tools",
		Short: "tools (not implemented yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitFailure, errors.New("massgen tools: not implemented yet"))
		},
	}
}
