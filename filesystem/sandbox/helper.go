package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// MaybeRunHelper must be called first thing in main (and in TestMain of packages whose tests run
// commands): when the process was re-executed as the sandbox helper, it confines itself with
// Landlock, execs the command and never returns. Otherwise it returns at once.
func MaybeRunHelper() {
	helperReady.Store(true)
	if len(os.Args) < 4 || os.Args[1] != helperArg {
		return
	}
	err := runHelper(os.Args[2], os.Args[3:])
	// Only reached when confinement or exec failed: never run the command unconfined.
	fmt.Fprintf(os.Stderr, "massgen sandbox: %v\n", err)
	os.Exit(126)
}

// helperReady records that this process's main (or TestMain) called MaybeRunHelper, so
// re-executing os.Executable() as the helper is safe. A process-wide fact set once at start:
// without it, a binary that never calls MaybeRunHelper (say, another package's test binary)
// would be re-executed with arguments it does not understand (a test binary would run all its
// tests again, recursively).
var helperReady atomic.Bool

func runHelper(spec string, argv []string) error {
	var p Policy
	if err := json.Unmarshal([]byte(spec), &p); err != nil {
		return fmt.Errorf("bad policy: %w", err)
	}
	if abi := landlockABI(); abi < minLandlockABI {
		return fmt.Errorf("landlock ABI %d < %d", abi, minLandlockABI)
	}
	rules, err := landlockRules(p)
	if err != nil {
		return err
	}
	// V9 handles every filesystem right we know (truncate, device ioctls, connecting to UNIX
	// sockets); BestEffort only drops what this kernel cannot restrict (ABI >= 3 is checked
	// above; UNIX sockets are also refused by the seccomp filter for older kernels).
	if err := landlock.V9.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	// Signals and abstract sockets stay inside the sandbox (ABI 6+), so a command cannot kill
	// or talk to massgen itself.
	if err := landlock.V6.BestEffort().RestrictScoped(); err != nil {
		return fmt.Errorf("landlock scopes: %w", err)
	}
	// Capabilities and seccomp filters are per thread: set them on this thread and exec from it.
	runtime.LockOSThread()
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("dropping capabilities: %w", err)
	}
	if err := denyUnixSockets(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return syscall.Exec(argv[0], argv, os.Environ())
}

// dropCapabilities empties the bounding, ambient, effective, permitted and inheritable sets of
// the calling thread. Run as root, a command would otherwise keep capabilities that Landlock does
// not govern (loading kernel modules, ptrace-reading other processes' memory and environment).
// With no_new_privs (set by Landlock) exec cannot give them back.
func dropCapabilities() error {
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
	return unix.Capset(&hdr, &data[0])
}

func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// landlockRules turns a Policy into Landlock rules. Symbolic links are never given rules of
// their own (a rule on a link would apply to its target, wherever that is).
func landlockRules(p Policy) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	// /dev is not granted as a whole: it holds the user's terminals (/dev/pts/N, /dev/tty: a
	// command could read what the user types), the kernel log and raw disks (readable by
	// root). Only the harmless device files are.
	var sys []string
	var grants []grant
	for _, d := range SystemReadDirs {
		hidden := false
		for _, h := range p.Hide {
			hidden = hidden || under(filepath.Clean(h), d)
		}
		switch {
		case d == "/dev":
		case hidden:
			// /etc with root-only secrets hidden (see secretSystemFiles): carved.
			grants = append(grants, carve(d, false, nil, p.Hide)...)
		default:
			sys = append(sys, d)
		}
	}
	rules = append(rules, landlock.RODirs(sys...).IgnoreIfMissing())
	rules = append(rules, landlock.ROFiles(readableDevices...).IgnoreIfMissing())
	rules = append(rules, landlock.RWFiles(writableDevices...).IgnoreIfMissing())
	for _, r := range p.Read {
		grants = append(grants, carve(r, false, nil, p.Hide)...)
	}
	for _, w := range p.Write {
		// A Write root nested in a Keep path (the workspace under <project>/.massgen when the
		// project is writable) is writable: the deeper root decides. Keep paths below it still hold.
		var keep []string
		for _, k := range p.Keep {
			if !under(filepath.Clean(w), filepath.Clean(k)) || filepath.Clean(w) == filepath.Clean(k) {
				keep = append(keep, k)
			}
		}
		grants = append(grants, carve(w, true, keep, p.Hide)...)
	}
	for _, g := range grants {
		fi, err := os.Stat(g.path)
		if err != nil {
			continue // a root that does not exist yet grants nothing
		}
		switch {
		case g.access == accessList:
			rules = append(rules, landlock.PathAccess(ll.AccessFSReadDir, g.path))
		case fi.IsDir() && g.access == accessWrite:
			rules = append(rules, landlock.RWDirs(g.path).WithRefer())
		case fi.IsDir():
			rules = append(rules, landlock.RODirs(g.path))
		case g.access == accessWrite:
			rules = append(rules, landlock.RWFiles(g.path))
		default:
			rules = append(rules, landlock.ROFiles(g.path))
		}
	}
	return rules, nil
}

const (
	accessList  = iota + 1 // list directory entries only
	accessRead             // read and execute
	accessWrite            // read, execute and write
)

type grant struct {
	path   string
	access int
}

// carve grants access to root minus holes. Landlock cannot subtract a subtree from a grant, so
// a directory that contains a Keep path (must stay read-only) or a Hide path (must stay
// invisible) is not granted as a whole: it gets read access (list-only when something hidden is
// below) and every entry in it is carved in turn. Consequence: a command cannot create or remove
// entries directly in such an ancestor directory.
func carve(root string, write bool, keep, hide []string) []grant {
	root = filepath.Clean(root)
	for _, h := range hide {
		if under(root, filepath.Clean(h)) {
			return nil
		}
	}
	if write {
		for _, k := range keep {
			if under(root, filepath.Clean(k)) {
				write = false
				break
			}
		}
	}
	hidden, kept := false, false
	for _, h := range hide {
		hidden = hidden || under(filepath.Clean(h), root)
	}
	if write {
		for _, k := range keep {
			kept = kept || under(filepath.Clean(k), root)
		}
	}
	level := accessRead
	if write {
		level = accessWrite
	}
	if !hidden && !kept {
		return []grant{{root, level}}
	}
	fi, err := os.Lstat(root)
	if err != nil || !fi.IsDir() {
		return nil
	}
	out := []grant{{root, accessRead}}
	if hidden {
		out[0].access = accessList
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		out = append(out, carve(filepath.Join(root, e.Name()), write, keep, hide)...)
	}
	return out
}
