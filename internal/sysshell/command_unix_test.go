//go:build !windows

package sysshell

import (
	"context"
	"testing"
)

// The Unix form runs a real shell: pipes, quoting and the exit status are the shell's.
func TestCommandUnix(t *testing.T) {
	cmd, err := Command(context.Background(), `printf '%s|' "a b" $((1+2)); exit 3`)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Path != UnixShell || len(cmd.Args) != 3 || cmd.Args[1] != "-c" {
		t.Fatalf("argv = %q (path %q), want %s -c COMMAND", cmd.Args, cmd.Path, UnixShell)
	}
	out, err := cmd.Output()
	if string(out) != "a b|3|" {
		t.Errorf("output = %q, want %q", out, "a b|3|")
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("exit = %v (%v), want 3", cmd.ProcessState, err)
	}
}
