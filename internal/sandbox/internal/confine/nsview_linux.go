//go:build linux

package confine

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// errViewChanged: a plan path is not the same inode in the helper's namespace.
var errViewChanged = errors.New("the file system changed during the sandbox set-up (a protected, private or root path is no longer what was checked); the command was not run, try again")

// View is the mount namespace being built for a command (by the helper, or by package sandbox
// on one of its threads): for each plan node the handle opened before any mount (its identity
// checked) and the node as it appears in the final tree.
type View struct {
	nodes []Node
	src   []int
	view  []int
	tmpfs []int
	proc  int
	dir   int
	// fds is every descriptor the view opened (the helper execs, but massgen itself builds
	// the view on one of its threads when it can, and must not leak them).
	fds []int
}

// keep records fd for Close and returns it.
func (v *View) keep(fd int) int {
	v.fds = append(v.fds, fd)
	return fd
}

// Close closes every descriptor of the view.
func (v *View) Close() {
	for _, fd := range v.fds {
		unix.Close(fd)
	}
	v.fds = nil
}

// buildView makes the mounts of the calling thread's (new) mount namespace private, opens
// every plan node, makes the whole tree read-only, mounts what the plan says, mounts a /proc
// of its own and finds the working directory. Every mount is made from a handle onto a handle
// (open_tree, move_mount): no path is resolved again. pidns, when not -1, is the PID namespace
// the /proc shows (the caller's children's, not yet entered); -1: the caller's own. On error
// the view's descriptors are closed.
func buildView(spec Spec, pidns int) (_ *View, err error) {
	v := &View{nodes: spec.Nodes, src: make([]int, len(spec.Nodes)), view: make([]int, len(spec.Nodes)), proc: -1, dir: -1}
	if len(v.nodes) == 0 {
		return nil, errors.New("empty plan")
	}
	defer func() {
		if err != nil {
			v.Close()
		}
	}()
	// Nothing we mount may propagate back to massgen's namespace.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("making mounts private: %w", err)
	}
	for i, n := range v.nodes {
		v.src[i], v.view[i] = -1, -1
		if n.Parent < 0 {
			fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return nil, err
			}
			v.src[i] = v.keep(fd)
			continue
		}
		fd, err := unix.Openat(v.src[n.Parent], n.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, errViewChanged
		}
		v.src[i] = v.keep(fd)
		if !sameID(fd, n) {
			return nil, errViewChanged
		}
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return nil, fmt.Errorf("making the tree read-only: %w", err)
	}
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	v.view[0] = v.keep(root)
	kids := make([][]int, len(v.nodes))
	for i, n := range v.nodes {
		if n.Parent >= 0 {
			kids[n.Parent] = append(kids[n.Parent], i)
		}
	}
	for i, n := range v.nodes {
		if n.Parent < 0 {
			continue
		}
		if err := v.mountNode(i, n, kids[i]); err != nil {
			return nil, err
		}
	}
	for _, m := range v.tmpfs {
		if err := unix.MountSetattr(m, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return nil, fmt.Errorf("making a tmpfs read-only: %w", err)
		}
	}
	if err := v.mountProc(pidns); err != nil {
		return nil, err
	}
	if spec.Dir != "" {
		d, err := walkNoFollow(spec.Dir)
		if err != nil {
			return nil, fmt.Errorf("finding the working directory: %w", err)
		}
		v.keep(d)
		var st unix.Stat_t
		if unix.Fstat(d, &st) != nil || (uint64(st.Dev) != spec.DirDev || uint64(st.Ino) != spec.DirIno) && !v.coveredDir(st, spec) {
			return nil, errViewChanged
		}
		v.dir = d
	}
	return v, nil
}

// coveredDir: the working directory found (st) is the tmpfs covering the directory the spec
// names, a read-only directory holding a private name (such as a project's .env): the command
// then starts in the cover, which holds that directory's other entries.
func (v *View) coveredDir(st unix.Stat_t, spec Spec) bool {
	for i, n := range v.nodes {
		if n.Act != ActCover || n.Dev != spec.DirDev || n.Ino != spec.DirIno || v.view[i] < 0 {
			continue
		}
		var cst unix.Stat_t
		if unix.Fstat(v.view[i], &cst) == nil && cst.Dev == st.Dev && cst.Ino == st.Ino {
			return true
		}
	}
	return false
}

func sameID(fd int, n Node) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && uint64(st.Dev) == n.Dev && uint64(st.Ino) == n.Ino
}

// container: the parent's view is one of our tmpfs, where the node must be created.
func (v *View) container(n Node) bool {
	switch v.nodes[n.Parent].Act {
	case ActCover, ActHideTmpfs, ActContainer:
		return true
	}
	return false
}

func (v *View) mountNode(i int, n Node, kids []int) error {
	pv := v.view[n.Parent]
	if n.Act == ActAbsent || pv < 0 {
		return nil
	}
	var tgt int
	if v.container(n) {
		switch {
		case n.Act == ActLinkCopy:
			t, err := ReadlinkFD(v.src[i])
			if err == nil {
				err = unix.Symlinkat(t, pv, n.Name)
			}
			return err
		case n.Typ == unix.S_IFDIR:
			if err := unix.Mkdirat(pv, n.Name, 0o755); err != nil {
				return fmt.Errorf("creating a mount point: %w", err)
			}
		default:
			fd, err := unix.Openat(pv, n.Name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o444)
			if err != nil {
				return fmt.Errorf("creating a mount point: %w", err)
			}
			unix.Close(fd)
		}
		fd, err := unix.Openat(pv, n.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		tgt = v.keep(fd)
	} else {
		fd, err := unix.Openat(pv, n.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return errViewChanged
		}
		tgt = v.keep(fd)
		if !sameID(fd, n) {
			return errViewChanged
		}
	}
	switch n.Act {
	case ActNone, ActContainer:
		v.view[i] = tgt
	case ActBindRW, ActBindRO:
		t, err := bindOnto(v.src[i], tgt, n.Act == ActBindRO)
		if err != nil {
			return err
		}
		v.view[i] = v.keep(t)
	case ActCover, ActHideTmpfs:
		m, err := tmpfsOnto(tgt)
		if err != nil {
			return err
		}
		v.view[i] = v.keep(m)
		v.tmpfs = append(v.tmpfs, m)
		if n.Act == ActCover {
			planned := map[string]bool{}
			for _, k := range kids {
				planned[v.nodes[k].Name] = true
			}
			return bindBack(v.src[i], m, planned)
		}
	case ActHideNull:
		null, err := unix.Open("/dev/null", unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(null)
		t, err := bindOnto(null, tgt, true)
		if err != nil {
			return err
		}
		v.keep(t)
	}
	return nil
}

// bindOnto mounts a copy of the mount at src (rooted there) onto tgt, read-only or not, and
// returns the new mount's handle.
func bindOnto(src, tgt int, ro bool) (int, error) {
	t, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.AT_EMPTY_PATH|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("open_tree: %w", err)
	}
	attr := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	if ro {
		attr = unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	}
	if err := unix.MountSetattr(t, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		unix.Close(t)
		return -1, fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(t, "", tgt, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		unix.Close(t)
		return -1, fmt.Errorf("move_mount: %w", err)
	}
	return t, nil
}

// tmpfsOnto mounts an empty tmpfs onto tgt and returns its root's handle.
func tmpfsOnto(tgt int) (int, error) {
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen tmpfs: %w", err)
	}
	defer unix.Close(fs)
	if err := unix.FsconfigSetString(fs, "mode", "0755"); err != nil {
		return -1, err
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return -1, err
	}
	m, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return -1, fmt.Errorf("fsmount tmpfs: %w", err)
	}
	if err := unix.MoveMount(m, "", tgt, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		unix.Close(m)
		return -1, fmt.Errorf("move_mount tmpfs: %w", err)
	}
	return m, nil
}

// bindBack binds the entries of the covered directory dir (read-only) into its tmpfs m,
// except the planned ones (handled in their turn: private ones stay absent).
func bindBack(dir, m int, planned map[string]bool) error {
	ents, err := ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if planned[e.Name] {
			continue
		}
		fd, err := unix.Openat(dir, e.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			unix.Close(fd)
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			err = unix.Mkdirat(m, e.Name, 0o755)
		case unix.S_IFREG:
			var f int
			if f, err = unix.Openat(m, e.Name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o444); err == nil {
				unix.Close(f)
			}
		case unix.S_IFLNK:
			var t string
			if t, err = ReadlinkFD(fd); err == nil {
				err = unix.Symlinkat(t, m, e.Name)
			}
			unix.Close(fd)
			if err != nil {
				return err
			}
			continue
		default:
			unix.Close(fd)
			continue
		}
		if err != nil {
			unix.Close(fd)
			return err
		}
		tgt, err := unix.Openat(m, e.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			var t int
			if t, err = bindOnto(fd, tgt, true); err == nil {
				unix.Close(t)
			}
			unix.Close(tgt)
		}
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// mountProc mounts a /proc of the command's PID namespace (it sees no other process): pidns,
// or the caller's own when -1.
func (v *View) mountProc(pidns int) error {
	tgt, err := unix.Open("/proc", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(tgt)
	fs, err := unix.Fsopen("proc", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen proc: %w", err)
	}
	defer unix.Close(fs)
	if pidns >= 0 {
		if err := unix.FsconfigSetFd(fs, "pidns", pidns); err != nil {
			return fmt.Errorf("proc pidns: %w", err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return fmt.Errorf("proc: %w", err)
	}
	m, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return fmt.Errorf("fsmount proc: %w", err)
	}
	v.proc = v.keep(m)
	if err := unix.MoveMount(m, "", tgt, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("mounting proc: %w", err)
	}
	return nil
}

// walkNoFollow opens the directory at p (absolute) component by component, following no link.
func walkNoFollow(p string) (int, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" {
			continue
		}
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// landlock is the flat ruleset of the view: the mounts make the read-only and hidden holes,
// Landlock keeps the command inside the roots (reads included). The descriptor is the view's
// (closed with it).
func (v *View) landlock(spec Spec) (int, error) {
	abi := LandlockABI()
	if abi < MinLandlockABI {
		return -1, fmt.Errorf("landlock ABI %d < %d", abi, MinLandlockABI)
	}
	rs, err := newRuleset(abi, LandlockNet{})
	if err != nil {
		return -1, err
	}
	v.keep(rs.fd)
	if err := rs.grant(v.proc, unix.S_IFDIR, dirRead); err != nil {
		return -1, err
	}
	for _, d := range readableDevices {
		if err := rs.grantPath(d, readFile); err != nil {
			return -1, err
		}
	}
	for _, d := range writableDevices {
		if err := rs.grantPath(d, writeFile); err != nil {
			return -1, err
		}
	}
	for i, n := range v.nodes {
		if n.Root && n.St.Visible() && n.Typ != unix.S_IFLNK {
			if err := rs.grant(v.src[i], n.Typ, stateAccess(n.St, n.Typ)); err != nil {
				return -1, err
			}
			// A covered root: Landlock's walk up from a file skips the dentry a mount hides,
			// so the rule goes on the tmpfs that covers it too.
			if n.Act == ActCover {
				if err := rs.grant(v.view[i], n.Typ, stateAccess(n.St, n.Typ)); err != nil {
					return -1, err
				}
			}
		}
	}
	return rs.fd, nil
}
