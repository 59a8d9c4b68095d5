//go:build !unix

package sandbox

import "os/exec"

// exitStatus is the command's exit code (Windows: the process's 32-bit exit code).
func exitStatus(ee *exec.ExitError) int { return ee.ExitCode() }
