// Package sandbox runs agent commands in a child process confined by the kernel: Landlock applied
// in a re-executed helper (the massgen binary itself, see MaybeRunHelper), else bubblewrap, else
// nothing, and that only when the config says `command_sandbox: none`.
//
// A confined command has no capabilities (even under root), cannot gain any (no_new_privs),
// cannot connect to UNIX sockets outside or signal processes outside, and gets a minimal
// environment without massgen's secrets. What it sees of the file system:
//   - read and execute: the agent's readable roots and the system directories (SystemReadDirs);
//   - write: the agent's writable roots, minus the Keep paths under them (protected and
//     default-excluded paths), and a private temporary directory (TMPDIR, HOME) that is removed
//     afterwards. /tmp itself, the user's home and everything else are invisible.
//   - Keep paths (protected and default-excluded paths under writable roots) stay read-only and
//     Hide paths (private paths) are invisible. With Landlock, which cannot subtract from a
//     grant, they are carved out: every sibling entry along the way gets its own grant and the
//     directories leading to them are read-only (list-only above a Hide path), so a command
//     cannot create or remove entries directly in those directories. With bubblewrap, Keep
//     paths are read-only bind mounts and Hide paths are covered by empty mounts, with no such
//     restriction; so in "auto" mode bubblewrap is preferred (when installed) for commands whose
//     policy has Keep or Hide paths, and Landlock is used otherwise.
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Modes accepted in the config's command_sandbox.
const (
	ModeAuto       = "auto"
	ModeLandlock   = "landlock"
	ModeBubblewrap = "bubblewrap"
	ModeNone       = "none"
)

// helperArg is argv[1] of the re-executed helper.
const helperArg = "__massgen_sandbox_helper__"

// minLandlockABI: ABI 3 is the first that restricts truncate(2); below it a read-only file
// could still be emptied, so we treat older kernels as "no Landlock".
const minLandlockABI = 3

// SystemReadDirs are readable (and executable) for every command (for /dev: see
// readableDevices). /tmp is not among them:
// other agents' and users' temporary files live there; commands get a private TMPDIR instead.
// /run/systemd/resolve and /run/resolvconf are where /etc/resolv.conf often points.
var SystemReadDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/dev",
	"/run/systemd/resolve", "/run/resolvconf"}

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

// writableDevices are the device files every command may write to; readableDevices those it
// may read besides. The rest of /dev (terminals, kernel log, disks) is out of reach: bubblewrap
// mounts a fresh minimal /dev, Landlock grants these files only.
var (
	writableDevices = []string{"/dev/null", "/dev/zero", "/dev/full"}
	readableDevices = []string{"/dev/random", "/dev/urandom"}
)

// Policy is what the command may touch. Paths are absolute; they may be files or directories.
type Policy struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Keep are paths under Write roots that must stay read-only.
	Keep []string `json:"keep,omitempty"`
	// Hide are paths under any root that must be neither read nor written (private paths).
	Hide []string `json:"hide,omitempty"`
}

// Options is one command to run.
type Options struct {
	Mode    string // auto (default), landlock, bubblewrap, none
	Command string // run with /bin/sh -c
	Dir     string // working directory (must be readable)
	// DirHandle, when set, is the working directory opened by the file tools' walk (the one
	// the permission decision judged); the command starts there rather than at Dir resolved
	// again. Dir names it for messages. The caller closes it after Run.
	DirHandle *os.File
	Timeout   time.Duration
	// MaxOutput caps each of stdout and stderr (default 64 KiB).
	MaxOutput int
	Policy    Policy
	// Env is added to the minimal environment commands get (PATH, LANG, TERM, ...).
	Env []string
	// Executable is the helper binary (default os.Executable()); it must call MaybeRunHelper.
	Executable string
}

// Result is what happened.
type Result struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
	TimedOut  bool   `json:"timed_out"`
	Sandbox   string `json:"sandbox"`
	// Duration in milliseconds.
	DurationMS int64 `json:"duration_ms"`
}

// LandlockABI returns the kernel's Landlock ABI version (0: unavailable).
func LandlockABI() int { return landlockABI() }

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

// ValidMode reports whether mode is a known command_sandbox value ("" means auto).
func ValidMode(mode string) error {
	switch mode {
	case "", ModeAuto, ModeLandlock, ModeBubblewrap, ModeNone:
		return nil
	}
	return fmt.Errorf("command_sandbox: unknown mode %q (known: auto, landlock, bubblewrap, none)", mode)
}

// Effective returns the sandbox actually used for a configured mode ("" or "auto": Landlock if
// the kernel supports it, else bubblewrap), or an error saying why commands cannot run.
func Effective(mode string) (string, error) {
	switch mode {
	case "", ModeAuto:
		if LandlockABI() >= minLandlockABI {
			return ModeLandlock, nil
		}
		if BubblewrapPath() != "" {
			return ModeBubblewrap, nil
		}
		return "", errors.New("no command sandbox available: the kernel has no Landlock (ABI >= 3) and bubblewrap (bwrap) is not installed or cannot run; install bubblewrap, or set `command_sandbox: none` in the config to run commands unconfined (not recommended)")
	case ModeLandlock:
		if abi := LandlockABI(); abi < minLandlockABI {
			return "", fmt.Errorf("command_sandbox: landlock: the kernel's Landlock ABI is %d (need >= %d)", abi, minLandlockABI)
		}
		return ModeLandlock, nil
	case ModeBubblewrap:
		if BubblewrapPath() == "" {
			return "", errors.New("command_sandbox: bubblewrap: bwrap is not installed or cannot create a sandbox here (apt-get install bubblewrap)")
		}
		return ModeBubblewrap, nil
	case ModeNone:
		return ModeNone, nil
	}
	return "", fmt.Errorf("command_sandbox: unknown mode %q (known: auto, landlock, bubblewrap, none)", mode)
}

// Run runs o.Command confined by o.Policy. A non-zero exit is not an error; an error means the
// command could not be started (or no sandbox is available).
func Run(ctx context.Context, o Options) (Result, error) {
	mode, err := Effective(o.Mode)
	if err != nil {
		return Result{}, err
	}
	if (o.Mode == "" || o.Mode == ModeAuto) && mode == ModeLandlock && BubblewrapPath() != "" {
		// auto prefers bubblewrap whenever it works: it expresses read-only and hidden subtrees
		// of a writable root exactly (Landlock must carve, see carve), and its own PID namespace,
		// /proc and /dev keep a command from leaving processes behind with setsid, reading other
		// processes' command lines or reaching the user's terminals. It is also the way out for
		// a program that cannot re-execute itself as the Landlock helper.
		mode = ModeBubblewrap
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = 64 << 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	tmp, err := os.MkdirTemp("", "massgen-cmd-")
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: private temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)

	pol := o.Policy
	pol.Write = append(slices.Clone(pol.Write), tmp)
	pol.Hide = append(slices.Clone(pol.Hide), secretSystemFiles()...)
	env := baseEnv(tmp)
	env = append(env, o.Env...)

	var argv []string
	var seccompFile *os.File
	switch mode {
	case ModeLandlock:
		exe := o.Executable
		if exe == "" && !helperReady.Load() {
			return Result{}, errors.New("sandbox: this program does not call sandbox.MaybeRunHelper() first thing in main (or TestMain), so it cannot re-execute itself as the Landlock helper")
		}
		if exe == "" {
			if exe, err = os.Executable(); err != nil {
				return Result{}, fmt.Errorf("sandbox: locating the helper binary: %w", err)
			}
		}
		spec, err := json.Marshal(pol)
		if err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
		argv = []string{exe, helperArg, string(spec), "/bin/sh", "-c", o.Command}
	case ModeBubblewrap:
		// The same seccomp filter as the Landlock helper (no UNIX sockets: bwrap shares the
		// network namespace, where abstract sockets live), passed to bwrap as fd 3.
		filter, err := seccompBytes()
		if err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
		fp := filepath.Join(tmp, ".seccomp")
		if err := os.WriteFile(fp, filter, 0o600); err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
		if seccompFile, err = os.Open(fp); err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
		defer seccompFile.Close()
		os.Remove(fp)
		argv = append([]string{BubblewrapPath(), "--seccomp", "3"}, bwrapArgs(pol, o.Dir)...)
		argv = append(argv, "--", "/bin/sh", "-c", o.Command)
	case ModeNone:
		argv = []string{"/bin/sh", "-c", o.Command}
	}

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	stdout := &capped{max: o.MaxOutput}
	stderr := &capped{max: o.MaxOutput}
	// No PID namespace for the Landlock helper: Go's all-threads syscalls (used to restrict
	// every thread) find the threads through /proc/<getpid()>/task, and as pid 1 of a new
	// namespace with the host's /proc that is the host's init. The process-group kill after the
	// command is the fallback; a command can leave the group with setsid (it stays confined).
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = o.Dir
	cmd.Env = env
	// Own process group, so a timeout kills the command and everything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	// If a grandchild escaped the group and keeps the pipes open, stop waiting for it.
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Stdin = nil
	if seccompFile != nil {
		cmd.ExtraFiles = []*os.File{seccompFile}
	}

	start := time.Now()
	runErr := cmd.Start()
	if runErr == nil {
		runErr = cmd.Wait()
		// Whatever the command left running in its process group (`sleep 100 &`) goes too:
		// it could otherwise keep writing after the call returned, into the next phase.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := Result{
		Stdout:     stdout.buf.String(),
		Stderr:     stderr.buf.String(),
		Truncated:  stdout.truncated || stderr.truncated,
		Sandbox:    mode,
		DurationMS: time.Since(start).Milliseconds(),
	}
	switch ctx.Err() {
	case context.DeadlineExceeded:
		res.TimedOut = true
		res.ExitCode = -1
		return res, nil
	case context.Canceled: // the run was cancelled: the command was killed with its group
		res.ExitCode = -1
		return res, fmt.Errorf("sandbox: command cancelled: %w", context.Canceled)
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			res.ExitCode = ee.ExitCode()
			if res.ExitCode == -1 { // killed by a signal
				res.ExitCode = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
			}
			return res, nil
		}
		if errors.Is(runErr, exec.ErrWaitDelay) {
			return res, nil
		}
		if ctx.Err() != nil {
			return res, fmt.Errorf("sandbox: %w", ctx.Err())
		}
		return res, fmt.Errorf("sandbox: starting %s: %w", argv[0], runErr)
	}
	return res, nil
}

// needsCarve reports whether a Keep or Hide path lies under a root the policy grants, i.e.
// whether Landlock would have to carve (see carve).
func needsCarve(p Policy) bool {
	for _, k := range p.Keep {
		for _, w := range p.Write {
			if under(filepath.Clean(k), filepath.Clean(w)) {
				return true
			}
		}
	}
	for _, h := range p.Hide {
		for _, r := range append(slices.Clone(p.Read), p.Write...) {
			if under(filepath.Clean(h), filepath.Clean(r)) {
				return true
			}
		}
	}
	return false
}

// baseEnv is the environment commands get: no API keys or other secrets of the parent.
func baseEnv(tmp string) []string {
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	if p, ok := os.LookupEnv("PATH"); ok && p != "" {
		path = p // not a secret; directories the command cannot read are simply not found
	}
	env := []string{"PATH=" + path, "HOME=" + tmp, "TMPDIR=" + tmp}
	for _, k := range []string{"LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// capped keeps the first max bytes written and remembers whether more came.
type capped struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

// bwrapArgs builds the bubblewrap mount table: system dirs read-only, read roots
// read-only, write roots read-write, Keep paths read-only again (later mounts win).
func bwrapArgs(p Policy, dir string) []string {
	// --cap-drop ALL: run as root, bwrap would otherwise keep every capability in the sandbox.
	args := []string{"--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL",
		"--proc", "/proc", "--dev", "/dev"}
	for _, d := range SystemReadDirs {
		if d == "/proc" || d == "/dev" {
			continue
		}
		if _, err := os.Lstat(d); err != nil {
			continue
		}
		if t, err := os.Readlink(d); err == nil { // /bin -> usr/bin on merged-/usr systems
			args = append(args, "--symlink", t, d)
			continue
		}
		args = append(args, "--ro-bind", d, d)
	}
	type mount struct {
		path string
		rw   bool
	}
	var ms []mount
	for _, r := range p.Read {
		ms = append(ms, mount{r, false})
	}
	for _, w := range p.Write {
		ms = append(ms, mount{w, true})
	}
	for _, k := range p.Keep {
		ms = append(ms, mount{k, false})
	}
	// Shallower first, so a deeper mount always wins: nested roots override their parents,
	// Keep paths override the roots they are in, and a Write root inside a Keep path (the
	// workspace in <project>/.massgen/workspaces/ when the project is a writable context path)
	// stays writable. At equal depth the Keep path (listed last) wins.
	slices.SortStableFunc(ms, func(a, b mount) int { return depth(a.path) - depth(b.path) })
	for _, m := range ms {
		if _, err := os.Lstat(m.path); err != nil {
			continue
		}
		if m.rw {
			args = append(args, "--bind", m.path, m.path)
		} else {
			args = append(args, "--ro-bind", m.path, m.path)
		}
	}
	// Writes anywhere else fail instead of landing in bwrap's throwaway root tmpfs. /tmp is not
	// mounted: the private temp dir (a Write root) is the only writable place outside the roots.
	args = append(args, "--remount-ro", "/")
	for _, h := range p.Hide {
		inRoot := false
		for _, m := range ms {
			inRoot = inRoot || under(filepath.Clean(h), filepath.Clean(m.path))
		}
		for _, d := range SystemReadDirs {
			inRoot = inRoot || d != "/proc" && d != "/dev" && under(filepath.Clean(h), d)
		}
		if !inRoot {
			continue // not mounted, so not visible: nothing to cover (and / is read-only now)
		}
		fi, err := os.Lstat(h)
		switch {
		case err != nil:
		case fi.IsDir():
			args = append(args, "--tmpfs", h, "--remount-ro", h)
		default:
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	if dir != "" {
		args = append(args, "--chdir", dir)
	}
	return args
}

func depth(p string) int { return strings.Count(filepath.Clean(p), string(filepath.Separator)) }

// under reports whether p is root or inside it (both clean and absolute).
func under(p, root string) bool {
	if p == root {
		return true
	}
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, root+"/")
}
