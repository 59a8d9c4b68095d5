// Package mcpcmd implements `massgen mcp`.
package mcpcmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// NewCmd returns the `mcp` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "mcp (not implemented yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitFailure, errors.New("massgen mcp: not implemented yet"))
		},
	}
}
