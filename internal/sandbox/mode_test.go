package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestChoose: the sandbox each configured mode gets, on every system massgen builds for, from
// one table (choose), for machines with and without each sandbox.
func TestChoose(t *testing.T) {
	noNS := errors.New("user namespaces are disabled")
	noLL := errors.New("the kernel's Landlock ABI is 0 (need >= 3)")
	linux := func(bwrap bool, ns error, helper bool, ll error) host {
		return host{goos: "linux", bubblewrap: func() bool { return bwrap }, namespaces: func() error { return ns },
			helper: func() bool { return helper }, landlock: func() error { return ll }}
	}
	mac := func(exec error) host { return host{goos: "darwin", sandboxExec: func() error { return exec }} }
	full, nsOnly, llOnly, nothing := linux(true, nil, true, nil), linux(false, nil, true, nil), linux(false, noNS, true, nil), linux(false, noNS, true, noLL)
	tests := []struct {
		name    string
		h       host
		mode    Mode
		want    Mode
		wantErr string // part of the error ("" none)
	}{
		{"linux auto, all", full, ModeAuto, ModeBubblewrap, ""},
		{"linux empty is auto", full, "", ModeBubblewrap, ""},
		{"linux auto, no bwrap", nsOnly, ModeAuto, ModeNamespaces, ""},
		{"linux auto, no helper", linux(false, nil, false, nil), ModeAuto, ModeLandlock, ""},
		{"linux auto, landlock only", llOnly, "", ModeLandlock, ""},
		{"linux auto, nothing", nothing, ModeAuto, "", "no command sandbox available"},
		{"linux bubblewrap", full, ModeBubblewrap, ModeBubblewrap, ""},
		{"linux bubblewrap missing", nsOnly, ModeBubblewrap, "", "bwrap is not installed"},
		{"linux namespaces", nsOnly, ModeNamespaces, ModeNamespaces, ""},
		{"linux namespaces refused", llOnly, ModeNamespaces, "", "command_sandbox: namespaces: user namespaces are disabled"},
		{"linux landlock", full, ModeLandlock, ModeLandlock, ""},
		{"linux landlock missing", nothing, ModeLandlock, "", "command_sandbox: landlock: the kernel's Landlock ABI is 0"},
		{"linux none", nothing, ModeNone, ModeNone, ""},
		{"linux unknown", full, "docker", "", `command_sandbox: unknown sandbox "docker" (known: auto, bubblewrap, namespaces, landlock, none)`},
		{"linux seatbelt is no word", full, ModeSeatbelt, "", `unknown sandbox "seatbelt"`},
		{"mac auto", mac(nil), ModeAuto, ModeSeatbelt, ""},
		{"mac empty is auto", mac(nil), "", ModeSeatbelt, ""},
		{"mac no sandbox-exec", mac(errors.New("/usr/bin/sandbox-exec: not found")), ModeAuto, "", "no command sandbox available: /usr/bin/sandbox-exec: not found"},
		{"mac none", mac(nil), ModeNone, ModeNone, ""},
		{"mac landlock", mac(nil), ModeLandlock, "", "landlock is Linux only"},
		{"mac namespaces", mac(nil), ModeNamespaces, "", "namespaces is Linux only"},
		{"mac unknown", mac(nil), "docker", "", `unknown sandbox "docker"`},
		{"windows none", host{goos: "windows"}, ModeNone, ModeNone, ""},
		{"windows auto", host{goos: "windows"}, "", "", "auto (the default)"},
		{"freebsd none", host{goos: "freebsd"}, ModeNone, "", "no command sandbox on freebsd"},
		{"freebsd auto", host{goos: "freebsd"}, ModeAuto, "", "no command sandbox on freebsd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := choose(tt.mode, tt.h)
			if got != tt.want {
				t.Errorf("choose(%q) = %q, want %q", tt.mode, got, tt.want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("choose(%q): %v", tt.mode, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("choose(%q) error = %v, want one saying %q", tt.mode, err, tt.wantErr)
			}
		})
	}
}

// TestFallbackChoice: only Linux's auto, fallen back to Landlock alone, is said; its message
// says what is lost and why.
func TestFallbackChoice(t *testing.T) {
	noNS := errors.New("user namespaces are disabled")
	ll := host{goos: "linux", bubblewrap: func() bool { return false }, namespaces: func() error { return noNS },
		helper: func() bool { return true }, landlock: func() error { return nil }}
	if f := fallback(ModeAuto, ll); !strings.Contains(f, "Landlock alone") || !strings.Contains(f, "user namespaces are disabled") {
		t.Errorf("fallback(auto) on Landlock alone = %q", f)
	}
	if f := fallback("", ll); f == "" {
		t.Error(`fallback("") on Landlock alone says nothing`)
	}
	if f := fallback(ModeLandlock, ll); f != "" {
		t.Errorf("fallback(landlock), asked for, = %q", f)
	}
	bw := ll
	bw.bubblewrap = func() bool { return true }
	if f := fallback(ModeAuto, bw); f != "" {
		t.Errorf("fallback(auto) with bubblewrap = %q", f)
	}
	if f := fallback(ModeAuto, host{goos: "darwin", sandboxExec: func() error { return nil }}); f != "" {
		t.Errorf("fallback(auto) on macOS = %q", f)
	}
}
