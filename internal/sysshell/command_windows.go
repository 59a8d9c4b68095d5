//go:build windows

package sysshell

import (
	"context"
	"os"
	"os/exec"
	"syscall"
)

// Command is command run through the system shell (cmd.exe /S /C, see WindowsCmdLine), killed
// when ctx ends. The raw command line goes to CreateProcess as built (SysProcAttr.CmdLine).
func Command(ctx context.Context, command string) (*exec.Cmd, error) {
	comspec := WindowsComSpec(os.Getenv)
	line, err := WindowsCmdLine(comspec, command)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, comspec)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: line}
	return cmd, nil
}
