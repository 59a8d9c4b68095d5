// Package buildinfo is the one place that knows the binary's version: `massgen version`,
// `massgen --version`, the MCP server's and client's implementation version and every run's log
// read it from here.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set by release builds:
//
//	go build -ldflags "-X github.com/massgen-go/massgen/internal/buildinfo.version=v1.2.3"
//
// It wins over the module version, which `go build` in a checkout leaves at "(devel)" (or a
// pseudo-version derived from VCS tags). Written by the linker only, never at run time.
var version string

// Info is what the binary knows about its build.
type Info struct {
	Version   string // the -X override, else the module version: v1.2.3, a pseudo-version, or "(devel)"
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
		bi = &debug.BuildInfo{GoVersion: runtime.Version()}
	}
	return FromBuildInfo(bi, version)
}

// Version is Read().Version: the one version string the binary reports everywhere.
func Version() string { return Read().Version }

// FromBuildInfo extracts Info from build information; override (the -X version) wins over the
// module version when set.
func FromBuildInfo(bi *debug.BuildInfo, override string) Info {
	in := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if override = strings.TrimSpace(override); override != "" {
		in.Version = override
	}
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
