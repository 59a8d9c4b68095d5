package runlock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// FileLock is an exclusive lock on a lock file, for the short read-change-write of a state file
// several massgen processes share (the trust store, a sessions folder). It excludes other
// processes and other holders in this one alike (each holder opens the file anew).
type FileLock struct {
	f *os.File
}

// Exclusive takes the lock on the file at path (created owner-only if missing; its parent must
// exist), waiting for the holder to release it until ctx ends. Update the state file the lock
// guards by writing a temp file and renaming it while holding the lock, so readers that do not
// lock still see the old content or the new, whole.
func Exclusive(ctx context.Context, path string) (*FileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := tryLock(f)
		if err == nil {
			return &FileLock{f: f}, nil
		}
		if !errors.Is(err, errLocked) {
			f.Close()
			return nil, fmt.Errorf("lock: locking %s: %w", path, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("lock: waiting for %s: %w", filepath.Base(path), ctx.Err())
		case <-t.C:
		}
	}
}

// Unlock releases the lock.
func (l *FileLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
