// Package versioncmd implements `massgen version` (and the text of `massgen --version`): the
// module version, the commit it was built from and the Go version, read from the binary's build
// information.
package versioncmd

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// Info is what the binary knows about its build.
type Info struct {
	Version   string // module version: v1.2.3, a pseudo-version, or "(devel)" for a local build
	Commit    string // vcs.revision, "" when not recorded
	Time      string // vcs.time (RFC 3339), "" when not recorded
	Modified  bool   // vcs.modified: built from a tree with uncommitted changes
	GoVersion string
	Platform  string // GOOS/GOARCH
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "unknown", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts Info from build information.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// String is the text of `massgen version` and `massgen --version`, for example
//
//	massgen v0.3.0
//	commit 8f2c1e0d9a7b (modified), 2025-10-01T12:00:00Z
//	go1.26.0 linux/amd64
func (in Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "massgen %s\n", in.Version)
	if in.Commit != "" {
		fmt.Fprintf(&b, "commit %s", in.Commit)
		if in.Modified {
			b.WriteString(" (modified)")
		}
		if in.Time != "" {
			b.WriteString(", " + in.Time)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("commit unknown (built without version control information)\n")
	}
	fmt.Fprintf(&b, "%s %s\n", in.GoVersion, in.Platform)
	return b.String()
}

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
