//go:build !linux

package snapshots

import (
	"errors"
	"io/fs"
	"os"
)

func fillStat(e *entry, info fs.FileInfo) {
	e.size = info.Size()
	e.mtime = info.ModTime().UnixNano()
	e.ctime = e.mtime // no ctime here: every recent file gets its content compared
}

func racyWindow(string) int64 { return 2e9 }

// exchange is not atomic here: the old snapshot is moved aside first.
func exchange(a, b string) error {
	tmp := b + ".old"
	if err := os.Rename(b, tmp); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		return err
	}
	return os.Rename(tmp, a)
}

func reflink(src, dst string, mode fs.FileMode) error { return errors.ErrUnsupported }
