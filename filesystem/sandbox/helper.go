package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// MaybeRunHelper must be called first thing in main (and in TestMain of packages whose tests run
// commands): when the process was re-executed as the sandbox helper, it confines itself with
// Landlock, execs the command and never returns. Otherwise it returns at once.
func MaybeRunHelper() {
	if len(os.Args) < 4 || os.Args[1] != helperArg {
		return
	}
	err := runHelper(os.Args[2], os.Args[3:])
	// Only reached when confinement or exec failed: never run the command unconfined.
	fmt.Fprintf(os.Stderr, "massgen sandbox: %v\n", err)
	os.Exit(126)
}

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
	// V5 handles every filesystem right we know (incl. truncate and device ioctls); BestEffort
	// only drops what this kernel cannot restrict (ABI >= 3 is checked above).
	if err := landlock.V5.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	// Signals and abstract sockets stay inside the sandbox (ABI 6+), so a command cannot kill
	// or talk to massgen itself.
	if err := landlock.V6.BestEffort().RestrictScoped(); err != nil {
		return fmt.Errorf("landlock scopes: %w", err)
	}
	return syscall.Exec(argv[0], argv, os.Environ())
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
	rules = append(rules, landlock.RODirs(SystemReadDirs...).IgnoreIfMissing())
	rules = append(rules, landlock.RWFiles(writableDevices...).IgnoreIfMissing())
	add := func(path string, write bool) {
		fi, err := os.Stat(path)
		if err != nil {
			return // a root that does not exist yet grants nothing
		}
		switch {
		case fi.IsDir() && write:
			rules = append(rules, landlock.RWDirs(path).WithRefer())
		case fi.IsDir():
			rules = append(rules, landlock.RODirs(path))
		case write:
			rules = append(rules, landlock.RWFiles(path))
		default:
			rules = append(rules, landlock.ROFiles(path))
		}
	}
	for _, r := range p.Read {
		add(r, false)
	}
	for _, w := range p.Write {
		rw, ro := carve(w, p.Keep)
		for _, x := range ro {
			add(x, false)
		}
		for _, x := range rw {
			add(x, true)
		}
	}
	return rules, nil
}

// carve splits a writable root into paths that may be written (rw) and paths that stay
// read-only (ro) so that no Keep path lies under an rw path. Landlock cannot subtract a subtree
// from a grant, so ancestors of a Keep path get read-only access and every other entry in them
// gets its own write grant.
func carve(root string, keep []string) (rw, ro []string) {
	root = filepath.Clean(root)
	var inside []string
	for _, k := range keep {
		k = filepath.Clean(k)
		if under(k, root) {
			inside = append(inside, k)
		}
	}
	if len(inside) == 0 {
		return []string{root}, nil
	}
	for _, k := range inside {
		if k == root {
			return nil, []string{root}
		}
	}
	fi, err := os.Lstat(root)
	if err != nil || !fi.IsDir() {
		return nil, []string{root}
	}
	ro = append(ro, root)
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, ro
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		r, o := carve(filepath.Join(root, e.Name()), inside)
		rw = append(rw, r...)
		ro = append(ro, o...)
	}
	return rw, ro
}
