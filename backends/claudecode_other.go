//go:build !unix

package backends

import "os/exec"

// ccSetProcessGroup: no process groups here; the CLI alone is ended on cancellation.
func ccSetProcessGroup(cmd *exec.Cmd) {}

// ccKillProcessGroup kills the CLI (what it started may outlive it on this platform).
func ccKillProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
