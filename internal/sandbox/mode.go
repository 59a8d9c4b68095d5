package sandbox

import (
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/vocab"
)

// Mode is the config's command_sandbox (its words are declared once, in vocab.SandboxMode),
// and the sandbox a command actually ran under (Effective, Result.Sandbox).
type Mode = vocab.SandboxMode

// The modes.
const (
	ModeAuto       = vocab.SandboxAuto
	ModeBubblewrap = vocab.SandboxBubblewrap
	ModeNamespaces = vocab.SandboxNamespaces
	ModeLandlock   = vocab.SandboxLandlock
	ModeNone       = vocab.SandboxNone
	// ModeSeatbelt is what auto is on macOS (not a word of the config).
	ModeSeatbelt = vocab.SandboxSeatbelt
)

// host is what choosing a sandbox needs to know of this machine, filled in by each system
// (thisHost). The probes are functions, so that each runs only when its answer is needed.
type host struct {
	goos string
	// Linux.
	bubblewrap func() bool  // bwrap is installed and can make a sandbox here
	namespaces func() error // why the namespaces mode cannot run (nil: it can)
	helper     func() bool  // the program calls MaybeRunHelper, so auto may pick namespaces
	landlock   func() error // why Landlock alone cannot run (nil: it can)
	// macOS: why sandbox-exec cannot run (nil: it can).
	sandboxExec func() error
}

// Effective returns the sandbox actually used for a configured mode ("" is auto), or an
// error saying why commands cannot run.
func Effective(m Mode) (Mode, error) { return choose(m, thisHost()) }

// choose is Effective on the machine h, for every system in one place:
//   - Linux: auto prefers bubblewrap (it expresses read-only and hidden subtrees of a writable
//     root exactly, and gives the command its own PID namespace, /proc and /dev), then the
//     namespaces mode (the same, built by massgen: it needs user namespaces unless massgen runs
//     as root, and a program that calls MaybeRunHelper), then Landlock alone; the three can
//     also be named, and are refused when the machine lacks them.
//   - macOS: auto is Seatbelt (sandbox-exec ships with every macOS); the Linux modes are refused.
//   - Windows: massgen has no sandbox there; every mode but none is refused (windowsRefusal).
//   - Other systems: commands are refused, none included.
//
// none runs commands unconfined (an explicit opt-out) wherever commands run at all.
func choose(m Mode, h host) (Mode, error) {
	if err := m.Check(); err != nil {
		return "", fmt.Errorf("command_sandbox: %w", err)
	}
	asked := m
	if m == "" {
		m = ModeAuto
	}
	switch h.goos {
	case "linux":
		return chooseLinux(m, h)
	case "darwin":
		switch m {
		case ModeAuto:
			if err := h.sandboxExec(); err != nil {
				return "", fmt.Errorf("no command sandbox available: %w; set `command_sandbox: none` in the config to run commands unconfined (not recommended)", err)
			}
			return ModeSeatbelt, nil
		case ModeNone:
			return ModeNone, nil
		}
		return "", fmt.Errorf("command_sandbox: %s is Linux only; on macOS commands run under Seatbelt: use auto (Seatbelt) or none", m)
	case "windows":
		if m == ModeNone {
			return ModeNone, nil
		}
		return "", windowsRefusal(asked)
	}
	return "", unsupported(h.goos)
}

func chooseLinux(m Mode, h host) (Mode, error) {
	switch m {
	case ModeAuto:
		if h.bubblewrap() {
			return ModeBubblewrap, nil
		}
		if h.namespaces() == nil && h.helper() {
			return ModeNamespaces, nil
		}
		if h.landlock() == nil {
			return ModeLandlock, nil
		}
		return "", errors.New("no command sandbox available: bubblewrap (bwrap) is not installed or cannot run, and the kernel has no Landlock (ABI >= 3); install bubblewrap, or set `command_sandbox: none` in the config to run commands unconfined (not recommended)")
	case ModeBubblewrap:
		if !h.bubblewrap() {
			return "", errors.New("command_sandbox: bubblewrap: bwrap is not installed or cannot create a sandbox here (apt-get install bubblewrap)")
		}
	case ModeNamespaces:
		if err := h.namespaces(); err != nil {
			return "", fmt.Errorf("command_sandbox: namespaces: %w", err)
		}
	case ModeLandlock:
		if err := h.landlock(); err != nil {
			return "", fmt.Errorf("command_sandbox: landlock: %w", err)
		}
	}
	return m, nil
}

// unsupported refuses commands on a system massgen has no command runner for.
func unsupported(goos string) error {
	return fmt.Errorf("execute_command: no command sandbox on %s yet: commands are refused", goos)
}

// Fallback says, for a configured mode, what auto fell back to and what that costs (""
// when nothing is lost): said once when a run starts.
func Fallback(m Mode) string { return fallback(m, thisHost()) }

// fallback is Fallback on the machine h: only Linux's auto falls back to something less than
// bubblewrap or namespaces (Landlock alone).
func fallback(m Mode, h host) string {
	if m != "" && m != ModeAuto {
		return ""
	}
	if eff, err := choose(m, h); err != nil || eff != ModeLandlock {
		return ""
	}
	why := "bubblewrap is not installed"
	if err := h.namespaces(); err != nil {
		why += " and " + err.Error()
	}
	return "command sandbox: " + why + ", so commands run under Landlock alone: they cannot create or remove entries directly in a directory that holds a protected, excluded or private path (such as the top of a project with a .git), cannot list a directory above a private path, and can stat, chmod and touch files they cannot read; install bubblewrap (apt-get install bubblewrap) or allow user namespaces to lift these limits"
}

// ReportFallback logs Fallback(m), once per process.
func ReportFallback(m Mode, log *zap.Logger) {
	fallbackOnce.Do(func() {
		if f := Fallback(m); f != "" && log != nil {
			log.Warn(f)
		}
	})
}

var fallbackOnce sync.Once
