package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/massgen-go/massgen/internal/runlock"
)

// LockProject takes the run lock of the project whose .massgen folder is massgenDir
// (internal/runlock) for command ("massgen", "massgen undo", ...): everything that writes the
// project's state or the user's files from its records, or removes state a run may be using
// (`trash empty`, `sessions prune`), holds it. The caller releases it. When another massgen holds it,
// LockProject refuses at once (exit 5, naming it) or, with wait, says so on errOut and waits for
// it to end (a cancel while waiting exits 130).
func LockProject(ctx context.Context, errOut io.Writer, massgenDir, command string, wait bool, now time.Time) (*runlock.Lock, error) {
	me := runlock.Holder{PID: os.Getpid(), Started: now, Command: command}
	lock, err := runlock.Acquire(ctx, massgenDir, me, wait, func(h runlock.Holder) {
		if h.PID > 0 {
			fmt.Fprintf(errOut, "Waiting for the massgen run with pid %d (started %s) to end...\n", h.PID, h.Started.Local().Format("15:04:05"))
		} else {
			fmt.Fprintln(errOut, "Waiting for another massgen run in this project to end...")
		}
	})
	var busy *runlock.BusyError
	switch {
	case errors.As(err, &busy):
		return nil, WithCode(ExitBusy, err)
	case err != nil && errors.Is(err, context.Canceled):
		return nil, WithCode(ExitCanceled, err)
	case err != nil:
		return nil, WithCode(ExitFailure, err)
	}
	return lock, nil
}

// LockProjectNow is LockProject for a command that never waits (`trash empty`, `sessions
// prune`: they remove state a run may be using): while a run holds the project it refuses with
// exit 5, saying nothing was done.
func LockProjectNow(ctx context.Context, massgenDir, command string) (*runlock.Lock, error) {
	lock, err := LockProject(ctx, io.Discard, massgenDir, command, false, time.Now())
	var busy *runlock.BusyError
	if errors.As(err, &busy) {
		who := "another massgen run"
		if busy.Holder.PID > 0 {
			who = fmt.Sprintf("a massgen run (pid %d, started %s)", busy.Holder.PID, busy.Holder.Started.Local().Format("2006-01-02 15:04:05"))
		}
		return nil, WithCode(ExitBusy, fmt.Errorf("%s: %s is working in this project (it holds %s); nothing removed, try again when it ends", command, who, busy.Path))
	}
	return lock, err
}
