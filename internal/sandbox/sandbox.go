// Package sandbox runs agent commands in a child process confined by the kernel, and cleans up
// after them: bubblewrap; else the namespaces mode (the same view built in new namespaces,
// then Landlock: on a thread of massgen as root, in one long-lived helper process per massgen,
// the zygote, otherwise, or in a helper re-executed per command, both the massgen binary
// itself, see MaybeRunHelper); else Landlock alone; else nothing, and that only when the config says
// `command_sandbox: none`.
//
// Every sandbox is built from descriptors, never from path strings resolved twice: each path of
// the policy is opened once (O_PATH|O_NOFOLLOW, component by component, refusing symbolic
// links on the way), and the bind mounts, Landlock rules and the clean-up after the command all
// act on those handles. A symbolic link where a protected entry stands is protected as the link
// itself, never followed.
//
// A confined command has no network but through massgen's proxy, and only when its policy
// allows hosts (Network: a network namespace of its own, or Landlock's TCP rules; see
// network.go), no capabilities (even under root), cannot gain any (no_new_privs),
// cannot connect to UNIX sockets outside, signal processes outside, set setuid/setgid bits or
// use SysV IPC with processes outside, and gets a minimal environment without massgen's secrets.
// The seccomp filter refuses it what a container runtime refuses its workloads (the kernel
// keyrings, io_uring, eBPF, mounts, new namespaces...: internal/confine), and its memory,
// processes, CPU time and file size are bounded (Limits; limits_linux.go).
// What it sees of the file system:
//   - read and execute: the agent's readable roots and the system directories (SystemReadDirs);
//   - write: the agent's writable roots, minus the Keep paths under them (protected and
//     default-excluded paths), and a private temporary directory (TMPDIR, HOME) that is removed
//     afterwards. /tmp itself, the user's home and everything else are invisible.
//   - Keep paths stay read-only and their ancestors cannot be renamed; Hide paths (private
//     paths) are neither readable nor listable, except roots nested in them (the agent's own
//     workspace and temp workspace under .massgen/), which stay visible.
//
// After the command, .git, .env and .massgen entries it created in a writable root that is
// not the agent's own are moved to the trash (or removed), and Keep paths it managed to
// replace (a symbolic link Keep path, which bubblewrap cannot mount over) are put back.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen/internal/layout"
	"go.uber.org/zap"
)

// SystemReadDirs are readable (and executable) for every command (for /dev: bubblewrap mounts a
// minimal one, Landlock grants a few device files, see internal/confine). /tmp is not among them:
// other agents' and users' temporary files live there; commands get a private TMPDIR instead.
// /run/systemd/resolve and /run/resolvconf are where /etc/resolv.conf often points.
var SystemReadDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/dev",
	"/run/systemd/resolve", "/run/resolvconf"}

// Policy is what the command may touch. Paths are absolute and clean; roots and Hide paths are
// resolved (no symbolic link on the way), Keep paths have a resolved parent and may themselves
// be symbolic links (protected as links). They may be files or directories.
type Policy struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Keep are paths under Write roots that must stay read-only.
	Keep []string `json:"keep,omitempty"`
	// Hide are paths under any root that must be neither read, written nor listed (private
	// paths). Roots nested in a Hide path stay visible: the deeper entry decides.
	Hide []string `json:"hide,omitempty"`
	// Own are Write roots that belong to the agent (its workspace): .git, .env and .massgen
	// may be created there. Everywhere else under Write they are removed after the command.
	Own []string `json:"own,omitempty"`
}

// Options is one command to run.
type Options struct {
	Mode    Mode   // "" is auto
	Command string // run with /bin/sh -c
	// Dir is the working directory; DirHandle, when set, is the same directory already opened
	// by the caller (O_PATH or O_RDONLY): the command starts in that directory, whatever Dir
	// names now.
	Dir       string
	DirHandle *os.File
	Timeout   time.Duration
	// MaxOutput caps each of stdout and stderr (default 64 KiB).
	MaxOutput int
	Policy    Policy
	// Env is added to the minimal environment commands get (PATH, LANG, TERM, ...).
	Env []string
	// Executable is the helper binary (default os.Executable()); it must call MaybeRunHelper.
	// Run as root on Linux 6.18 or later, the namespaces mode needs no helper.
	Executable string
	// viaHelper: the namespaces mode uses the helper even where it is not needed (tests of
	// the helper's path as root).
	viaHelper bool
	// Trash, when set, receives what the clean-up removes from a writable root (the run's
	// trash): the entry name in the opened directory dir, and its path for the record. It
	// returns a trash id. Without it such entries are deleted (and reported).
	Trash func(dir *os.File, name, path string) (string, error)
	// Log receives the details of sandbox set-up failures (paths included), which never reach
	// the command's result. Nil: discarded.
	Log *zap.Logger
	// Limits bound the command's memory, processes, CPU time and file size (zero fields: the
	// defaults).
	Limits Limits
	// Network is what the command may reach (zero: nothing, see Network).
	Network Network
}

// Result is what happened.
type Result struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
	TimedOut  bool   `json:"timed_out"`
	Sandbox   Mode   `json:"sandbox"`
	// Duration in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// Removed lists the .git, .env and .massgen entries the command created in a writable
	// root that is not the agent's own (and Keep paths it created), which were taken away;
	// with a trash, as "path (trash id)".
	Removed []string `json:"removed_system_paths,omitempty"`
	// Restored lists Keep paths the command replaced or removed, which were put back.
	Restored []string `json:"restored_paths,omitempty"`
	// Limit says which of the command's limits it ran into ("killed: memory limit 2048 MiB",
	// "process limit 256 (...)"); "" when none.
	Limit string `json:"limit,omitempty"`
	// Network is the network the command had: none, allowlist (through massgen's proxy) or
	// open; "" where it was not confined (command_sandbox: none).
	Network NetworkMode `json:"network,omitempty"`
}

// systemNames are the default-excluded names whose mere creation in a user's directory is
// dangerous: .git (hooks and core.fsmonitor run code in the user's next git command), .env
// (read by the next massgen run: OPENAI_BASE_URL and friends) and .massgen (permissions.yaml:
// project rules of the next run). The kernel sandbox keeps existing ones read-only but cannot
// stop a command from creating a new one in a writable directory, so what a command created is
// taken away right after it.
func isSystemName(name string) bool {
	switch strings.ToLower(name) {
	case ".git", ".env", layout.DirName:
		return true
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

// withDefaults fills in the output cap (64 KiB per stream) and the timeout (2 minutes).
func (o *Options) withDefaults() {
	if o.MaxOutput <= 0 {
		o.MaxOutput = 64 << 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
}

// outcome completes res (output, sandbox and duration already in) from how the command ended:
// ctx is the run's context with its timeout, runErr what starting and waiting returned, prog
// what was started. A timeout is a result (TimedOut, exit -1); a cancelled run is an error; a
// non-zero exit is a result, with exitStatus's code.
func outcome(ctx context.Context, res Result, runErr error, prog string) (Result, error) {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		res.TimedOut, res.ExitCode = true, -1
		return res, nil
	case context.Canceled: // the run was cancelled: the command was killed with its tree
		res.ExitCode = -1
		return res, fmt.Errorf("sandbox: command cancelled: %w", context.Canceled)
	}
	var ee *exec.ExitError
	var code exitCodeError
	switch {
	case runErr == nil:
		return res, nil
	case errors.As(runErr, &ee):
		res.ExitCode = exitStatus(ee)
		return res, nil
	case errors.As(runErr, &code):
		res.ExitCode = int(code)
		return res, nil
	case errors.Is(runErr, exec.ErrWaitDelay):
		// A grandchild kept the pipes open after the command exited: it was killed with the
		// command's tree; the command itself succeeded.
		return res, nil
	}
	return res, fmt.Errorf("sandbox: starting %s: %w", prog, runErr)
}

// exitCodeError is a non-zero exit status reported by a process other than the command's
// parent (the namespaces zygote), as the shell reports it.
type exitCodeError int

func (e exitCodeError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
