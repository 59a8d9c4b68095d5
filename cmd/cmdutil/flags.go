package cmdutil

import (
	"fmt"

	"github.com/spf13/cobra"
)

// FlagError is a usage error: a bad flag, argument or combination of them (exit 2). Commands
// return it instead of the caller guessing from an error's text.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a FlagError with a formatted message.
func FlagErrorf(format string, a ...any) error {
	return &FlagError{Err: fmt.Errorf(format, a...)}
}

// FlagErrorFunc makes cobra's flag parsing errors FlagErrors (cobra.Command.SetFlagErrorFunc;
// subcommands inherit it).
func FlagErrorFunc(_ *cobra.Command, err error) error { return &FlagError{Err: err} }

// The argument checks of cobra, returning FlagErrors.
var (
	NoArgs = flagArgs(cobra.NoArgs)
)

func flagArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &FlagError{Err: err}
		}
		return nil
	}
}

// MarkUsageErrors makes every usage error of the command tree under root a FlagError: flag
// parsing errors (inherited by subcommands) and every command's argument check, so the exit
// code never depends on an error's text.
func MarkUsageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(FlagErrorFunc)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Args != nil {
			c.Args = flagArgs(c.Args)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
