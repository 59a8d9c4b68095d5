//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// How a command's limits (Limits) are enforced on Linux. The command's first process (the
// shell, bubblewrap's process in the sandbox, or the namespaces helper) is stopped before it
// runs anything, massgen (or the zygote, its parent there) applies the limits to it by pid, then
// lets it go; everything it starts inherits them:
//   - memory and processes: the command's cgroup (cgroup_linux.go), which bounds all its
//     processes together; else, per process, RLIMIT_DATA, and RLIMIT_NPROC where it counts the
//     command's processes only (a user namespace of its own: unprivileged bubblewrap, Landlock
//     and the namespaces helper; through the zygote the count is shared by the commands running
//     at the same time). The kernel does not apply RLIMIT_NPROC to root: as root without a
//     cgroup the process limit is not enforced (said once in the log).
//   - CPU time: RLIMIT_CPU per process (SIGXCPU, SIGKILL a second later);
//   - file size: RLIMIT_FSIZE per process (SIGXFSZ, or EFBIG where the signal is ignored);
//   - no core dumps (RLIMIT_CORE 0): a process killed at a limit would dump into the workspace.
// Where it stops: the shell reads a line on descriptor 3 before the command's first line
// (shellBarrier); bubblewrap waits on --block-fd; the helper waits for its spec.

// rlimitValue is one rlimit to set (sent to the zygote and the helper as JSON).
type rlimitValue = confine.Rlimit

// limitPlan is how one command's limits are enforced.
type limitPlan struct {
	lim     Limits
	rlimits []rlimitValue
	cg      *cmdCgroup
	nproc   bool // RLIMIT_NPROC bounds the processes
}

// shellBarrier is put before the command's first line (on that line, so the shell's line
// numbers and $0 stay the command's own): the shell waits for massgen to apply the limits. A
// shell that gets no go-ahead exits without running the command.
const shellBarrier = "read _ <&3 || exit 125; exec 3<&-; "

var rootNprocOnce sync.Once

// newLimitPlan decides how lim is enforced for one command; ownUserNS: the command gets a user
// namespace whose task count is its own (or the zygote's, shared). A cgroup that cannot be
// created is an error (the command is not run); no cgroup available here is not.
func newLimitPlan(lim Limits, ownUserNS bool, log *zap.Logger) (*limitPlan, error) {
	lim = lim.WithDefaults()
	if err := lim.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox: command limits: %w", err)
	}
	p := &limitPlan{lim: lim}
	if homes := cgroupsHere.get(); len(homes) > 0 {
		cg, err := cgroupsHere.acquire(lim)
		if err != nil {
			return nil, fmt.Errorf("sandbox: the command's cgroup: %w", err)
		}
		p.cg = cg
	}
	mem, pids := p.cg.has()
	mib := func(n int) uint64 { return uint64(n) << 20 }
	p.rlimits = []rlimitValue{
		{Res: unix.RLIMIT_CPU, Cur: uint64(lim.CPUSeconds), Max: uint64(lim.CPUSeconds) + 1},
		{Res: unix.RLIMIT_FSIZE, Cur: mib(lim.FileSizeMB), Max: mib(lim.FileSizeMB)},
		{Res: unix.RLIMIT_CORE, Cur: 0, Max: 0},
	}
	if !mem {
		p.rlimits = append(p.rlimits, rlimitValue{Res: unix.RLIMIT_DATA, Cur: mib(lim.MemoryMB), Max: mib(lim.MemoryMB)})
	}
	switch {
	case pids:
	case os.Geteuid() == 0:
		rootNprocOnce.Do(func() {
			log.Warn("command limits: no cgroup with the pids controller that massgen may use here, and the kernel does not apply RLIMIT_NPROC to root: the process limit is not enforced")
		})
	case ownUserNS:
		p.nproc = true
		p.rlimits = append(p.rlimits, rlimitValue{Res: unix.RLIMIT_NPROC, Cur: uint64(lim.Processes), Max: uint64(lim.Processes)})
	}
	// Never above what massgen itself may use (an unprivileged process cannot raise a hard
	// limit).
	for i, r := range p.rlimits {
		var cur unix.Rlimit
		if unix.Getrlimit(r.Res, &cur) == nil {
			p.rlimits[i].Max = min(r.Max, cur.Max)
			p.rlimits[i].Cur = min(r.Cur, p.rlimits[i].Max)
		}
	}
	return p, nil
}

// applyLimits applies rlimits to the process pid and moves it into the cgroups whose
// cgroup.procs files are open as procs.
func applyLimits(pid int, rlimits []rlimitValue, procs []int) error {
	for _, r := range rlimits {
		lim := unix.Rlimit{Cur: r.Cur, Max: r.Max}
		if err := unix.Prlimit(pid, r.Res, &lim, nil); err != nil {
			return fmt.Errorf("prlimit %d: %w", r.Res, err)
		}
	}
	for _, fd := range procs {
		if _, err := unix.Write(fd, []byte(strconv.Itoa(pid))); err != nil {
			return fmt.Errorf("joining the command's cgroup: %w", err)
		}
	}
	return nil
}

// procsFDs are the cgroup.procs files of the plan (none without a cgroup).
func (p *limitPlan) procsFDs() []int {
	if p == nil || p.cg == nil {
		return nil
	}
	return p.cg.procsFDs()
}

// release applies the plan to the stopped first process pid (child: massgen's own child, not
// waited for yet), then lets it go by writing to barrier (nil: the process waits elsewhere).
// On failure kill is called: the process never runs the command without its limits. A child
// that already ended (a shell that could not parse the command's first line) is no failure.
func (p *limitPlan) release(pid int, child bool, kill func(), barrier *os.File) error {
	return releaseLimited(pid, child, p.rlimits, p.procsFDs(), kill, barrier)
}

// releaseLimited is release with the plan's parts (the zygote receives them).
func releaseLimited(pid int, child bool, rlimits []rlimitValue, procs []int, kill func(), barrier *os.File) error {
	err := applyLimits(pid, rlimits, procs)
	if err != nil {
		if child && exited(pid) {
			err = nil
		} else {
			kill()
		}
	}
	if barrier != nil {
		if err == nil {
			barrier.Write([]byte("\n")) // EPIPE when the shell already ended
		}
		barrier.Close()
	}
	return err
}

// exited: the child pid has ended (not reaped yet: only its waiter reaps it, after release).
func exited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// verdict fills res.Limit from what the command ran into, then gives its cgroup back.
func (p *limitPlan) verdict(res *Result, log *zap.Logger) {
	if p == nil {
		return
	}
	hits := p.cg.hits()
	mem, pids := p.cg.has()
	cgroupsHere.release(p.cg, log)
	failed := res.ExitCode != 0 || res.TimedOut
	switch res.ExitCode {
	case 128 + int(syscall.SIGXCPU):
		hits = append(hits, limitHit{what: "CPU time", value: fmt.Sprintf("%d s", p.lim.CPUSeconds), killed: true})
	case 128 + int(syscall.SIGXFSZ):
		hits = append(hits, limitHit{what: "file size", value: fmt.Sprintf("%d MiB", p.lim.FileSizeMB), killed: true})
	}
	// Without a signal, a refused write, allocation or fork shows only in what the program
	// says: strerror's words, or Python's.
	said := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(res.Stderr, w) {
				return true
			}
		}
		return false
	}
	if failed && res.ExitCode != 128+int(syscall.SIGXFSZ) && said(unix.EFBIG.Error(), "File too large") {
		hits = append(hits, limitHit{what: "file size", value: fmt.Sprintf("%d MiB", p.lim.FileSizeMB), detail: "a write past it was refused"})
	}
	if failed && !mem && said(unix.ENOMEM.Error(), "Cannot allocate memory", "MemoryError", "out of memory", "bad_alloc") {
		hits = append(hits, limitHit{what: "memory", value: fmt.Sprintf("%d MiB per process", p.lim.MemoryMB), detail: "an allocation was refused"})
	}
	// A shell that could not fork says so and may carry on (a fork bomb in the background).
	forkFailed := said("Cannot fork", "can't fork", "fork: retry", "fork: Resource temporarily unavailable")
	if !pids && p.nproc && (forkFailed || failed && said(unix.EAGAIN.Error(), "Resource temporarily unavailable")) {
		hits = append(hits, limitHit{what: "process", value: strconv.Itoa(p.lim.Processes), detail: "a new process was refused"})
	}
	res.Limit = limitMessage(hits)
}

// close gives back the plan's cgroup when the command never ran (or its set-up failed).
func (p *limitPlan) close(log *zap.Logger) {
	if p != nil {
		p.cg.hits() // whatever happened is not the next command's
		cgroupsHere.release(p.cg, log)
	}
}
