package cmdutil

import (
	"fmt"
	"io"

	"github.com/massgen-go/massgen/internal/project"
	"github.com/massgen-go/massgen/internal/termtext"
)

// Project returns the current directory and the project folder the command works in
// (internal/project.Find: the nearest .massgen/ above, else the git root, else wd).
func (f *Factory) Project() (wd, dir string, err error) {
	return FindProject(nil, f.Getwd, f.HomeDir)
}

// FindProject is Factory.Project for commands that carry their own functions: proj when it is
// set, else project.Find from getwd and homeDir.
func FindProject(proj func() (string, string, error), getwd func() (string, error), homeDir func() (string, error)) (wd, dir string, err error) {
	if proj != nil {
		return proj()
	}
	wd, err = getwd()
	if err != nil {
		return "", "", WithCode(ExitFailure, fmt.Errorf("current directory: %w", err))
	}
	home := ""
	if homeDir != nil {
		home, _ = homeDir()
	}
	return wd, project.Find(wd, home), nil
}

// SayProject tells on w which project folder a command uses when it is not the current
// directory (one line; nothing otherwise).
func SayProject(w io.Writer, wd, dir string) {
	if dir != wd {
		fmt.Fprintf(w, "Project: %s (its .massgen/ holds the sessions, logs and changes)\n", termtext.Line(dir))
	}
}
