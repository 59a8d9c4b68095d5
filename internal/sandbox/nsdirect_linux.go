//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// The namespaces mode without the helper process. Re-executing massgen costs more than the
// rest of the set-up together (the Go runtime and every package of the binary start again),
// so where it can, massgen builds the view itself, on a dedicated OS thread, as the Landlock
// mode confines one: the thread unshares its mount, PID and IPC namespaces, builds the view
// in its mount namespace, confines itself exactly as the helper does, and forks the shell,
// which is the first process (PID 1) of the thread's new PID namespace. The /proc of that
// namespace is mounted before it has a process: its handle comes from a pidfd of the thread
// (PIDFD_GET_PID_FOR_CHILDREN_NAMESPACE, Linux 6.11) and procfs takes it as its "pidns"
// option (Linux 6.18). This needs no user namespace (a thread cannot enter one), so massgen
// must run as root; otherwise the zygote (zygote_linux.go) runs this same code in its user
// namespace, and on older kernels the helper does it.

// pidfdGetPIDForChildrenNS is PIDFD_GET_PID_FOR_CHILDREN_NAMESPACE: _IO(0xFF, 6).
const pidfdGetPIDForChildrenNS = 0xFF<<8 | 6

// nsDirectProbe: whether the namespaces mode can be set up in this process, probed once.
type nsDirectProbe struct {
	once sync.Once
	err  error
}

var namespacesDirect nsDirectProbe

func (p *nsDirectProbe) get() error {
	p.once.Do(func() {
		if os.Geteuid() != 0 {
			p.err = fmt.Errorf("not root: a user namespace is needed, which a thread cannot enter")
			return
		}
		p.err = probeDirectHere()
	})
	return p.err
}

// probeDirectHere: whether this process can set up commands on its threads (as root, or as the
// zygote in its user namespace).
func probeDirectHere() error {
	// Go forks a probe child once per process when it first starts one (to learn whether
	// it can use pidfds); that child must not be the first process of a namespace below.
	if err := exec.Command("/bin/true").Run(); err != nil {
		return err
	}
	ch := make(chan error, 1)
	ended := onDedicatedThread(func() { ch <- probeDirect() })
	err := <-ch
	ended()
	return err
}

// probeDirect makes, on a dedicated thread, the namespaces and the /proc the mode needs, and
// starts /bin/true in them.
func probeDirect() error {
	pidns, err := unshareForCommand(true)
	if err != nil {
		return err
	}
	defer unix.Close(pidns)
	if err := confine.LoopbackUp(); err != nil {
		return err
	}
	fs, err := unix.Fsopen("proc", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen proc: %w", err)
	}
	defer unix.Close(fs)
	if err := unix.FsconfigSetFd(fs, "pidns", pidns); err != nil {
		return fmt.Errorf("procfs has no pidns option: %w", err)
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return fmt.Errorf("proc: %w", err)
	}
	return exec.Command("/bin/true").Run()
}

// unshareForCommand gives the calling (dedicated) thread new mount, PID (for its children)
// and IPC namespaces, makes its mounts private, and returns a handle of the PID namespace.
func unshareForCommand(net bool) (int, error) {
	flags := unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC
	if net {
		flags |= unix.CLONE_NEWNET
	}
	if err := unix.Unshare(flags); err != nil {
		return -1, fmt.Errorf("unshare: %w", err)
	}
	// Nothing mounted here may propagate back to massgen's namespace.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return -1, fmt.Errorf("making mounts private: %w", err)
	}
	pfd, err := unix.PidfdOpen(unix.Gettid(), unix.PIDFD_THREAD)
	if err != nil {
		return -1, fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(pfd)
	ns, err := unix.IoctlRetInt(pfd, pidfdGetPIDForChildrenNS)
	if err != nil {
		return -1, fmt.Errorf("the PID namespace's handle: %w", err)
	}
	return ns, nil
}

// onDedicatedThread runs f on an OS thread locked to it and never unlocked, so the thread ends
// with f (with whatever namespaces and confinement f gave it). The main thread is never
// ended (Go parks it instead), so f is moved off it. The function returned waits until that
// thread has ended (a thread's pidfd, Linux 6.9; earlier kernels: it returns at once): after
// it, no thread of massgen is left in a command's namespaces.
func onDedicatedThread(f func()) (ended func()) {
	tfd := make(chan int, 1)
	run := func() {
		fd, err := unix.PidfdOpen(unix.Gettid(), unix.PIDFD_THREAD)
		if err != nil {
			fd = -1
		}
		tfd <- fd
		f()
	}
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			run()
			return
		}
		// Holding the main thread, the new goroutine gets another one.
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			run()
		}()
		<-done
		runtime.UnlockOSThread()
	}()
	return func() {
		fd := <-tfd
		if fd < 0 {
			return
		}
		defer unix.Close(fd)
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(pfd, -1); !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}
}

// directConfine is the Landlock-style confine step of the direct namespaces mode (see
// startConfined): the thread's namespaces (a network namespace too, unless spec.Net leaves the
// network open) with its loopback up, the proxy's listener there when spec.Net asks for it
// (handed to onListener, which takes it over), the view, the confinement. The view's
// descriptors are closed before it returns; the thread keeps the namespaces, the confinement
// and the working directory for the command it forks.
func directConfine(spec confine.Spec, onListener func(fd int)) func() error {
	return func() error {
		pidns, err := unshareForCommand(spec.Net.Isolate)
		if err != nil {
			return err
		}
		defer unix.Close(pidns)
		ln, err := confine.SetUpNetwork(spec.Net)
		if err != nil {
			return err
		}
		if ln >= 0 {
			onListener(ln)
		}
		v, err := confine.ConfineInView(spec, pidns)
		if err != nil {
			return err
		}
		v.Close()
		return nil
	}
}
