// Package permissionscmd implements `massgen permissions`.
package permissionscmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// NewCmd returns the `permissions` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "permissions",
		Short: "permissions (not implemented yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitFailure, errors.New("massgen permissions: not implemented yet"))
		},
	}
}
