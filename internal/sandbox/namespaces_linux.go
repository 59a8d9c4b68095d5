//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// The namespaces mode: bubblewrap's view of the file system, built by massgen itself (on a
// thread of its own as root, nsdirect_linux.go, or of the zygote, zygote_linux.go, when those
// can run; here the per-command helper they replace). The
// command's first process is massgen re-executed as the helper (internal/confine, dispatched
// from its init), started in new user (unless root), mount, PID and IPC namespaces; the helper
// makes its mounts private, the whole tree read-only, then mounts what the plan says from
// handles (a root read-write, a Keep path read-only — a link included, which bubblewrap cannot
// do —, the ancestors of Keep and private paths pinned, private directories covered, read-only
// directories holding private names covered and their other entries bound back), mounts a
// /proc of its own, and then confines itself with a flat Landlock ruleset (no carve: the mounts
// make the holes), drops every capability, installs the seccomp filter and execs the shell as
// PID 1: when it ends, everything it started ends.

// MaybeRunHelper must be called first thing in main (and in TestMain of packages whose tests run
// commands): it marks the descriptors massgen inherited close-on-exec (none reaches a command),
// marks re-executing this binary as the helper as safe, and, when the process was
// re-executed as the helper, builds the command's view of the file system, confines itself,
// execs the command and never returns; re-executed as the zygote, it serves massgen's
// commands until massgen exits, then exits. Otherwise it returns at once. (The helper has already
// run by then: package confine dispatches it from its init, before the packages the helper
// does not need start.)
func MaybeRunHelper() {
	closeInheritedOnExec()
	helperReady.Store(true)
	confine.RunHelperIfAsked()
	if len(os.Args) == 2 && os.Args[1] == zygoteArg {
		runZygote() // never returns
	}
}

// helperReady records that this process's main (or TestMain) called MaybeRunHelper, so
// re-executing os.Executable() as the helper is safe. A process-wide fact set once at start:
// without it, a binary that never calls MaybeRunHelper (say, another package's test binary)
// would be re-executed with arguments it does not understand (a test binary would run all its
// tests again, recursively).
var helperReady atomic.Bool

// nsNodes computes each node's action (preorder, parents first).
func (pl *plan) nsNodes() []confine.Node {
	var out []confine.Node
	var walk func(n *node, parent int, container bool)
	walk = func(n *node, parent int, container bool) {
		a := nsActOf(n, container)
		name := n.name
		if parent < 0 {
			name = "/"
		}
		out = append(out, confine.Node{Name: name, Parent: parent, Dev: n.id.Dev, Ino: n.id.Ino, Typ: n.typ, St: n.st, Act: a,
			Root: n.kinds&(kRead|kWrite) != 0})
		me := len(out) - 1
		if a == confine.ActAbsent || a == confine.ActLinkCopy {
			return
		}
		for _, k := range n.kids {
			walk(k, me, a == confine.ActCover || a == confine.ActHideTmpfs || a == confine.ActContainer)
		}
	}
	walk(pl.root, -1, false)
	return out
}

// nsActOf decides a node's action; container: its parent is a tmpfs of ours, where the node
// does not exist until the helper creates it.
func nsActOf(n *node, container bool) confine.Act {
	par := n.parent
	if par == nil {
		return confine.ActNone
	}
	switch {
	case n.st.Visible() && n.isLink():
		switch {
		case container:
			return confine.ActLinkCopy
		case n.st == stRead && par.st == stWrite:
			return confine.ActBindRO // a Keep link: mounted over, it cannot be removed or replaced
		}
		return confine.ActNone
	case n.st.Visible() && !n.isDir() && !n.isReg():
		if container {
			return confine.ActAbsent
		}
		return confine.ActNone
	case n.st.Visible() && n.cover:
		return confine.ActCover
	case n.st == stWrite && (container || n.kinds&kWrite != 0 || n.reduce()):
		return confine.ActBindRW // roots (the whole tree is read-only first) and pinned ancestors
	case n.st == stRead && (container || par.st == stWrite):
		return confine.ActBindRO
	case n.st.Visible():
		return confine.ActNone // already read-only in place
	case container && len(n.kids) > 0:
		return confine.ActContainer
	case container:
		return confine.ActAbsent
	case n.st == stHidden && par.st.Visible() && n.isDir():
		return confine.ActHideTmpfs
	case n.st == stHidden && par.st.Visible() && n.isReg():
		return confine.ActHideNull
	}
	return confine.ActNone
}

// nsAvailable: whether the namespaces this mode needs can be created here, probed once. As
// root a mount, PID and IPC namespace; otherwise a user namespace with them, which Ubuntu's
// AppArmor restriction on unprivileged user namespaces or a container's seccomp profile may
// forbid.
type nsProbe struct {
	once sync.Once
	attr syscall.SysProcAttr
	err  error
}

var namespacesProbe nsProbe

func (p *nsProbe) get() (syscall.SysProcAttr, error) {
	p.once.Do(func() {
		attr := syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC}
		if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			// The helper is not root in its user namespace, so exec would drop the
			// capabilities the namespace gave it: CAP_SYS_ADMIN (to mount) is kept as an
			// ambient capability. The helper drops it before the command.
			// CAP_NET_ADMIN brings up the loopback of the command's network namespace.
			attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
		}
		cmd := exec.Command("/bin/true")
		probe := attr
		cmd.SysProcAttr = &probe
		if err := cmd.Run(); err != nil {
			p.err = fmt.Errorf("user namespaces are not allowed here (%v)", err)
			return
		}
		p.attr = attr
	})
	return p.attr, p.err
}

// nsSpec is the view of the plan with dirfd (-1: none) as the working directory.
func (pl *plan) nsSpec(dirfd int) (confine.Spec, error) {
	spec := confine.Spec{Nodes: pl.nsNodes(), Status: -1}
	if dirfd >= 0 {
		p, err := fdPath(dirfd)
		if err != nil {
			return spec, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(dirfd, &st); err != nil {
			return spec, err
		}
		spec.Dir, spec.DirDev, spec.DirIno = p, uint64(st.Dev), uint64(st.Ino)
	}
	return spec, nil
}

// nsStart prepares the helper: fd 3 its spec, fd 4 the status pipe.
type nsStart struct {
	specW, status *os.File
	spec          confine.Spec
}

// helperExe is the binary re-executed as the helper or the zygote.
func helperExe(o Options) (string, error) {
	if o.Executable != "" {
		return o.Executable, nil
	}
	if !helperReady.Load() {
		return "", fmt.Errorf("this program does not call sandbox.MaybeRunHelper() first thing in main (or TestMain): it cannot re-execute itself as the namespaces helper")
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the helper binary: %w", err)
	}
	return exe, nil
}

func namespacesArgv(o Options, pl *plan, pf *passFiles, dirfd int, ns *netSetup) ([]string, *nsStart, error) {
	exe, err := helperExe(o)
	if err != nil {
		return nil, nil, err
	}
	spec, err := pl.nsSpec(dirfd)
	if err != nil {
		return nil, nil, err
	}
	spec.Status = 4
	spec.Net = ns.nsSpec()
	if ns.mode == NetworkAllowlist {
		// fd 5: where the helper sends the proxy's listener, made in its network namespace.
		if err := ns.bridge(); err != nil {
			return nil, nil, err
		}
		spec.Net.Sock = 5
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, nil, err
	}
	pf.files = append(pf.files, specR, statusW) // fd 3, fd 4
	if ns.child != nil {
		pf.files = append(pf.files, ns.child) // fd 5
		ns.child = nil
	}
	return []string{exe, confine.HelperArg, "/bin/sh", "-c", o.Command}, &nsStart{specW: specW, status: statusR, spec: spec}, nil
}

// wait writes the spec (after the child started: it may be larger than a pipe's buffer) and
// returns the helper's status: nil when it exec'd the command (the status pipe closed empty).
func (s *nsStart) wait() error {
	b, err := json.Marshal(s.spec)
	if err != nil {
		return err
	}
	specW := s.specW
	s.specW = nil
	go func() {
		specW.Write(b)
		specW.Close()
	}()
	st, _ := io.ReadAll(io.LimitReader(s.status, 64<<10))
	if m := strings.TrimSpace(string(st)); m != "" {
		return fmt.Errorf("%s", m)
	}
	return nil
}

func (s *nsStart) Close() {
	if s.specW != nil {
		s.specW.Close()
	}
	s.status.Close()
}

// closeRangeCloexec marks descriptors 3 and up close-on-exec in one call (Linux 5.11).
func closeRangeCloexec() bool {
	return unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil
}
