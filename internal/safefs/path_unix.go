//go:build unix

package safefs

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenNoFollow opens the file at path for reading; a link as its last component is refused
// (ELOOP). It is for massgen's own folders (snapshots, staging), which no agent can write: a
// path an agent could have shaped goes through Resolve or a Dir.
func OpenNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// CreateNew creates the file at path for writing with permission bits perm; any existing entry,
// a link included, is refused (fs.ErrExist). Like OpenNoFollow, for massgen's own folders.
func CreateNew(path string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
}
