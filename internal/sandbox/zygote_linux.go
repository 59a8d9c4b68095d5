//go:build linux

package sandbox

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// The namespaces mode for an unprivileged massgen: a thread cannot enter a user namespace, so
// the in-process path (nsdirect_linux.go) needs root. Instead of re-executing massgen for every
// command, one long-lived helper process, the zygote, is started per massgen process at the
// first namespaces command: massgen re-executed with zygoteArg in a new user namespace (its
// uid and gid mapped to themselves, CAP_SYS_ADMIN kept across exec), dying with massgen
// (parent-death signal, and the end of its control socket). It shares massgen's mount
// namespace (it mounts nothing there, and could not: that namespace belongs to the initial
// user namespace), so each command's thread copies massgen's current mounts, as the root path
// does. For each request it runs exactly the root path's code (startConfined with
// directConfine): a dedicated thread unshares mount, PID and IPC namespaces, builds the view,
// confines itself and forks the shell as PID 1 of the new PID namespace.
//
// Protocol, over a private SOCK_SEQPACKET socketpair (fd 3 of the zygote): the zygote first
// says 'R' (ready) or 'E' and why. A request is one message "Q" carrying, with SCM_RIGHTS, the
// request's own socket, the command's stdout and stderr, a memfd holding the request as
// JSON (the spec may be larger than a message), then the cgroup.procs files of the command's
// cgroups, if any. The zygote applies the request's limits to the shell it forked (its child)
// before letting it run the command (limits_linux.go). On the request's socket the zygote answers
// 'S' (started) or 'E' and the set-up error, then 'X' and the exit status (4 bytes, as the
// shell reports it: 128+signal for a signal). Any message from massgen on it, or its end
// closing, kills the command's PID 1, which ends its whole PID namespace.

const zygoteArg = "__massgen_sandbox_zygote__"

// zygoteRequest is what the zygote needs to start one command.
type zygoteRequest struct {
	Spec confine.Spec `json:"spec"`
	Argv []string     `json:"argv"` // the shell, waiting on descriptor 3 (shellBarrier)
	Env  []string     `json:"env"`
	// Rlimits are the command's rlimits (see limitPlan).
	Rlimits []rlimitValue `json:"rlimits"`
}

// zygoteFixedFDs is how many descriptors every request carries (the cgroup files follow).
const zygoteFixedFDs = 4

// zygoteCtlFD is the zygote's control socket.
const zygoteCtlFD = 3

// runZygote serves requests until massgen's end of the control socket closes, then exits.
func runZygote() {
	f := os.NewFile(zygoteCtlFD, "zygote")
	c, err := net.FileConn(f)
	f.Close() // fd 3 is not close-on-exec: no command may inherit it
	if err != nil {
		os.Exit(125)
	}
	ctl := c.(*net.UnixConn)
	// Descriptors massgen inherited without close-on-exec (from its own parent) came here
	// too: none may reach a command.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		ctl.Write([]byte("Eclose_range: " + err.Error()))
		os.Exit(125)
	}
	if err := probeDirectHere(); err != nil {
		ctl.Write([]byte("E" + err.Error()))
		os.Exit(125)
	}
	if _, err := ctl.Write([]byte("R")); err != nil {
		os.Exit(125)
	}
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(16*4))
	for {
		n, oobn, flags, _, err := ctl.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			os.Exit(0) // massgen is gone
		}
		fds := receivedFDs(oob[:oobn])
		if flags&unix.MSG_CTRUNC != 0 || string(buf[:n]) != "Q" || len(fds) < zygoteFixedFDs {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		go serveZygoteRequest(fds)
	}
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// receivedFDs are the descriptors of the SCM_RIGHTS messages in oob (close-on-exec: Go reads
// with MSG_CMSG_CLOEXEC).
func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		if fds, err := unix.ParseUnixRights(&m); err == nil {
			out = append(out, fds...)
		}
	}
	return out
}

// serveZygoteRequest starts and watches one command: fds are the request's socket, stdout,
// stderr, the request memfd and the command's cgroup.procs files.
func serveZygoteRequest(fds []int) {
	rf := os.NewFile(uintptr(fds[0]), "request")
	stdout := os.NewFile(uintptr(fds[1]), "stdout")
	stderr := os.NewFile(uintptr(fds[2]), "stderr")
	body := os.NewFile(uintptr(fds[3]), "body")
	procs := fds[zygoteFixedFDs:]
	defer func() {
		for _, fd := range procs {
			unix.Close(fd)
		}
	}()
	defer stdout.Close()
	defer stderr.Close()
	c, err := net.FileConn(rf)
	rf.Close()
	if err != nil {
		body.Close()
		return
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	var req zygoteRequest
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	body.Close()
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	if err == nil && len(req.Argv) == 0 {
		err = errors.New("empty command")
	}
	if err != nil {
		conn.Write([]byte("Ebad request: " + err.Error()))
		return
	}
	barrierR, barrier, err := os.Pipe()
	if err != nil {
		conn.Write([]byte("E" + err.Error()))
		return
	}
	defer barrier.Close()
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Env = req.Env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{barrierR} // fd 3: the shell's go-ahead
	// The forking thread waits for the command: if the zygote dies, the command's PID 1 gets
	// SIGKILL, and its namespace ends with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	listener := -1 // the proxy's, in the command's network namespace (allowlist mode)
	defer func() {
		if listener >= 0 {
			unix.Close(listener)
		}
	}()
	wait, setupErr, startErr := startConfined(cmd, directConfine(req.Spec, func(fd int) { listener = fd }), func(p *os.Process) error {
		barrierR.Close()
		return releaseLimited(p.Pid, true, req.Rlimits, procs, func() { p.Kill() }, barrier)
	})
	barrierR.Close()
	if setupErr == nil {
		setupErr = startErr
	}
	if setupErr != nil {
		conn.Write([]byte("E" + setupErr.Error()))
		return
	}
	stdout.Close() // the command has its copies: EOF for massgen when the command ends
	stderr.Close()
	var rights []byte
	if listener >= 0 {
		rights = unix.UnixRights(listener)
	}
	if _, _, err := conn.WriteMsgUnix([]byte("S"), rights, nil); err != nil {
		cmd.Process.Kill()
	}
	go func() {
		// Anything from massgen, its end closing, or ours closing after the exit: kill. Go's
		// process handle (a pidfd) makes a kill after the wait a no-op, never another process.
		conn.Read(make([]byte, 1))
		cmd.Process.Kill()
	}()
	status := 0
	var ee *exec.ExitError
	if err := wait(); errors.As(err, &ee) {
		status = exitStatus(ee)
	} else if err != nil {
		status = 127
	}
	msg := []byte{'X', 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(msg[1:], uint32(int32(status)))
	conn.Write(msg)
}

// zygote is massgen's side of a running zygote.
type zygote struct {
	ctl     *net.UnixConn
	pid     int
	done    chan struct{} // closed when the zygote exited
	retired atomic.Bool   // its control socket failed: replaced at the next command
}

func (z *zygote) alive() bool {
	select {
	case <-z.done:
		return false
	default:
		return !z.retired.Load()
	}
}

// retire marks z as unusable and closes its control socket (on which it exits).
func (z *zygote) retire() {
	if !z.retired.Swap(true) {
		z.ctl.Close()
	}
}

// zygoteSet holds this process's zygote per helper binary, started at its first use.
type zygoteSet struct {
	mu     sync.Mutex
	byExe  map[string]*zygote
	failed map[string]error // could not start: that binary's commands use the helper
}

var zygotes zygoteSet

// get returns the running zygote of exe, starting one (again, if it died), or nil when none can
// run (said once in the log): the caller uses the per-command helper then.
func (s *zygoteSet) get(exe string, log *zap.Logger) *zygote {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed[exe] != nil {
		return nil
	}
	z := s.byExe[exe]
	if z != nil && z.alive() {
		return z
	}
	if z != nil {
		log.Warn("namespaces mode: the zygote (the process that starts commands) exited; starting a new one")
	}
	z, err := startZygote(exe)
	if err != nil {
		if s.failed == nil {
			s.failed = map[string]error{}
		}
		s.failed[exe] = err
		log.Warn("namespaces mode: the zygote could not start, so each command re-executes massgen as the helper (slower)", zap.Error(err))
		return nil
	}
	if s.byExe == nil {
		s.byExe = map[string]*zygote{}
	}
	s.byExe[exe] = z
	return z
}

// startZygote starts exe as a zygote and waits for it to say it is ready.
func startZygote(exe string) (*zygote, error) {
	attr, err := namespacesProbe.get()
	if err != nil {
		return nil, err
	}
	if attr.Cloneflags&syscall.CLONE_NEWUSER == 0 {
		return nil, errors.New("the zygote is for unprivileged users")
	}
	// A user namespace only: the zygote stays in massgen's mount namespace (each command's
	// thread copies it) and PID namespace (each command gets its own).
	attr.Cloneflags = syscall.CLONE_NEWUSER
	// Its own process group: a terminal's Ctrl-C is massgen's to handle.
	attr.Setpgid, attr.Pdeathsig = true, syscall.SIGKILL
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "zygote"), os.NewFile(uintptr(fds[1]), "zygote")
	defer theirs.Close()
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, err
	}
	ctl := c.(*net.UnixConn)
	cmd := exec.Command(exe, zygoteArg)
	cmd.Env = []string{} // massgen's secrets stay with massgen
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &attr
	z := &zygote{ctl: ctl, done: make(chan struct{})}
	started := make(chan error, 1)
	// The parent-death signal follows the thread that forked: this one stays locked to its
	// goroutine, which waits for the zygote, so it lives as long as the zygote.
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(z.done)
			return
		}
		started <- nil
		cmd.Wait()
		close(z.done)
	}()
	if err := <-started; err != nil {
		ctl.Close()
		return nil, err
	}
	z.pid = cmd.Process.Pid
	theirs.Close()
	ctl.SetReadDeadline(time.Now().Add(30 * time.Second))
	b := make([]byte, 4096)
	n, err := ctl.Read(b)
	ctl.SetReadDeadline(time.Time{})
	switch {
	case err != nil:
		err = fmt.Errorf("the zygote did not start: %w", err)
	case n == 1 && b[0] == 'R':
		return z, nil
	case n > 0 && b[0] == 'E':
		err = fmt.Errorf("the zygote cannot set up commands here: %s", b[1:n])
	default:
		err = fmt.Errorf("the zygote said %q", b[:n])
	}
	ctl.Close() // the zygote exits on EOF
	return nil, err
}

var (
	// errZygoteUnsent: the request did not reach the zygote (the command was not started).
	errZygoteUnsent = errors.New("the zygote is gone")
	// errZygoteLost: the zygote died during the command's set-up.
	errZygoteLost = errors.New("the zygote exited during the command's set-up")
)

// run starts argv through the zygote and waits for it, copying its output to stdout and
// stderr; onListener takes over the proxy's listener the zygote made in the command's network
// namespace, when it made one. setupErr: the command was not started (or its start is unknown:
// the zygote died); runErr: how the command ended (nil, exitCodeError, or a failed connection).
func (z *zygote) run(ctx context.Context, req zygoteRequest, procs []int, stdout, stderr io.Writer, onListener func(fd int)) (runErr, setupErr error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	mfd, err := unix.MemfdCreate("massgen-request", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	mf := os.NewFile(uintptr(mfd), "request")
	defer mf.Close()
	if _, err := mf.Write(body); err != nil {
		return nil, err
	}
	if _, err := mf.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "request"), os.NewFile(uintptr(fds[1]), "request")
	defer theirs.Close()
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, err
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer outR.Close()
	defer outW.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer errR.Close()
	defer errW.Close()
	rights := unix.UnixRights(append([]int{int(theirs.Fd()), int(outW.Fd()), int(errW.Fd()), int(mf.Fd())}, procs...)...)
	if _, _, err := z.ctl.WriteMsgUnix([]byte("Q"), rights, nil); err != nil {
		z.retire()
		return nil, fmt.Errorf("%w: %v", errZygoteUnsent, err)
	}
	// The zygote has its copies: ours would keep the pipes open after the command.
	theirs.Close()
	outW.Close()
	errW.Close()
	copied := make(chan struct{}, 2)
	go func() { io.Copy(stdout, outR); copied <- struct{}{} }()
	go func() { io.Copy(stderr, errR); copied <- struct{}{} }()

	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			conn.Write([]byte("K")) // the zygote kills the command's PID 1
		case <-stop:
		}
	}()
	b := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(b, oob)
	got := receivedFDs(oob[:oobn])
	switch {
	case err != nil || n == 0:
		closeFDs(got)
		z.retire()
		return nil, errZygoteLost
	case b[0] == 'E':
		closeFDs(got)
		return nil, fmt.Errorf("%s", b[1:n])
	case b[0] != 'S' || n != 1 || len(got) > 1:
		closeFDs(got)
		return nil, fmt.Errorf("the zygote said %q", b[:n])
	}
	if len(got) == 1 {
		onListener(got[0])
	}
	n, err = conn.Read(b)
	if err != nil || n != 5 || b[0] != 'X' {
		// The zygote died: its parent-death signal killed the command's PID 1, and the rest
		// of its PID namespace with it.
		z.retire()
		runErr = errors.New("the zygote exited while the command ran; the command was killed")
	} else if code := int(int32(binary.LittleEndian.Uint32(b[1:5]))); code != 0 {
		runErr = exitCodeError(code)
	}
	// The PID namespace is gone, so nothing holds the pipes; a bound all the same.
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	for i := 0; i < 2; i++ {
		select {
		case <-copied:
		case <-timer.C:
			outR.Close()
			errR.Close()
			<-copied
		}
	}
	return runErr, nil
}
