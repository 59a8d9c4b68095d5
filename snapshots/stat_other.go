//go:build !linux && !darwin

package snapshots

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

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

// renameNoReplace checks, then renames: two steps here (only the store writes in its folders).
func renameNoReplace(a, b string) error {
	if _, err := os.Lstat(b); err == nil {
		return renameErr(a, b, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rename %s %s: %w", a, b, err)
	}
	return os.Rename(a, b)
}

func reflink(src, dst string, mode fs.FileMode) error { return errors.ErrUnsupported }
