//go:build darwin

package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/seatbelt"
)

// seatbeltSecretFiles are the root-only files of the system directories (password hashes, sudo
// rules, SSH host keys), hidden when massgen runs as root: a command keeps massgen's uid.
func seatbeltSecretFiles() []string {
	if os.Geteuid() != 0 {
		return nil
	}
	var out []string
	for _, p := range []string{"/private/etc/master.passwd", "/private/etc/sudoers", "/private/etc/sudoers.d"} {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	keys, _ := filepath.Glob("/private/etc/ssh/ssh_host_*_key")
	return append(out, keys...)
}

// pcCaseSensitive is _PC_CASE_SENSITIVE of <sys/unistd.h>: pathconf says 0 on a volume that
// compares names without case.
const pcCaseSensitive = 11

// caseInsensitive reports whether any of the roots lies on a case-insensitive volume. When
// pathconf cannot tell, the answer is yes: case-folded carve-outs are only ever wider.
func caseInsensitive(roots []string) bool {
	for _, r := range roots {
		if v, err := unix.Pathconf(r, pcCaseSensitive); err != nil || v == 0 {
			return true
		}
	}
	return false
}

// PlanNetwork is the network commands get under sandbox (command_sandbox) for netMode
// (command_network.mode; "" is none): Seatbelt denies every network operation, but, in
// allowlist mode, connecting to massgen's proxy on localhost.
func PlanNetwork(sandbox Mode, netMode NetworkMode) NetworkPlan {
	p, _, done := planCommon(sandbox, netMode)
	if done {
		return p
	}
	if p.Mode == NetworkAllowlist {
		p.How = "Seatbelt (deny network*) but connections to massgen's proxy on localhost, which lets through the hosts of allowed_domains"
	} else {
		p.How = "Seatbelt (deny network*): no connection, no bind, no name resolution"
	}
	return p
}

// seatbeltArgv is the sandbox-exec command line that runs command under pol, plus the private
// temporary directory tmp (writable, the agent's own), with the network netMode (the proxy on
// localhost:proxyPort in allowlist mode).
func seatbeltArgv(pol Policy, tmp, command string, netMode NetworkMode, proxyPort int) ([]string, error) {
	sp := seatbelt.Policy{
		Read:      pol.Read,
		Write:     append(slices.Clone(pol.Write), tmp),
		Keep:      pol.Keep,
		Hide:      append(slices.Clone(pol.Hide), seatbeltSecretFiles()...),
		Own:       append(slices.Clone(pol.Own), tmp),
		Network:   netMode,
		ProxyPort: proxyPort,
	}
	sp.CaseInsensitive = caseInsensitive(slices.Concat(sp.Read, sp.Write))
	prof, err := seatbelt.Generate(sp)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return seatbelt.Command(prof, "/bin/sh", "-c", command), nil
}

// runSeatbelt is Run on macOS: the command in its own process group under sandbox-exec; the
// group is killed when the command ends (a process that left it with setsid stays confined but
// is not reached: macOS has no subreaper).
// limitsOnce: that limits are not enforced here is said once per process.
var limitsOnce sync.Once

func runSeatbelt(ctx context.Context, o Options) (Result, error) {
	mode, err := Effective(o.Mode)
	if err != nil {
		return Result{}, err
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = 64 << 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.Log != nil {
		limitsOnce.Do(func() {
			o.Log.Warn("command limits (command_limits) are not enforced on macOS: a command's memory, processes, CPU time and file size are bounded only by the system's own limits")
		})
	}
	tmp, err := os.MkdirTemp("", "massgen-cmd-")
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: private temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	// $TMPDIR is under /var/folders, a link to /private/var/folders: Seatbelt sees the latter.
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		return Result{}, fmt.Errorf("sandbox: private temp dir: %w", err)
	}
	ReportNetwork(o.Mode, o.Network.Mode, o.Log)
	netMode := PlanNetwork(o.Mode, o.Network.Mode).Mode
	env := append(baseEnv(tmp), o.Env...)
	proxyPort := 0
	if netMode == NetworkAllowlist {
		// The proxy listens on massgen's loopback, one listener per command: the profile lets
		// the command connect to its port only.
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return Result{Sandbox: mode}, fmt.Errorf("sandbox: the command network's proxy: %w", err)
		}
		proxy := newCommandProxy(o.Network, o.Log)
		if proxy.log == nil {
			proxy.log = zap.NewNop()
		}
		proxy.serve(ln)
		defer proxy.stop()
		proxyPort = ln.Addr().(*net.TCPAddr).Port
		env = append(env, proxyEnv(proxyPort, o.Network.Allow)...)
	}
	argv := []string{"/bin/sh", "-c", o.Command}
	if mode == ModeSeatbelt {
		if argv, err = seatbeltArgv(o.Policy, tmp, o.Command, netMode, proxyPort); err != nil {
			return Result{Sandbox: mode}, err
		}
	}

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	stdout := &capped{max: o.MaxOutput}
	stderr := &capped{max: o.MaxOutput}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = o.Dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdout, cmd.Stderr = stdout, stderr

	start := time.Now()
	runErr := cmd.Start()
	if runErr == nil {
		runErr = cmd.Wait()
		// What the command left running in its group (`sleep 100 &`) goes with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := Result{
		Stdout:     stdout.buf.String(),
		Stderr:     stderr.buf.String(),
		Truncated:  stdout.truncated || stderr.truncated,
		Sandbox:    mode,
		DurationMS: time.Since(start).Milliseconds(),
	}
	res, err = outcome(ctx, res, runErr, argv[0])
	res.Network = netMode
	addNetworkHint(&res, netMode, o.Command)
	return res, err
}
