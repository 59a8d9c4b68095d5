package sandbox

import (
	"fmt"

	"github.com/massgen-go/massgen/internal/winpath"
)

// The Windows side of the sandbox, as pure code tested on every system (sandbox_windows.go
// runs it). Windows has no command sandbox of massgen's: commands run only when the config
// says `command_sandbox: none`; WSL2 is the way to run them sandboxed (massgen inside WSL2 is a
// Linux program with the Linux sandboxes).

// windowsRefusal says why a command is refused on Windows and the two ways out.
func windowsRefusal(mode Mode) error {
	if mode == "" {
		mode = ModeAuto + " (the default)"
	}
	return fmt.Errorf("execute_command: massgen has no command sandbox on Windows (command_sandbox: %s), so commands are refused; "+
		"to run them sandboxed, run massgen inside WSL2 (Windows Subsystem for Linux), where the Linux sandboxes apply; "+
		"or set `command_sandbox: none` in the config to run them unsandboxed through cmd.exe "+
		"(not recommended: only the permission rules protect your files)", mode)
}

// windowsNamespacesError is NamespacesError on Windows.
func windowsNamespacesError() error {
	return fmt.Errorf("the namespaces sandbox is Linux only; on Windows, run massgen inside WSL2 for sandboxed commands")
}

// windowsPassedEnv are the variables a command inherits on Windows: what programs need to start
// and find each other (Path, PATHEXT, SystemRoot, ...), no secrets. The user's profile folders
// (APPDATA, LOCALAPPDATA) stay out, as HOME does on Linux.
var windowsPassedEnv = []string{"Path", "PATHEXT", "SystemRoot", "SystemDrive", "windir", "ComSpec",
	"OS", "PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER", "NUMBER_OF_PROCESSORS",
	"ProgramFiles", "ProgramFiles(x86)", "ProgramW6432", "CommonProgramFiles", "CommonProgramFiles(x86)",
	"ProgramData", "USERNAME", "LANG", "LC_ALL", "TERM", "TZ"}

// windowsEnv is a command's environment on Windows (baseEnv's counterpart): the passed
// variables that are set (lookup is os.LookupEnv), the private temporary directory tmp as
// TEMP, TMP, TMPDIR, HOME and USERPROFILE, and NoDefaultCurrentDirectoryInExePath, which stops
// cmd.exe from looking for programs in the working directory first (where the agent may have
// written an npm.cmd that an allowed `npm test` would run).
func windowsEnv(lookup func(string) (string, bool), tmp string) []string {
	env := []string{"NoDefaultCurrentDirectoryInExePath=1"}
	for _, k := range windowsPassedEnv {
		if v, ok := lookup(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range []string{"TEMP", "TMP", "TMPDIR", "HOME", "USERPROFILE"} {
		env = append(env, k+"="+tmp)
	}
	return env
}

// windowsCmdDir is the directory cmd.exe starts in, from a path Windows gave or the caller
// named: the \\?\ prefix (GetFinalPathNameByHandle's form) is dropped, as cmd.exe does not
// take it. A network share (UNC) is refused: cmd.exe would say "UNC paths are not supported"
// and run the command in the Windows directory instead.
func windowsCmdDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	p, err := winpath.Parse(dir)
	if err != nil {
		return "", fmt.Errorf("sandbox: working directory: %w", err)
	}
	if len(p.Volume) != 2 {
		return "", fmt.Errorf("sandbox: working directory %s is on a network share: cmd.exe cannot start there (it would run the command in the Windows directory); map the share to a drive letter", p)
	}
	return p.String(), nil
}
