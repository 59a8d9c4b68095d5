//go:build unix

package sandbox

import (
	"os/exec"
	"syscall"
)

// exitStatus is the command's exit code; a command killed by a signal gets 128+signal, as the
// shell reports it.
func exitStatus(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}
