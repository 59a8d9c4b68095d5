//go:build unix

package tmpsweep

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/safefs"
)

// lockFile takes an exclusive flock on f without waiting.
func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// createLocked creates dir's lock file, locked before it gets the name a sweep looks for: a
// sweep never finds it unlocked while its owner lives.
func createLocked(dir string) (*os.File, error) {
	tmp := filepath.Join(dir, lockName+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err = lockFile(f); err == nil {
		err = os.Rename(tmp, filepath.Join(dir, lockName))
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// ownedDir reports whether the folder entry info is owned by this user.
func ownedDir(info safefs.Info) bool { return int(info.Uid) == os.Geteuid() }
