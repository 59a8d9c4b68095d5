//go:build linux

package confine

import (
	"fmt"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// RuleNode is a plan node as the Landlock mode's ruleset is built from it (see
// LandlockRuleset): a handle, its identity and what the command gets there and below.
type RuleNode struct {
	FD        int
	Parent    int // index in the list; -1 for /
	Dev, Ino  uint64
	Typ       uint32
	St        State
	MinBelow  int  // the lowest Rank of any descendant (3: none)
	PrivBelow bool // some descendant is hidden as a private path
	HideBelow bool // some descendant is hidden at all
}

// writableDevices are the device files every command may write to; readableDevices those it
// may read besides. The rest of /dev (terminals, kernel log, disks) is out of reach: bubblewrap
// mounts a fresh minimal /dev, Landlock grants these files only.
var (
	writableDevices = []string{"/dev/null", "/dev/zero", "/dev/full"}
	readableDevices = []string{"/dev/random", "/dev/urandom"}
)

// Landlock access rights by kind of object.
const (
	fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	readFile   = ll.AccessFSExecute | ll.AccessFSReadFile
	dirRead    = readFile | ll.AccessFSReadDir
	writeFile  = readFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
)

// handledFS is every file system right this kernel's ABI can restrict.
func handledFS(abi int) uint64 {
	switch {
	case abi >= 9:
		return 1<<17 - 1
	case abi >= 5:
		return 1<<16 - 1
	case abi >= 3:
		return 1<<15 - 1
	case abi == 2:
		return 1<<14 - 1
	}
	return 1<<13 - 1
}

// ruleset builds a Landlock ruleset: the plan's nodes (see addNodes), /proc and the harmless
// device files.
type ruleset struct {
	fd      int
	handled uint64
}

func newRuleset(abi int, net LandlockNet) (*ruleset, error) {
	attr := ll.RulesetAttr{HandledAccessFS: handledFS(abi)}
	if net.Restrict {
		if abi < MinLandlockNetABI {
			return nil, fmt.Errorf("landlock ABI %d has no TCP rules (need %d)", abi, MinLandlockNetABI)
		}
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 6 {
		// Signals and abstract sockets stay inside the sandbox, so a command cannot kill or
		// talk to massgen itself.
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	return &ruleset{fd: fd, handled: attr.HandledAccessFS}, nil
}

// grant allows access (masked to what the object can take) beneath the handle fd.
func (r *ruleset) grant(fd int, typ uint32, access uint64) error {
	if typ != unix.S_IFDIR {
		access &= fileRights
	}
	access &= r.handled
	if access == 0 {
		return nil
	}
	if err := ll.LandlockAddPathBeneathRule(r.fd, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0); err != nil {
		return fmt.Errorf("landlock_add_rule: %w", err)
	}
	return nil
}

// grantPath grants access to a system path (/proc, /dev/null): fixed, root-owned paths.
func (r *ruleset) grantPath(path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // absent here: nothing to grant
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	return r.grant(fd, st.Mode&unix.S_IFMT, access)
}

func stateAccess(s State, typ uint32) uint64 {
	switch s {
	case StateRead:
		return dirRead
	case StateWrite:
		if typ == unix.S_IFDIR {
			return ^uint64(0)
		}
		return writeFile
	}
	return 0
}

// addNodes grants what the plan says, from the handles. Landlock rules only add access, and a
// rule on a directory covers its whole subtree, so a directory with less access somewhere
// below (a Keep or private path) is carved: it gets read access itself (list-only when only
// root-only system files are hidden below; nothing at all when a private path is below, or
// its names would show), and each of its entries is granted in turn, opened O_PATH|O_NOFOLLOW
// under the directory's handle: a link is never granted (a rule on a link applies to what it
// points to), an entry swapped in during the set-up is whatever the handle says it is.
// Consequence: with Landlock alone a command cannot create or remove entries directly in such
// a directory, and cannot list a directory above a private path.
func (r *ruleset) addNodes(nodes []RuleNode) error {
	kids := make([][]int, len(nodes))
	for i, n := range nodes {
		if n.Parent >= 0 {
			kids[n.Parent] = append(kids[n.Parent], i)
		}
	}
	var visit func(i int) error
	visit = func(i int) error {
		n := nodes[i]
		if n.Typ == unix.S_IFLNK {
			return nil
		}
		visible := n.St == StateRead || n.St == StateWrite
		switch {
		case len(kids[i]) == 0 || visible && n.MinBelow >= n.St.Rank():
			if visible {
				if err := r.grant(n.FD, n.Typ, stateAccess(n.St, n.Typ)); err != nil {
					return err
				}
			}
		case visible: // carve
			switch {
			case n.PrivBelow:
			case n.HideBelow:
				if err := r.grant(n.FD, n.Typ, ll.AccessFSReadDir); err != nil {
					return err
				}
			default:
				if err := r.grant(n.FD, n.Typ, dirRead); err != nil {
					return err
				}
			}
			planned := map[FileID]bool{}
			for _, k := range kids[i] {
				planned[FileID{nodes[k].Dev, nodes[k].Ino}] = true
			}
			if err := r.carveEntries(n, planned); err != nil {
				return err
			}
		}
		for _, k := range kids[i] {
			if err := visit(k); err != nil {
				return err
			}
		}
		return nil
	}
	if len(nodes) == 0 {
		return nil
	}
	return visit(0)
}

// carveEntries grants n's access to each entry of n that the plan does not handle itself.
func (r *ruleset) carveEntries(n RuleNode, planned map[FileID]bool) error {
	ents, err := ReadDir(n.FD)
	if err != nil {
		return nil // unreadable: nothing below is granted
	}
	for _, e := range ents {
		fd, err := unix.Openat(n.FD, e.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		typ := st.Mode & unix.S_IFMT
		if err == nil && typ != unix.S_IFLNK && !planned[StatID(&st)] {
			err = r.grant(fd, typ, stateAccess(n.St, typ))
		}
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// addSystem grants /proc (read) and the harmless device files. /dev is not granted as a
// whole: it holds the user's terminals (/dev/pts/N, /dev/tty: a command could read what the
// user types), the kernel log and raw disks (readable by root).
func (r *ruleset) addSystem() error {
	if err := r.grantPath("/proc", dirRead); err != nil {
		return err
	}
	for _, d := range readableDevices {
		if err := r.grantPath(d, readFile); err != nil {
			return err
		}
	}
	for _, d := range writableDevices {
		if err := r.grantPath(d, writeFile); err != nil {
			return err
		}
	}
	return nil
}

// MinLandlockNetABI is the first Landlock ABI with TCP rules.
const MinLandlockNetABI = 4

// LandlockNet is the network part of a Landlock ruleset.
type LandlockNet struct {
	// Restrict: TCP bind and connect are refused, but connect to ConnectPorts (massgen's
	// proxy). Needs ABI MinLandlockNetABI.
	Restrict     bool
	ConnectPorts []int
}

// LandlockRuleset is the Landlock mode's ruleset for the plan nodes (preorder, parents first,
// the handles open): what addNodes grants, /proc and the harmless device files, and the TCP
// rules of net. The caller closes the descriptor.
func LandlockRuleset(nodes []RuleNode, net LandlockNet) (int, error) {
	abi := LandlockABI()
	if abi < MinLandlockABI {
		return -1, fmt.Errorf("landlock ABI %d < %d", abi, MinLandlockABI)
	}
	rs, err := newRuleset(abi, net)
	if err != nil {
		return -1, err
	}
	for _, p := range net.ConnectPorts {
		if err := ll.LandlockAddNetPortRule(rs.fd, &ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(p)}, 0); err != nil {
			unix.Close(rs.fd)
			return -1, fmt.Errorf("landlock_add_rule (port %d): %w", p, err)
		}
	}
	if err := rs.addSystem(); err != nil {
		unix.Close(rs.fd)
		return -1, err
	}
	if err := rs.addNodes(nodes); err != nil {
		unix.Close(rs.fd)
		return -1, err
	}
	return rs.fd, nil
}

// ConfineThread confines the calling (locked) thread: no_new_privs, the Landlock ruleset, no
// capability for what it execs (see dropInheritable), the seccomp filter.
func ConfineThread(ruleset int, f FilterOpts) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(ruleset, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if err := dropInheritable(); err != nil {
		return fmt.Errorf("dropping capabilities: %w", err)
	}
	if err := installFilter(f); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
