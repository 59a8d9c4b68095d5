// Package private keeps massgen's own records (logs, sessions, trash, snapshots, temp
// workspaces, the run lock, workspace records) private to the user who runs it: directories
// 0700, files 0600, whatever the umask. Content massgen copies from agents or the user (files in
// workspaces, snapshots, a session's workspace/, the trash's data) keeps its own modes inside
// those directories: a 0700 directory already keeps everyone else out.
package private

import (
	"fmt"
	"io/fs"
	"os"
)

// Modes of massgen's records. A umask can only take bits away, so creating with these is enough
// for new records; Tighten fixes folders an older massgen made 0755.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// MkdirAll creates dir and its missing parents with DirMode, then tightens dir itself (not its
// parents, which may be the user's) to DirMode when it already existed with group or other bits.
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	return Tighten(dir)
}

// Tighten removes group and other bits from the directory dir (a folder of massgen's made by an
// older version, or under a loose umask by another tool).
func Tighten(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return os.Chmod(dir, fi.Mode().Perm()&^0o077)
}
