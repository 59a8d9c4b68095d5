//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
	"github.com/massgen-go/massgen/internal/sysshell"
)

// secretSystemFiles are files in the system directories that only root can read (password
// hashes, sudo rules, SSH host keys, TLS private keys). A command keeps massgen's uid, so when
// massgen runs as root they would be readable despite the dropped capabilities: they are hidden
// then. (Other users cannot read them anyway.)
func secretSystemFiles() []string {
	if os.Geteuid() != 0 {
		return nil
	}
	var out []string
	for _, p := range []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
		"/etc/sudoers.d", "/etc/ssl/private", "/etc/security/opasswd"} {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
	return append(out, keys...)
}

// LandlockABI returns the kernel's Landlock ABI version (0: unavailable).
func LandlockABI() int { return confine.LandlockABI() }

// BubblewrapPath returns the bwrap binary, or "" when it is not installed or cannot create a
// sandbox here (e.g. user namespaces disabled).
func BubblewrapPath() string {
	bwrapOnce.Do(func() {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			return
		}
		// Probe: some containers have bwrap but forbid the namespaces it needs.
		cmd := exec.Command(p, "--ro-bind", "/", "/", "--unshare-pid", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true")
		if cmd.Run() == nil {
			bwrapPath = p
		}
	})
	return bwrapPath
}

var (
	bwrapOnce sync.Once
	bwrapPath string
)

// thisHost is this Linux machine, as Effective asks about it.
func thisHost() host {
	return host{goos: "linux",
		bubblewrap: func() bool { return BubblewrapPath() != "" },
		namespaces: NamespacesError,
		helper:     helperReady.Load,
		landlock: func() error {
			if abi := LandlockABI(); abi < minLandlockABI {
				return fmt.Errorf("the kernel's Landlock ABI is %d (need >= %d)", abi, minLandlockABI)
			}
			return nil
		},
	}
}

// NamespacesError says why the namespaces mode cannot run here (nil: it can): it needs
// Landlock (ABI >= 3) and, unless massgen runs as root, unprivileged user namespaces.
func NamespacesError() error {
	if abi := LandlockABI(); abi < minLandlockABI {
		return fmt.Errorf("the kernel's Landlock ABI is %d (need >= %d)", abi, minLandlockABI)
	}
	_, err := namespacesProbe.get()
	return err
}

// errSetup is what a command's caller sees when the sandbox could not be set up: the details
// (which may name private paths) go to the log only.
var errSetup = errors.New("sandbox: the command sandbox could not be set up (details in massgen's log); the command was not run")

// Run runs o.Command confined by o.Policy, then cleans up (see sweeper). A non-zero exit is
// not an error; an error means the command could not be started (or no sandbox is available).
func Run(ctx context.Context, o Options) (Result, error) {
	mode, err := Effective(o.Mode)
	if err != nil {
		return Result{}, err
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	o.withDefaults()
	tmp, err := os.MkdirTemp("", "massgen-cmd-")
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: private temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	env := append(baseEnv(tmp), o.Env...)
	ReportNetwork(o.Mode, o.Network.Mode, log)
	ns := &netSetup{mode: PlanNetwork(o.Mode, o.Network.Mode).Mode}
	defer ns.Close()
	hostPort := 0 // Landlock: the proxy's port on massgen's loopback
	if ns.mode == NetworkAllowlist {
		ns.proxy = newCommandProxy(o.Network, log)
		port := nsProxyPort
		if mode == ModeLandlock {
			if hostPort, err = ns.hostListener(); err != nil {
				log.Warn("sandbox set-up failed", zap.String("mode", string(mode)), zap.Error(err))
				return Result{Sandbox: mode}, errSetup
			}
			port = hostPort
		}
		env = append(env, proxyEnv(port, o.Network.Allow)...)
	}

	var (
		pf            passFiles
		argv          []string
		sw            *sweeper
		cmdDir        = o.Dir
		sysAttr       syscall.SysProcAttr
		confineThread func() error // Landlock, direct namespaces: confines the thread the command is forked from
		nss           *nsStart     // namespaces: the helper's spec and status
		zy            *zygote      // namespaces, unprivileged: the zygote that starts the command
		zreq          zygoteRequest
		zexe          string
		bws           *bwrapSync // bubblewrap: where the sandbox's first process waits for its limits
		// The command's first process is stopped until its limits are applied (limits_linux.go):
		// ownUserNS says whether it gets a user namespace whose task count is its own; shellWaits,
		// whether the shell itself waits (shellBarrier).
		ownUserNS, shellWaits bool
	)
	defer pf.Close()
	shellCmd := shellBarrier + o.Command
	if mode == ModeNone {
		argv, shellWaits = sysshell.UnixArgv(shellCmd), true
	} else {
		pol := o.Policy
		pol.Write = append(slices.Clone(pol.Write), tmp)
		pol.Own = append(slices.Clone(pol.Own), tmp)
		pl, err := buildPlan(pol, secretSystemFiles())
		if err != nil {
			return Result{Sandbox: mode}, err
		}
		defer pl.Close()
		sw = pl.inventory()
		dirfd := -1
		if o.DirHandle != nil {
			dirfd, err = unix.FcntlInt(o.DirHandle.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		} else {
			dirfd, err = openDirHandle(o.Dir)
		}
		if err != nil {
			return Result{Sandbox: mode}, fmt.Errorf("sandbox: opening the working directory: %w", err)
		}
		if dirfd >= 0 {
			defer unix.Close(dirfd)
		}
		cmdDir = "/" // the sandbox enters the directory from its handle
		switch mode {
		case ModeLandlock:
			// The command shares massgen's network namespace: Landlock's TCP rules and the
			// filter confine its sockets (network_linux.go).
			var lnet confine.LandlockNet
			fo := confine.FilterOpts{IPC: true, XAttr: true}
			switch ns.mode {
			case NetworkNone:
				fo.Net, lnet.Restrict = confine.NetNoSockets, LandlockABI() >= confine.MinLandlockNetABI
			case NetworkAllowlist:
				fo.Net, lnet = confine.NetTCPConfined, confine.LandlockNet{Restrict: true, ConnectPorts: []int{hostPort}}
			}
			var ruleset int
			if ruleset, err = pl.landlockRuleset(lnet); err != nil {
				break
			}
			defer unix.Close(ruleset)
			sysAttr, _ = landlockPIDNS.get()
			// The command is forked from the confined thread with the PID namespace's flags.
			fo.CloneNS = uint32(sysAttr.Cloneflags)
			confineThread = func() error { return confine.ConfineThread(ruleset, fo) }
			argv, shellWaits = []string{"/bin/sh", "-c", shellCmd}, true
			ownUserNS = sysAttr.Cloneflags&syscall.CLONE_NEWUSER != 0
			if dirfd >= 0 {
				// Entered in the child, whose descriptors are still a copy of ours.
				cmdDir = fmt.Sprintf("/proc/self/fd/%d", dirfd)
			}
		case ModeBubblewrap:
			argv, bws, err = bwrapArgv(o, pl, &pf, dirfd, ns)
			if bws != nil {
				defer bws.Close()
			}
			ownUserNS = os.Geteuid() != 0 // unprivileged, bubblewrap makes a user namespace
		case ModeNamespaces:
			if sysAttr, err = namespacesProbe.get(); err != nil {
				break
			}
			derr := namespacesDirect.get()
			if !o.viaHelper && derr == nil {
				// Built on a thread of ours, which forks the shell into its namespaces (see
				// nsdirect_linux.go): the shell starts in the directory the thread entered.
				var spec confine.Spec
				if spec, err = pl.nsSpec(dirfd); err != nil {
					break
				}
				spec.Net = ns.nsSpec()
				confineThread = directConfine(spec, ns.serveFD)
				sysAttr = syscall.SysProcAttr{}
				argv, shellWaits = []string{"/bin/sh", "-c", shellCmd}, true
				cmdDir = ""
				break
			}
			if !o.viaHelper {
				// Unprivileged: the same code, run by the zygote in its user namespace.
				var exe string
				if exe, err = helperExe(o); err != nil {
					break
				}
				if zy = zygotes.get(exe, log); zy != nil {
					zexe = exe
					// The zygote's shell waits for the zygote to apply the limits: their
					// task count is the zygote's user namespace's, shared.
					argv, ownUserNS = []string{"/bin/sh", "-c", shellCmd}, true
					zreq = zygoteRequest{Argv: argv, Env: env}
					zreq.Spec, err = pl.nsSpec(dirfd)
					zreq.Spec.Net = ns.nsSpec()
					break
				}
			}
			if derr != nil {
				log.Debug("namespaces mode: the view is built by a re-executed helper", zap.NamedError("why", derr))
			}
			argv, nss, err = namespacesArgv(o, pl, &pf, dirfd, ns)
			if nss != nil {
				defer nss.Close()
			}
			ownUserNS = sysAttr.Cloneflags&syscall.CLONE_NEWUSER != 0
			if ns.mode != NetworkOpen {
				sysAttr.Cloneflags |= syscall.CLONE_NEWNET
			}
		}
		if err != nil {
			log.Warn("sandbox set-up failed", zap.String("mode", string(mode)), zap.Error(err))
			return Result{Sandbox: mode}, errSetup
		}
	}

	lp, err := newLimitPlan(o.Limits, ownUserNS, log)
	if err != nil {
		log.Warn("sandbox set-up failed", zap.String("mode", string(mode)), zap.Error(err))
		return Result{Sandbox: mode}, errSetup
	}
	var barrier *os.File // massgen's end of the shell's go-ahead
	if shellWaits {
		if len(pf.files) != 0 {
			lp.close(log)
			return Result{Sandbox: mode}, errors.New("sandbox: the shell's go-ahead must be its descriptor 3")
		}
		r, w, err := os.Pipe()
		if err != nil {
			lp.close(log)
			return Result{Sandbox: mode}, err
		}
		pf.files, barrier = append(pf.files, r), w
		defer w.Close()
	}
	if zy != nil {
		zreq.Rlimits = lp.rlimits
	}

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	stdout := &capped{max: o.MaxOutput}
	stderr := &capped{max: o.MaxOutput}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = cmdDir
	cmd.Env = env
	// Own process group, so a timeout kills the command and everything it started (and, for
	// Landlock, its own PID namespace where allowed, so nothing outlives it).
	sysAttr.Setpgid, sysAttr.Pdeathsig = true, syscall.SIGKILL
	cmd.SysProcAttr = &sysAttr
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	// If a grandchild escaped the group and keeps the pipes open, stop waiting for it.
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = pf.files

	start := time.Now()
	var runErr, setupErr error
	wait := cmd.Wait
	if zy != nil {
		runErr, setupErr = zy.run(ctx, zreq, lp.procsFDs(), stdout, stderr, ns.serveFD)
		if errors.Is(setupErr, errZygoteUnsent) {
			// It died before this request: nothing started. A new one takes it, or, when
			// none can start (recorded: no zygote is tried again), the helper does.
			if zy = zygotes.get(zexe, log); zy == nil {
				pf.Close()
				lp.close(log)
				ns.Close()
				return Run(ctx, o)
			}
			runErr, setupErr = zy.run(ctx, zreq, lp.procsFDs(), stdout, stderr, ns.serveFD)
		}
		pf.Close()
		return finish(ctx, o, log, mode, sw, lp, ns, stdout, stderr, start, runErr, setupErr, argv[0])
	}
	killGroup := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if confineThread != nil {
		wait, setupErr, runErr = startConfined(cmd, confineThread, func(p *os.Process) error {
			return lp.release(p.Pid, true, killGroup, barrier)
		})
	} else {
		runErr = cmd.Start()
	}
	pf.Close() // the child has its copies
	started := runErr == nil && (confineThread == nil || setupErr == nil)
	if started && ns.parent != nil {
		ns.receive() // the proxy's listener, from bubblewrap's relay or the helper
	}
	if started {
		switch {
		case confineThread != nil: // released on its thread
		case bws != nil:
			// The sandbox's first process (bubblewrap's child, blocked on --block-fd).
			// When bubblewrap failed before it, it said why on stderr (bwrapFailed).
			pid, err := bws.childPID()
			if err == nil {
				err = lp.release(pid, false, killGroup, bws.block)
			} else {
				killGroup() // at EOF on --block-fd it would go on
			}
			setupErr = err
		case nss != nil:
			// The helper (waiting for its spec) joins the cgroup now and sets the rlimits
			// itself when it executes the command.
			nss.spec.Rlimits = lp.rlimits
			setupErr = releaseLimited(cmd.Process.Pid, true, nil, lp.procsFDs(), killGroup, nil)
		default: // the shell, waiting on its barrier
			setupErr = lp.release(cmd.Process.Pid, true, killGroup, barrier)
		}
		if nss != nil && setupErr == nil {
			setupErr = nss.wait()
		}
		runErr = wait()
		// Whatever the command left running in its process group (`sleep 100 &`) goes too:
		// it could otherwise keep writing after the call returned, into the next phase.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return finish(ctx, o, log, mode, sw, lp, ns, stdout, stderr, start, runErr, setupErr, argv[0])
}

// finish makes the result of a command that ended (or whose set-up failed), and cleans up
// after it.
func finish(ctx context.Context, o Options, log *zap.Logger, mode Mode, sw *sweeper, lp *limitPlan, ns *netSetup, stdout, stderr *capped, start time.Time,
	runErr, setupErr error, prog string) (Result, error) {
	res := Result{
		Stdout:     stdout.buf.String(),
		Stderr:     stderr.buf.String(),
		Truncated:  stdout.truncated || stderr.truncated,
		Sandbox:    mode,
		DurationMS: time.Since(start).Milliseconds(),
	}
	if setupErr != nil || mode == ModeBubblewrap && bwrapFailed(runErr, res.Stderr) {
		log.Warn("sandbox set-up failed", zap.String("mode", string(mode)), zap.Error(setupErr), zap.String("stderr", res.Stderr))
		lp.close(log)
		return Result{Sandbox: mode}, errSetup
	}
	if sw != nil {
		sw.after(&res, o.Trash, log)
	}
	res, err := outcome(ctx, res, runErr, prog)
	lp.verdict(&res, log)
	res.Network = ns.mode
	addNetworkHint(&res, ns.mode, o.Command)
	return res, err
}

// bwrapArgv is bubblewrap's command line: fd 3 the seccomp filter, then the plan's handles,
// then the pipes of bs.
func bwrapArgv(o Options, pl *plan, pf *passFiles, dirfd int, ns *netSetup) (argv []string, bs *bwrapSync, err error) {
	// The seccomp filter (no UNIX sockets: with command_network open bwrap shares the
	// network namespace, where abstract sockets live; TCP only otherwise), passed to bwrap as
	// fd 3. SysV IPC has its own namespace here.
	filter, err := confine.FilterBytes(confine.FilterOpts{Net: ns.nsFilter()})
	if err != nil {
		return nil, nil, err
	}
	mfd, err := unix.MemfdCreate("massgen-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, err
	}
	f := os.NewFile(uintptr(mfd), "seccomp")
	pf.files = append(pf.files, f) // fd 3
	if _, err := f.Write(filter); err != nil {
		return nil, nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	args, err := pl.bwrapArgs(pf)
	if err != nil {
		return nil, nil, err
	}
	argv = append([]string{BubblewrapPath(), "--seccomp", "3"}, args...)
	if dirfd >= 0 {
		// bwrap has no --chdir-fd; a /proc/self/fd path would put the command's working
		// directory outside the new root (a chroot escape through ".."), so the directory is
		// entered by where its handle is now. The mounts, not the directory, confine.
		p, err := fdPath(dirfd)
		if err != nil {
			return nil, nil, err
		}
		argv = append(argv, "--chdir", p)
	}
	bs, infoFD, blockFD, err := newBwrapSync(pf)
	if err != nil {
		return nil, nil, err
	}
	argv = append(argv, "--info-fd", strconv.Itoa(infoFD), "--block-fd", strconv.Itoa(blockFD))
	if ns.mode != NetworkOpen {
		argv = append(argv, "--unshare-net")
	}
	argv = append(argv, "--")
	if ns.mode == NetworkAllowlist {
		// The sandbox's first program is massgen itself (from a descriptor: its file is not
		// in the sandbox's view), as the relay: it makes the proxy's listener in the new
		// namespace, hands it over the bridge and execs the shell (confine.NetRelayArg).
		relay, err := bwrapRelay(o, pf, ns)
		if err != nil {
			return nil, nil, err
		}
		argv = append(argv, relay...)
	}
	return append(argv, "/bin/sh", "-c", o.Command), bs, nil
}

// bwrapRelay is the start of bubblewrap's command in allowlist mode: massgen's binary run from a
// descriptor passed to the sandbox, as the relay, with the bridge's end.
func bwrapRelay(o Options, pf *passFiles, ns *netSetup) ([]string, error) {
	exe, err := helperExe(o)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoRelay, err)
	}
	fd, err := unix.Open(exe, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoRelay, err)
	}
	exeFD := pf.own(fd)
	if err := ns.bridge(); err != nil {
		return nil, err
	}
	child := ns.child
	ns.child = nil
	pf.files = append(pf.files, child)
	sockFD := 2 + len(pf.files)
	return []string{fmt.Sprintf("/proc/self/fd/%d", exeFD), confine.NetRelayArg, strconv.Itoa(sockFD), strconv.Itoa(nsProxyPort)}, nil
}

// bwrapSync is how the sandbox's first process waits for its limits: bubblewrap writes its pid
// (as massgen sees it) on the info pipe, then, once the sandbox is built, waits for a byte on
// the block pipe before it starts the command (limits_linux.go).
type bwrapSync struct {
	info  *os.File // massgen reads
	block *os.File // massgen writes
}

// newBwrapSync makes the pipes, passing bubblewrap its ends (their descriptor numbers there).
func newBwrapSync(pf *passFiles) (bs *bwrapSync, infoFD, blockFD int, err error) {
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, 0, 0, err
	}
	blockR, blockW, err := os.Pipe()
	if err != nil {
		infoR.Close()
		infoW.Close()
		return nil, 0, 0, err
	}
	pf.files = append(pf.files, infoW)
	infoFD = 2 + len(pf.files)
	pf.files = append(pf.files, blockR)
	return &bwrapSync{info: infoR, block: blockW}, infoFD, 2 + len(pf.files), nil
}

// childPID reads bubblewrap's info: the pid of the sandbox's first process. Call it once
// bubblewrap started and massgen's copies of its ends are closed.
func (b *bwrapSync) childPID() (int, error) {
	data, err := io.ReadAll(io.LimitReader(b.info, 64<<10))
	if err != nil {
		return 0, err
	}
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.Unmarshal(data, &info); err != nil || info.ChildPID <= 0 {
		return 0, fmt.Errorf("bubblewrap's info: %q", data)
	}
	return info.ChildPID, nil
}

func (b *bwrapSync) Close() {
	b.info.Close()
	b.block.Close()
}

// bwrapFailed: bubblewrap itself failed (before the command ran): it exits 1 with its own
// "bwrap: " message.
func bwrapFailed(runErr error, stderr string) bool {
	var ee *exec.ExitError
	return errors.As(runErr, &ee) && ee.ExitCode() == 1 && strings.HasPrefix(stderr, "bwrap: ")
}
