//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// passFiles collects the descriptors handed to the sandbox process: the i-th is fd 3+i there.
type passFiles struct{ files []*os.File }

// add passes a duplicate of fd and returns its number in the child.
func (p *passFiles) add(fd int) (int, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return 0, err
	}
	return p.own(d), nil
}

// own passes fd itself (the list closes it).
func (p *passFiles) own(fd int) int {
	p.files = append(p.files, os.NewFile(uintptr(fd), "sandbox-handle"))
	return 2 + len(p.files)
}

func (p *passFiles) Close() {
	for _, f := range p.files {
		f.Close()
	}
	p.files = nil
}

// bwrapArgs is bubblewrap's mount table for the plan. Every bind comes from a handle
// (--bind-fd / --ro-bind-fd: bubblewrap also checks that what it mounted is that inode), in
// tree order so a deeper entry always wins:
//   - roots are bound read-only or read-write; Keep paths read-only again;
//   - each directory between a writable root and a Keep or private path is bound onto itself,
//     which makes it a mount point: it cannot be renamed or removed while the command runs, so
//     the protected name below cannot be moved away and recreated;
//   - a private directory is covered by an empty read-only tmpfs (a private file by
//     /dev/null); in a read-only directory, the directory itself is covered and its other
//     entries bound back, so private names do not even show in a listing;
//   - a Keep path that is a symbolic link gets no mount (bubblewrap cannot mount over a link,
//     and following it would expose its target): the clean-up puts it back if the command
//     replaced it;
//   - the root file system and every tmpfs are made read-only at the end.
func (pl *plan) bwrapArgs(pf *passFiles) ([]string, error) {
	// --cap-drop ALL: run as root, bwrap would otherwise keep every capability in the sandbox.
	args := []string{"--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL",
		"--proc", "/proc"}
	var remount []string
	args, remount = procMasks(args, remount)
	args = append(args, "--dev", "/dev")
	bind := func(fd int, path string, rw bool) error {
		n, err := pf.add(fd)
		if err != nil {
			return err
		}
		op := "--ro-bind-fd"
		if rw {
			op = "--bind-fd"
		}
		args = append(args, op, strconv.Itoa(n), path)
		return nil
	}
	symlink := func(fd int, path string) {
		if t, err := confine.ReadlinkFD(fd); err == nil {
			args = append(args, "--symlink", t, path)
		}
	}
	var visit func(n *node) error
	visit = func(n *node) error {
		par := n.parent
		switch {
		case n.st.Visible() && n.isLink():
			if par.cover || n.kinds&kSys != 0 && par.st == stNone {
				symlink(n.fd, n.path)
			}
			return nil
		case n.st.Visible() && !n.isDir() && !n.isReg():
			return nil // sockets, fifos, devices: not mounted
		case n.st.Visible() && n.cover:
			args = append(args, "--tmpfs", n.path)
			remount = append(remount, n.path)
			if err := pl.bindBack(n, pf, &args); err != nil {
				return err
			}
		case n.st.Visible():
			root := n.kinds&(kRead|kWrite) != 0
			pin := n.st == stWrite && n.reduce()
			if root || n.st != par.st || par.cover || pin {
				if err := bind(n.fd, n.path, n.st == stWrite); err != nil {
					return err
				}
			}
		case n.st == stHidden && par.st.Visible() && !par.cover:
			switch {
			case n.isDir():
				args = append(args, "--tmpfs", n.path)
				remount = append(remount, n.path)
			case n.isReg():
				args = append(args, "--ro-bind", "/dev/null", n.path)
			}
		}
		for _, k := range n.kids {
			if err := visit(k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, k := range pl.root.kids {
		if err := visit(k); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	// Writes anywhere else fail instead of landing in bwrap's throwaway root tmpfs. /tmp is not
	// mounted: the private temp dir (a Write root) is the only writable place outside the roots.
	args = append(args, "--remount-ro", "/")
	for _, p := range remount {
		args = append(args, "--remount-ro", p)
	}
	return args, nil
}

// procReadOnly and procMasked are what Docker's default mounts do to /proc (bubblewrap itself
// already makes /proc/irq and /proc/bus read-only). A command keeps massgen's uid: as root,
// /proc/sys would let it set the host's sysctls (kernel/core_pattern runs a program of its
// choice as root at the next crash anywhere), and /proc/sysrq-trigger reboot the machine.
// The other modes need none of this: Landlock grants /proc read-only there. /sys is not
// mounted at all.
var (
	procReadOnly = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/fs"}
	procMasked   = []string{"/proc/keys", "/proc/kcore", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats",
		"/proc/acpi", "/proc/asound", "/proc/scsi"}
)

// procMasks appends the binds of procReadOnly and procMasked that exist on this kernel (the
// sandbox's /proc is of the same kernel: what the host's lacks, it lacks too); masked
// directories get an empty tmpfs, made read-only at the end with the others (remount).
func procMasks(args, remount []string) ([]string, []string) {
	for _, p := range procReadOnly {
		args = append(args, "--ro-bind-try", p, p)
	}
	for _, p := range procMasked {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			args = append(args, "--tmpfs", p)
			remount = append(remount, p)
		default:
			args = append(args, "--ro-bind", "/dev/null", p)
		}
	}
	return args, remount
}

// bindBack binds the entries of the covered directory n (read-only) onto its tmpfs, except
// the ones the plan handles itself (its kids: private ones stay absent, the others come in
// their turn).
func (pl *plan) bindBack(n *node, pf *passFiles, args *[]string) error {
	ents, err := confine.ReadDir(n.fd)
	if err != nil {
		return err
	}
	planned := map[string]bool{}
	for _, k := range n.kids {
		planned[k.name] = true
	}
	for _, e := range ents {
		if planned[e.Name] {
			continue
		}
		fd, err := unix.Openat(n.fd, e.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // gone meanwhile
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			continue
		}
		path := n.path + "/" + e.Name
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR, unix.S_IFREG:
			*args = append(*args, "--ro-bind-fd", strconv.Itoa(pf.own(fd)), path)
		case unix.S_IFLNK:
			if t, err := confine.ReadlinkFD(fd); err == nil {
				*args = append(*args, "--symlink", t, path)
			}
			unix.Close(fd)
		default:
			unix.Close(fd)
		}
	}
	return nil
}
