//go:build !unix

package safefs

import (
	"errors"
	"io/fs"
	"os"
)

// OpenNoFollow opens the file at path for reading; a link (or other reparse point) as its last
// component is refused. There is no O_NOFOLLOW here: the entry is lstat'ed, opened and checked
// to be the one lstat'ed. It is for massgen's own folders (snapshots, staging), which no agent
// can write: a path an agent could have shaped goes through Resolve or a Dir.
func OpenNoFollow(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if before.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errNotPlain}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err == nil && !os.SameFile(before, after) {
		err = &fs.PathError{Op: "open", Path: path, Err: errNotPlain}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

var errNotPlain = errors.New("a symbolic link, or replaced while being opened")

// CreateNew creates the file at path for writing with permission bits perm; O_EXCL
// (CREATE_NEW) refuses any existing entry, a link included (fs.ErrExist).
func CreateNew(path string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}
