// Package sysshell is the system shell that agent commands (command_sandbox: none) and hooks
// run through: `/bin/sh -c COMMAND` on Unix, `cmd.exe /S /C "COMMAND"` on Windows (%ComSpec%
// when it names an absolute path). The Windows command line is built here as pure code, so it
// is tested on every system.
package sysshell

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/internal/winpath"
)

// UnixShell is the system shell on Unix.
const UnixShell = "/bin/sh"

// UnixArgv is the argument vector that runs command through the Unix system shell.
func UnixArgv(command string) []string { return []string{UnixShell, "-c", command} }

// maxCmdLine is the longest command line cmd.exe accepts (8191 characters, counted in UTF-16
// code units); a longer one would be cut or refused by cmd.exe itself.
const maxCmdLine = 8191

// WindowsComSpec is the Windows command interpreter: %ComSpec% when it is an absolute path,
// else %SystemRoot%\System32\cmd.exe, else C:\Windows\System32\cmd.exe. A relative ComSpec
// would be looked up in the working directory, which the agent may write: never used.
func WindowsComSpec(getenv func(string) string) string {
	if c := getenv("ComSpec"); c != "" {
		if p, err := winpath.Parse(c); err == nil {
			return p.String()
		}
	}
	root := `C:\Windows`
	if r := getenv("SystemRoot"); r != "" {
		if p, err := winpath.Parse(r); err == nil {
			root = p.String()
		}
	}
	return strings.TrimSuffix(root, `\`) + `\System32\cmd.exe`
}

// WindowsCmdLine is the command line (CreateProcess's lpCommandLine) that runs command through
// comspec: "COMSPEC" /S /C "COMMAND". With /S, cmd.exe removes the first and the last quote and
// runs what lies between exactly as written, so the command reaches cmd.exe as the agent or the
// config wrote it (Go's own argument quoting, made for the C runtime's parser, would change it).
// Refused: NUL, carriage return and line feed (cmd.exe stops reading the command at a line
// break, so the rest would be dropped in silence) and lines longer than cmd.exe takes.
func WindowsCmdLine(comspec, command string) (string, error) {
	if strings.TrimSpace(command) == "" {
		return "", fmt.Errorf("empty command")
	}
	if i := strings.IndexAny(command, "\x00\r\n"); i >= 0 {
		return "", fmt.Errorf("the command contains a line break or NUL at byte %d: cmd.exe runs one line only (join commands with &, && or ||)", i)
	}
	line := `"` + comspec + `" /S /C "` + command + `"`
	if n := utf16Len(line); n > maxCmdLine {
		return "", fmt.Errorf("the command line is %d characters long; cmd.exe takes at most %d", n, maxCmdLine)
	}
	return line, nil
}

// utf16Len counts s in UTF-16 code units, the unit of Windows' length limits.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n++
		}
		n++
	}
	return n
}
