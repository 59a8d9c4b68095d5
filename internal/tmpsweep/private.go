package tmpsweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/safefs"
)

// A private folder is a folder of massgen's own in the system temp folder (mode 0700), such as
// the state a coding-agent CLI keeps for one agent during a run, with the address and secret
// of massgen's tool bridge. Its owner holds a lock on the file "lock" inside it for as long as
// it lives, and removes it when done; the kernel drops the lock when the owner dies, however it
// dies, so the next SweepPrivate removes a folder a crash left behind without guessing from
// pids or ages.

// lockName is the file inside a private folder that its owner keeps locked.
const lockName = "lock"

// Private is a private folder held by this process.
type Private struct {
	Path string
	lock *os.File
	once sync.Once
	err  error
}

// NewPrivate creates a private folder named prefix-<random> in the system temp folder and
// locks it. prefix must start with "massgen-".
func NewPrivate(prefix string) (*Private, error) {
	if !strings.HasPrefix(prefix, "massgen-") {
		return nil, fmt.Errorf("tmpsweep: private folder prefix %q must start with massgen-", prefix)
	}
	dir, err := os.MkdirTemp("", prefix+"-")
	if err != nil {
		return nil, err
	}
	f, err := createLocked(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("tmpsweep: locking %s: %w", dir, err)
	}
	return &Private{Path: dir, lock: f}, nil
}

// Remove removes the folder and everything in it, then drops the lock. It may be called more
// than once.
func (p *Private) Remove() error {
	p.once.Do(func() {
		if runtime.GOOS == "windows" { // an open file cannot be removed there
			_ = p.lock.Close()
		}
		p.err = os.RemoveAll(p.Path)
		_ = p.lock.Close()
	})
	return p.err
}

// SweepPrivate removes the private folders named prefix-* in the system temp folder that no
// live process holds: folders a crashed massgen left behind. A folder of another user, or one
// that is not a folder, or one whose lock is held, is left alone. It returns the folders
// removed.
func SweepPrivate(prefix string, log *zap.Logger) ([]string, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if !strings.HasPrefix(prefix, "massgen-") {
		return nil, fmt.Errorf("tmpsweep: private folder prefix %q must start with massgen-", prefix)
	}
	tmp := os.TempDir()
	td, err := safefs.OpenDirPath(tmp)
	if err != nil {
		return nil, err
	}
	defer td.Close()
	ents, _, err := td.Entries(0)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		if !e.Info.IsDir() || !strings.HasPrefix(e.Name, prefix+"-") || !ownedDir(e.Info) {
			continue
		}
		dir := filepath.Join(tmp, e.Name)
		err := removeUnlocked(td, e)
		switch {
		case errors.Is(err, errLive):
			continue
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, safefs.ErrChanged):
			// Gone or replaced meanwhile; or a folder being created (its lock not yet made) or a
			// stray: without the lock file it cannot be told from a live one, so it stays.
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("removing %s: %w", dir, err))
			continue
		}
		removed = append(removed, dir)
		log.Info("removed a private folder left by a massgen that ended without cleaning up", zap.String("path", dir))
	}
	return removed, errors.Join(errs...)
}

// errLive: the folder's lock is held, its owner lives.
var errLive = errors.New("held by a live process")

// removeUnlocked removes the private folder e of tmp if its lock can be taken, through
// descriptors: the folder is the one listed, and nothing below it is followed.
func removeUnlocked(tmp *safefs.Dir, e safefs.Entry) error {
	d, err := tmp.SubSame(e.Name, e.Info)
	if err != nil {
		return err
	}
	defer d.Close()
	f, _, err := d.OpenFile(lockName)
	if err != nil {
		return err
	}
	defer f.Close()
	if lockFile(f) != nil {
		return errLive
	}
	if runtime.GOOS == "windows" { // an open file cannot be removed there (as in Remove)
		_ = f.Close()
	}
	if err := d.RemoveContents(0); err != nil {
		return err
	}
	if now, err := tmp.Lstat(e.Name); err != nil || !now.Same(e.Info) {
		return safefs.ErrChanged
	}
	return tmp.Remove(e.Name)
}
