//go:build unix

package backends

import (
	"os/exec"
	"syscall"
)

// ccSetProcessGroup starts the CLI in a process group of its own, so cancelling ends it and
// everything it started.
func ccSetProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// ccKillProcessGroup kills the CLI's process group.
func ccKillProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
