//go:build linux

package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// init runs the helper before the rest of the binary starts (see the package comment).
func init() {
	RunHelperIfAsked()
	RunNetRelayIfAsked()
}

// RunHelperIfAsked, when the process was re-executed as the helper (argv[1] is HelperArg, the
// Spec on fd 3, the command from argv[2]), builds the command's view of the file system,
// confines itself, execs the command and never returns: on failure it reports on the spec's
// status pipe and exits 126. Otherwise it returns at once.
func RunHelperIfAsked() {
	if len(os.Args) < 3 || os.Args[1] != HelperArg {
		return
	}
	spec, err := readSpec()
	if err == nil {
		err = runHelper(spec, os.Args[2:])
	}
	// Only reached when the set-up or exec failed: never run the command unconfined. The
	// message names no path (the caller logs it, the command's result does not show it).
	msg := fmt.Sprintf("massgen sandbox helper: %v\n", err)
	if spec.Status > 0 {
		unix.Write(spec.Status, []byte(msg))
	} else {
		fmt.Fprint(os.Stderr, msg)
	}
	os.Exit(126)
}

// specFD is where the helper reads its spec (the first descriptor passed).
const specFD = 3

func readSpec() (Spec, error) {
	spec := Spec{Status: -1}
	f := os.NewFile(specFD, "spec")
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	f.Close()
	if err != nil {
		return spec, fmt.Errorf("reading the sandbox spec: %w", err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return spec, fmt.Errorf("bad sandbox spec: %w", err)
	}
	return spec, nil
}

func runHelper(spec Spec, argv []string) error {
	// Everything below is per thread (or acts on the mount namespace, shared by the threads)
	// and inherited by exec: do it all on this thread and exec from it.
	runtime.LockOSThread()
	// Started in a network namespace of its own (when spec.Net says so): its loopback, and
	// the proxy's listener handed to massgen, while the helper still has its capabilities.
	if ln, err := SetUpNetwork(spec.Net); err != nil {
		return err
	} else if ln >= 0 {
		err := SendFD(spec.Net.Sock, ln)
		unix.Close(ln)
		if err != nil {
			return fmt.Errorf("handing the proxy's listener to massgen: %w", err)
		}
	}
	if _, err := ConfineInView(spec, -1); err != nil {
		return err
	}
	// No handle of ours reaches the command (the status pipe closes on exec: the success
	// signal).
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		for fd := 3; fd < 65536; fd++ {
			unix.CloseOnExec(fd)
		}
	}
	// Everything execve needs is made before the limits: under a memory limit lower than what
	// this Go process already uses (a race-detector build, say), any allocation after it fails.
	argv0p, err := unix.BytePtrFromString(argv[0])
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return err
	}
	limits := make([]unix.Rlimit, len(spec.Rlimits))
	for i, r := range spec.Rlimits {
		limits[i] = unix.Rlimit{Cur: r.Cur, Max: r.Max}
	}
	for i, r := range spec.Rlimits {
		if err := unix.Setrlimit(r.Res, &limits[i]); err != nil {
			return fmt.Errorf("setrlimit %d: %w", r.Res, err)
		}
	}
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(argv0p)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	return errno
}

// ConfineInView builds the view of spec in the calling thread's mount namespace (see
// buildView; pidns is the /proc's PID namespace, -1: the caller's), then confines the thread:
// the view's Landlock ruleset, no capability, the seccomp filter, and the working directory
// (the view's root when the spec names none). What the thread execs or forks next inherits
// all of it. The caller closes the view once the command started.
func ConfineInView(spec Spec, pidns int) (*View, error) {
	v, err := buildView(spec, pidns)
	if err != nil {
		return nil, err
	}
	if err := confineView(v, spec); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

func confineView(v *View, spec Spec) error {
	ruleset, err := v.landlock(spec)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(ruleset, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("dropping capabilities: %w", err)
	}
	// Own IPC namespace: SysV IPC stays inside; the rest as under bubblewrap.
	if err := installFilter(FilterOpts{Net: spec.Net.Filter}); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	dir := v.dir
	if dir < 0 {
		dir = v.view[0]
	}
	if err := unix.Fchdir(dir); err != nil {
		return fmt.Errorf("entering the working directory: %w", err)
	}
	return nil
}

// dropCapabilities empties the bounding, ambient, effective, permitted and inheritable sets of
// the calling thread. Run as root, a command would otherwise keep capabilities that Landlock does
// not govern (loading kernel modules, ptrace-reading other processes' memory and environment).
// With no_new_privs exec cannot give them back.
func dropCapabilities() error {
	if err := dropInheritable(); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// dropInheritable empties the bounding, ambient and inheritable sets of the calling thread,
// keeping its effective and permitted sets (to create the command's PID namespace). What
// exec gives a program is drawn from those three sets only (for root too: its implicit file
// capabilities are masked by the bounding set), so the command starts with none.
func dropInheritable() error {
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability this kernel knows
		}
		if errors.Is(err, unix.EPERM) {
			break // no CAP_SETPCAP: an unprivileged process, nothing to drop there
		}
		if err != nil {
			return err
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	return unix.Capset(&hdr, &data[0])
}

// LandlockABI returns the kernel's Landlock ABI version (0: unavailable).
func LandlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}
