//go:build windows

package tmpsweep

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile locks f's first byte without waiting.
func lockFile(f *os.File) error {
	ol := &windows.Overlapped{}
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
}

// ownedDir reports whether dir is a real folder (not a link). The temp folder is the user's own
// on Windows.
func ownedDir(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir()
}
