//go:build !unix

package backends

import "os/exec"

// cliSetProcessGroup: no process groups here; the CLI alone is ended on cancellation.
func cliSetProcessGroup(cmd *exec.Cmd) {}

// cliKillProcessGroup kills the CLI (what it started may outlive it on this platform).
func cliKillProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
