// Package permissionscmd implements `massgen permissions`: `check` decides tool calls exactly as
// a run would, without contacting a backend or writing anything.
package permissionscmd

import (
	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// NewCmd returns the `permissions` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "permissions",
		Aliases: []string{"permission"},
		Short:   "Check what an agent may read, write and run",
		Long: `The permission engine decides every tool call an agent makes. "massgen permissions check"
asks it directly, with the same config, agent and role as a run, and prints the decision and
its reason. See docs/permissions.md.`,
	}
	cmd.AddCommand(NewCmdCheck(f, nil), NewCmdTrust(f, nil))
	return cmd
}
