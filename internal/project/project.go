// Package project finds the project a massgen command works in, as git finds its repository:
// the nearest folder at or above the current directory that holds .massgen/, looking no higher
// than the git root (the folder holding .git); without one, the git root; outside git, the
// current directory. Every command that reads or writes run state (runs, sessions, diff, undo,
// logs, --continue) asks Find, so all of them agree from any folder of the project.
package project

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/private"
)

// gitignore keeps the state folder out of `git status`: it holds run state, never sources.
const gitignore = "# massgen's run state: never committed\n*\n"

// Find returns the project folder for the current directory wd (absolute). The home folder's
// .massgen/ is the user's config folder, not a project: it counts only when wd is home itself.
func Find(wd, home string) string {
	wd = filepath.Clean(wd)
	if home != "" {
		home = filepath.Clean(home)
	}
	for dir := wd; ; {
		if dir == home && dir != wd {
			break
		}
		if fi, err := os.Stat(layout.OfProject(dir).Dir()); err == nil && fi.IsDir() {
			return dir
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil { // a folder, or a file in a worktree
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return wd
}

// Init makes dir's state folder when it does not exist yet, with a .gitignore of "*" so that
// it never shows in `git status`. A state folder that exists is left as it is.
func Init(dir string) error {
	state := layout.OfProject(dir).Dir()
	err := os.Mkdir(state, private.DirMode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(state, ".gitignore"), []byte(gitignore), private.FileMode)
}
