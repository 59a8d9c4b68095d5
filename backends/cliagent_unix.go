//go:build unix

package backends

import (
	"os/exec"
	"syscall"
)

// cliSetProcessGroup starts a CLI in a process group of its own, so cancelling ends it and
// everything it started.
func cliSetProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// cliKillProcessGroup kills the CLI's process group.
func cliKillProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
