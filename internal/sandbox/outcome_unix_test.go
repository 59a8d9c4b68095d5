//go:build unix

package sandbox

import (
	"context"
	"errors"
	"os/exec"
	"testing"
)

// outcome is the one place every OS turns how a command ended into its Result.
func TestOutcome(t *testing.T) {
	exitErr := func(code string) error {
		err := exec.Command("/bin/sh", "-c", code).Run()
		if err == nil {
			t.Fatal("want an exit error")
		}
		return err
	}
	live := context.Background()
	expired, cancel := context.WithTimeout(live, 0)
	defer cancel()
	<-expired.Done()
	cancelled, cancel2 := context.WithCancel(live)
	cancel2()
	startErr := errors.New("file not found")
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		runErr   error
		code     int
		timedOut bool
		err      error
	}{
		{"success", live, nil, 0, false, nil},
		{"exit 3", live, exitErr("exit 3"), 3, false, nil},
		{"killed by a signal", live, exitErr("kill -9 $$"), 128 + 9, false, nil},
		{"pipes held open", live, exec.ErrWaitDelay, 0, false, nil},
		{"timeout", expired, exitErr("exit 1"), -1, true, nil},
		{"cancelled", cancelled, exitErr("exit 1"), -1, false, context.Canceled},
		{"not started", live, startErr, 0, false, startErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := outcome(tc.ctx, Result{Stdout: "out", Sandbox: ModeNone}, tc.runErr, "sh")
			if res.ExitCode != tc.code || res.TimedOut != tc.timedOut || res.Stdout != "out" || res.Sandbox != ModeNone {
				t.Errorf("outcome = %+v, want exit %d, timed out %v, output and sandbox kept", res, tc.code, tc.timedOut)
			}
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("outcome error = %v, want %v", err, tc.err)
			}
		})
	}
}
