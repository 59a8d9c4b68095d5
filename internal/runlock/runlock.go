// Package runlock lets one massgen run at a time work in a project: a run holds an advisory lock
// on <.massgen>/run.lock (flock on Unix, LockFileEx on Windows) for as long as it runs. The
// kernel drops the lock when the holding process ends, however it ends, so a lock left by a
// killed run is taken over by the next one without any cleanup. The file also records who holds
// it (pid, start time, command) so a refused run can say which run is in the way.
package runlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/private"
)

// pollEvery is how often a waiting run tries the lock again.
const pollEvery = 250 * time.Millisecond

// Holder describes the run that holds the lock.
type Holder struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Command string    `json:"command,omitempty"`
}

// BusyError says the lock is held by another run.
type BusyError struct {
	Path   string
	Holder Holder // zero when the other run has not written its details yet
}

func (e *BusyError) Error() string {
	who := "another massgen run"
	if e.Holder.PID > 0 {
		who = fmt.Sprintf("another massgen run (pid %d, started %s)", e.Holder.PID, e.Holder.Started.Local().Format("2006-01-02 15:04:05"))
	}
	return fmt.Sprintf("%s is working in this project (it holds %s); one run at a time per project: wait for it to end, or pass --wait to start when it does", who, e.Path)
}

// Lock is a held run lock. Release it when the run ends (the kernel releases it anyway when the
// process exits).
type Lock struct {
	f    *os.File
	path string
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

// Acquire takes the lock of the project whose .massgen folder is massgenDir (created if
// missing), recording me as the holder. When another run holds it, Acquire returns a *BusyError
// at once, or with wait polls until the lock is free or ctx ends; onWait (may be nil) hears
// about the holder once, before the wait begins.
func Acquire(ctx context.Context, massgenDir string, me Holder, wait bool, onWait func(Holder)) (*Lock, error) {
	if err := private.MkdirAll(massgenDir); err != nil {
		return nil, fmt.Errorf("runlock: %w", err)
	}
	path := layout.At(massgenDir).RunLock()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, private.FileMode)
	if err != nil {
		return nil, fmt.Errorf("runlock: %w", err)
	}
	var ticker *time.Ticker
	for {
		err := tryLock(f)
		if err == nil {
			break
		}
		if !errors.Is(err, errLocked) {
			f.Close()
			return nil, fmt.Errorf("runlock: locking %s: %w", path, err)
		}
		if !wait {
			f.Close()
			return nil, &BusyError{Path: path, Holder: awaitHolder(path)}
		}
		if ticker == nil {
			if onWait != nil {
				onWait(awaitHolder(path))
			}
			ticker = time.NewTicker(pollEvery)
			defer ticker.Stop()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-ticker.C:
		}
	}
	if me.Started.IsZero() {
		me.Started = time.Now()
	}
	raw, err := json.Marshal(me)
	if err == nil {
		if err = f.Truncate(0); err == nil {
			_, err = f.WriteAt(append(raw, '\n'), 0)
		}
	}
	l := &Lock{f: f, path: path}
	if err != nil { // a run that cannot write this small record would not get far anyway
		_ = l.Release()
		return nil, fmt.Errorf("runlock: recording this run in %s: %w", path, err)
	}
	return l, nil
}

// Release clears the holder record and releases the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// awaitHolder reads the holder record, giving a run that has just taken the lock a moment to
// write it (it does so right after locking).
func awaitHolder(path string) Holder {
	for range 50 {
		if h := readHolder(path); h.PID > 0 {
			return h
		}
		time.Sleep(2 * time.Millisecond)
	}
	return readHolder(path)
}

// readHolder reads the holder record; a missing or half-written one gives a zero Holder.
func readHolder(path string) Holder {
	raw, err := os.ReadFile(path)
	var h Holder
	if err != nil || json.Unmarshal([]byte(strings.TrimSpace(string(raw))), &h) != nil {
		return Holder{}
	}
	return h
}

var errLocked = errors.New("locked by another process")
