//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// maxPlanNodes bounds the handles one command holds (each is a descriptor passed to the
// sandbox).
const maxPlanNodes = 8192

// fileID identifies an inode.
type fileID = confine.FileID

// minLandlockABI is the oldest Landlock ABI a sandbox uses (see confine.MinLandlockABI).
const minLandlockABI = confine.MinLandlockABI

// kind is what the policy says about a path (several may apply to one path).
type kind uint16

const (
	kRead    kind = 1 << iota // a readable root
	kWrite                    // a writable root
	kKeep                     // read-only under a writable root
	kHide                     // content hidden, the name may show (root-only system files)
	kPrivate                  // hidden, name included where the sandbox can (private paths)
	kOwn                      // the agent's own writable root: not swept
	kSys                      // a system directory
)

// state is the access a command gets at a path: the deepest policy entry on the path decides.
// The helper receives it (confine.State).
type state = confine.State

const (
	stNone   = confine.StateNone   // outside every root: invisible
	stHidden = confine.StateHidden // inside a Hide path: invisible
	stRead   = confine.StateRead
	stWrite  = confine.StateWrite
)

// apply is the state below a path with kinds k, given the state s above it. Order: a root
// sets the state (a root nested in a hidden path is visible), Keep lowers write to read, Hide
// hides.
func apply(s state, k kind) state {
	if k&kRead != 0 {
		s = stRead
	}
	if k&kWrite != 0 {
		s = stWrite
	}
	if k&kKeep != 0 && s == stWrite {
		s = stRead
	}
	if k&(kHide|kPrivate) != 0 {
		s = stHidden
	}
	return s
}

// node is one path of the policy, or a directory on the way to one, opened once.
type node struct {
	name   string
	path   string
	parent *node
	kids   []*node
	byName map[string]*node
	kinds  kind
	fd     int // O_PATH|O_NOFOLLOW handle; -1 when absent
	id     fileID
	typ    uint32 // S_IFMT bits
	st     state
	// priv: hidden because of a private path (not merely a root-only system file).
	priv bool
	// minBelow is the lowest rank of any descendant (3: no descendant).
	minBelow int
	// privBelow, hideBelow: some descendant is hidden (privately / at all).
	privBelow, hideBelow bool
	// cover (bubblewrap): a read-only directory with a private entry: it is covered by an
	// empty file system and its other entries are bound back, so the private names do not show.
	cover bool
}

func (n *node) isDir() bool  { return n.typ == unix.S_IFDIR }
func (n *node) isLink() bool { return n.typ == unix.S_IFLNK }
func (n *node) isReg() bool  { return n.typ == unix.S_IFREG }

// reduce: some descendant has less access than n, so a Landlock grant on n (which covers its
// whole subtree) would give too much: n must be carved.
func (n *node) reduce() bool { return n.minBelow < n.st.Rank() }

// missing is a Keep path that did not exist at set-up: from the deepest existing directory
// on its way (an open handle), the rest of its components.
type missing struct {
	dir  int
	rest []string
	path string
}

// plan is the policy opened as handles.
type plan struct {
	root    *node
	nodes   []*node // every opened node, preorder
	missing []missing
	extra   []int // other descriptors owned by the plan
}

// Close releases every handle.
func (p *plan) Close() {
	for _, n := range p.nodes {
		if n.fd >= 0 {
			unix.Close(n.fd)
			n.fd = -1
		}
	}
	for _, fd := range p.extra {
		unix.Close(fd)
	}
	p.extra = nil
}

// buildPlan opens every path of pol (plus the system directories and secrets) once, from /,
// one component at a time without following links, and computes what a command gets at each.
func buildPlan(pol Policy, secrets []string) (*plan, error) {
	root := &node{name: "/", path: "/", fd: -1, byName: map[string]*node{}}
	count := 1
	add := func(p string, k kind) error {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("sandbox: a policy path is not absolute (%d characters)", len(p))
		}
		n := root
		for _, c := range strings.Split(filepath.Clean(p), "/") {
			if c == "" {
				continue
			}
			kid := n.byName[c]
			if kid == nil {
				if count++; count > maxPlanNodes {
					return fmt.Errorf("sandbox: the policy has more than %d protected, excluded and private paths", maxPlanNodes)
				}
				kid = &node{name: c, path: filepath.Join(n.path, c), parent: n, fd: -1, byName: map[string]*node{}}
				n.byName[c] = kid
				n.kids = append(n.kids, kid)
			}
			n = kid
		}
		n.kinds |= k
		return nil
	}
	for _, d := range SystemReadDirs {
		if d != "/proc" && d != "/dev" {
			if err := add(d, kRead|kSys); err != nil {
				return nil, err
			}
		}
	}
	lists := []struct {
		paths []string
		k     kind
	}{{pol.Read, kRead}, {pol.Write, kWrite}, {pol.Own, kOwn}, {pol.Keep, kKeep}, {pol.Hide, kPrivate}, {secrets, kHide}}
	for _, l := range lists {
		for _, p := range l.paths {
			if err := add(p, l.k); err != nil {
				return nil, err
			}
		}
	}
	pl := &plan{root: root}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: opening /: %w", err)
	}
	root.fd = fd
	if err := pl.open(root); err != nil {
		pl.Close()
		return nil, err
	}
	pl.states(root, stNone, false)
	pl.prune(root)
	pl.flags(root)
	return pl, nil
}

// open opens n's children under n's handle (n is open) and records Keep paths that are absent.
func (pl *plan) open(n *node) error {
	var st unix.Stat_t
	if err := unix.Fstat(n.fd, &st); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	n.id, n.typ = confine.StatID(&st), st.Mode&unix.S_IFMT
	pl.nodes = append(pl.nodes, n)
	if len(n.kids) == 0 {
		return nil
	}
	if n.isLink() {
		// A link on the way (/lib64 -> usr/lib64; a directory swapped for a link since the
		// policy was computed): the paths below do not exist without following it, so they
		// get nothing. Sandboxed commands cannot rename the directories above a protected or
		// private path, so such a swap is not theirs; the permission layer's own walk may
		// also have followed a swapped link and listed a path that never was under a root.
		return nil
	}
	if !n.isDir() {
		for _, kid := range n.kids {
			pl.missingUnder(n.parent.fd, kid, []string{n.name, kid.name})
		}
		return nil
	}
	for _, kid := range n.kids {
		fd, err := unix.Openat(n.fd, kid.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			// Absent (or unreachable for us, hence for the command too): grants nothing.
			pl.missingUnder(n.fd, kid, []string{kid.name})
			continue
		}
		kid.fd = fd
		if err := pl.open(kid); err != nil {
			return err
		}
	}
	return nil
}

// missingUnder records every Keep path at or below the absent node n (reached from the open
// directory dirfd by rest).
func (pl *plan) missingUnder(dirfd int, n *node, rest []string) {
	if n.kinds&kKeep != 0 {
		d, err := unix.Dup(dirfd)
		if err == nil {
			unix.CloseOnExec(d)
			pl.extra = append(pl.extra, d)
			pl.missing = append(pl.missing, missing{dir: d, rest: rest, path: n.path})
		}
	}
	for _, k := range n.kids {
		pl.missingUnder(dirfd, k, append(append([]string(nil), rest...), k.name))
	}
}

// states computes what a command gets at each opened node.
func (pl *plan) states(n *node, above state, privAbove bool) {
	n.st = apply(above, n.kinds)
	switch {
	case n.kinds&kPrivate != 0:
		n.priv = true
	case n.kinds&kHide != 0:
		n.priv = false
	case n.st == stHidden:
		n.priv = privAbove
	}
	for _, k := range n.kids {
		if k.fd >= 0 {
			pl.states(k, n.st, n.priv && n.st == stHidden)
		}
	}
}

// prune drops nodes that change nothing (absent, or the same access as their parent with
// nothing different below); their handles stay open until Close (the clean-up may use them).
func (pl *plan) prune(n *node) bool {
	var kept []*node
	for _, k := range n.kids {
		if k.fd >= 0 && pl.prune(k) {
			kept = append(kept, k)
		}
	}
	n.kids = kept
	if n.parent == nil {
		return true
	}
	return len(kept) > 0 || n.st != n.parent.st || n.kinds&kSys != 0
}

// flags computes minBelow, hideBelow, privBelow and cover, bottom-up.
func (pl *plan) flags(n *node) {
	n.minBelow = 3
	for _, k := range n.kids {
		pl.flags(k)
		n.minBelow = min(n.minBelow, k.st.Rank(), k.minBelow)
		hidden := k.st == stHidden
		n.hideBelow = n.hideBelow || hidden || k.hideBelow
		n.privBelow = n.privBelow || hidden && k.priv || k.privBelow
		if n.st == stRead && n.isDir() && hidden && k.priv {
			n.cover = true
		}
	}
}

// openDirHandle opens dir as the command's working directory when the caller gave no handle.
func openDirHandle(dir string) (int, error) {
	if dir == "" {
		return -1, nil
	}
	return unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// fdPath is where the handle fd points now (for messages and bubblewrap's --chdir).
func fdPath(fd int) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
}
