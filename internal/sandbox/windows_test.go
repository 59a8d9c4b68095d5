package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// On Windows only `none` runs; every other mode is refused with a message that names WSL2 as
// the way to sandboxed commands and `command_sandbox: none` as the way to unsandboxed ones.
func TestWindowsEffective(t *testing.T) {
	for _, tc := range []struct {
		mode, want Mode
		names      string
	}{
		{ModeNone, ModeNone, ""},
		{"", "", "auto (the default)"},
		{ModeAuto, "", "command_sandbox: auto"},
		{ModeBubblewrap, "", "command_sandbox: bubblewrap"},
		{ModeNamespaces, "", "command_sandbox: namespaces"},
		{ModeLandlock, "", "command_sandbox: landlock"},
	} {
		got, err := choose(tc.mode, host{goos: "windows"})
		if got != tc.want {
			t.Errorf("choose(%q, windows) = %q, want %q", tc.mode, got, tc.want)
		}
		if tc.want != "" {
			if err != nil {
				t.Errorf("choose(%q, windows): %v", tc.mode, err)
			}
			continue
		}
		if err == nil {
			t.Fatalf("choose(%q, windows): no error", tc.mode)
		}
		for _, s := range []string{tc.names, "WSL2", "`command_sandbox: none`", "refused", "unsandboxed"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("choose(%q, windows) error %q does not say %q", tc.mode, err, s)
			}
		}
	}
	if _, err := choose("docker", host{goos: "windows"}); err == nil || !strings.Contains(err.Error(), `unknown sandbox "docker"`) {
		t.Errorf(`choose("docker", windows) error = %v, want unknown sandbox`, err)
	}
	if err := windowsNamespacesError(); err == nil || !strings.Contains(err.Error(), "WSL2") {
		t.Errorf("windowsNamespacesError() = %v, want one naming WSL2", err)
	}
}

func TestWindowsEnv(t *testing.T) {
	set := map[string]string{
		"Path": `C:\Windows\system32;C:\Python`, "SystemRoot": `C:\Windows`, "PATHEXT": ".COM;.EXE;.BAT",
		"OPENAI_API_KEY": "sk-secret", "APPDATA": `C:\Users\u\AppData\Roaming`, "USERPROFILE": `C:\Users\u`,
		"TEMP": `C:\Users\u\AppData\Local\Temp`,
	}
	env := windowsEnv(func(k string) (string, bool) { v, ok := set[k]; return v, ok }, `C:\T\massgen-cmd-1`)
	want := []string{"NoDefaultCurrentDirectoryInExePath=1",
		`Path=C:\Windows\system32;C:\Python`, `PATHEXT=.COM;.EXE;.BAT`, `SystemRoot=C:\Windows`,
		`TEMP=C:\T\massgen-cmd-1`, `TMP=C:\T\massgen-cmd-1`, `TMPDIR=C:\T\massgen-cmd-1`,
		`HOME=C:\T\massgen-cmd-1`, `USERPROFILE=C:\T\massgen-cmd-1`,
	}
	if !slices.Equal(env, want) {
		t.Errorf("windowsEnv =\n%q\nwant\n%q", env, want)
	}
}

func TestWindowsCmdDir(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"", "", ""},
		{`C:\work\proj`, `C:\work\proj`, ""},
		{`\\?\C:\work\proj`, `C:\work\proj`, ""}, // GetFinalPathNameByHandle's form
		{`d:/a/./b/../c`, `D:\a\c`, ""},
		{`\\?\UNC\srv\share\proj`, "", "network share"},
		{`\\srv\share\proj`, "", "network share"},
		{`C:\work\CON`, "", "reserved device name"},
		{`work\proj`, "", "not absolute"},
	} {
		got, err := windowsCmdDir(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("windowsCmdDir(%q) error = %v, want one containing %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("windowsCmdDir(%q): %v", tc.in, err)
		case got != tc.want:
			t.Errorf("windowsCmdDir(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
