// Package versioncmd implements `massgen version` (and the text of `massgen --version`): the
// version, the commit it was built from and the Go version, as internal/buildinfo reads them.
package versioncmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/buildinfo"
)

// Info is what the binary knows about its build (internal/buildinfo computes it).
type Info = buildinfo.Info

// Read returns the running binary's build information.
func Read() Info { return buildinfo.Read() }

// Options are the inputs of `massgen version`.
type Options struct {
	IO   *cmdutil.IOStreams
	Info func() Info
}

// NewCmd returns the `version` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, Info: Read}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the Go version massgen was built with",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return Run(opts) },
	}
}

// Run prints the build information on stdout.
func Run(opts *Options) error {
	_, err := fmt.Fprint(opts.IO.Out, opts.Info().String())
	return err
}
