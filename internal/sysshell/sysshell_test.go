package sysshell

import (
	"strings"
	"testing"
)

func TestWindowsComSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"comspec", map[string]string{"ComSpec": `C:\Windows\system32\cmd.exe`}, `C:\Windows\system32\cmd.exe`},
		{"comspec canonical", map[string]string{"ComSpec": `d:/tools//cmd.exe`}, `D:\tools\cmd.exe`},
		{"relative comspec ignored", map[string]string{"ComSpec": `cmd.exe`, "SystemRoot": `E:\Win`}, `E:\Win\System32\cmd.exe`},
		{"drive-relative comspec ignored", map[string]string{"ComSpec": `C:cmd.exe`}, `C:\Windows\System32\cmd.exe`},
		{"systemroot", map[string]string{"SystemRoot": `C:\WINDOWS`}, `C:\WINDOWS\System32\cmd.exe`},
		{"systemroot at a drive's root", map[string]string{"SystemRoot": `F:\`}, `F:\System32\cmd.exe`},
		{"relative systemroot ignored", map[string]string{"SystemRoot": `Windows`}, `C:\Windows\System32\cmd.exe`},
		{"nothing set", nil, `C:\Windows\System32\cmd.exe`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WindowsComSpec(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("WindowsComSpec = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWindowsCmdLine(t *testing.T) {
	const cs = `C:\Windows\System32\cmd.exe`
	for _, tc := range []struct {
		command, want, err string
	}{
		{`dir`, `"C:\Windows\System32\cmd.exe" /S /C "dir"`, ""},
		// Quotes inside stay as written: /S strips only the outer pair.
		{`"C:\Program Files\x.exe" "a b" & echo "done"`, `"C:\Windows\System32\cmd.exe" /S /C ""C:\Program Files\x.exe" "a b" & echo "done""`, ""},
		{`echo %PATH% ^& "|"`, `"C:\Windows\System32\cmd.exe" /S /C "echo %PATH% ^& "|""`, ""},
		{"echo a\necho b", "", "line break"},
		{"echo a\r", "", "line break"},
		{"echo \x00", "", "NUL"},
		{"   ", "", "empty"},
		{strings.Repeat("x", maxCmdLine), "", "at most 8191"},
		// Counted in UTF-16 units: 4100 characters outside the BMP are 8200 units.
		{strings.Repeat("😀", 4100), "", "at most 8191"},
		{strings.Repeat("é", 8000), `"` + cs + `" /S /C "` + strings.Repeat("é", 8000) + `"`, ""},
	} {
		got, err := WindowsCmdLine(cs, tc.command)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("WindowsCmdLine(%.40q) error = %v, want one containing %q", tc.command, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("WindowsCmdLine(%.40q): %v", tc.command, err)
		case got != tc.want:
			t.Errorf("WindowsCmdLine(%.40q) = %.80q, want %.80q", tc.command, got, tc.want)
		}
	}
}
