//go:build !windows

package sysshell

import (
	"context"
	"os/exec"
)

// Command is command run through the system shell (/bin/sh -c), killed when ctx ends.
func Command(ctx context.Context, command string) (*exec.Cmd, error) {
	argv := UnixArgv(command)
	return exec.CommandContext(ctx, argv[0], argv[1:]...), nil
}
