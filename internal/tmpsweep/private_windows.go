//go:build windows

package tmpsweep

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"

	"github.com/massgen-go/massgen/internal/safefs"
)

// lockFile locks f's first byte without waiting.
func lockFile(f *os.File) error {
	ol := &windows.Overlapped{}
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
}

// createLocked creates dir's lock file and locks it at once (an open file cannot be renamed
// here; a sweep that opens it in between finds a folder made a moment ago and, its lock not
// yet held, could remove it: the owner's first write then fails and says so).
func createLocked(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// ownedDir: the temp folder is the user's own on Windows (the entry was listed without
// following it).
func ownedDir(safefs.Info) bool { return true }
