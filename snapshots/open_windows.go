package snapshots

import (
	"errors"
	"io/fs"
	"os"
)

// openNoFollow: Windows has no O_NOFOLLOW, so the entry is checked (see openChecked).
func openNoFollow(p string) (*os.File, error) {
	return openChecked(p, os.Lstat, func() (*os.File, error) { return os.Open(p) })
}

// createExcl: O_EXCL (CREATE_NEW) fails on any existing entry, a symlink included.
func createExcl(p string, mode fs.FileMode) (*os.File, error) {
	return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm()|0o200)
}

// linkUnsupported: hard links fail on FAT and exFAT, across volumes and shares, and past 1023
// links, each with its own error; a copy is always right, so any failure but "exists" copies.
func linkUnsupported(err error) bool {
	return !errors.Is(err, fs.ErrExist) && !errors.Is(err, fs.ErrNotExist)
}
