package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/massgen-go/massgen/internal/runlock"
)

// Confirm asks question on stderr and reads a yes/no line from stdin, for commands that remove
// what cannot be got back (`trash empty`, `sessions prune`). yes (--yes) confirms without asking.
// Without a terminal to ask on, it refuses (exit 2) rather than guess: --yes says it on purpose.
func Confirm(ios *IOStreams, question string, yes bool) error {
	if yes {
		return nil
	}
	if !ios.StdinTTY || !ios.StderrTTY {
		return FlagErrorf("%s: not confirmed, nothing removed (no terminal to ask on; pass --yes to confirm)", question)
	}
	fmt.Fprintf(ios.ErrOut, "%s [y/N] ", question)
	ans, err := readLine(ios.In)
	if err != nil {
		return WithCode(ExitFailure, fmt.Errorf("reading the answer: %w", err))
	}
	if a := strings.ToLower(strings.TrimSpace(ans)); a != "y" && a != "yes" {
		return WithCode(ExitFailure, errors.New("not confirmed: nothing removed"))
	}
	return nil
}

// readLine reads one line byte by byte, so nothing after it is taken from stdin.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 256 {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				break
			}
			b.WriteByte(buf[0])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// LockProject takes the run lock of the project whose .massgen folder is massgenDir for a
// command that removes state a run may be using (`trash empty`, `sessions prune`): while a run
// holds it, the command refuses with exit 5 instead of pulling files from under the run. The
// caller releases the lock when done.
func LockProject(ctx context.Context, massgenDir, command string) (*runlock.Lock, error) {
	lock, err := runlock.Acquire(ctx, massgenDir, runlock.Holder{PID: os.Getpid(), Started: time.Now(), Command: command}, false, nil)
	var busy *runlock.BusyError
	switch {
	case errors.As(err, &busy):
		who := "another massgen run"
		if busy.Holder.PID > 0 {
			who = fmt.Sprintf("a massgen run (pid %d, started %s)", busy.Holder.PID, busy.Holder.Started.Local().Format("2006-01-02 15:04:05"))
		}
		return nil, WithCode(ExitBusy, fmt.Errorf("%s: %s is working in this project (it holds %s); nothing removed, try again when it ends", command, who, busy.Path))
	case err != nil:
		return nil, WithCode(ExitFailure, err)
	}
	return lock, nil
}
