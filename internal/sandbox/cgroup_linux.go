//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// Per-command cgroups. A command's processes are bounded together (memory, number of tasks)
// only by a cgroup: rlimits are per process, and the kernel does not apply RLIMIT_NPROC to
// root at all. massgen creates one cgroup per command where it may:
//   - cgroup v2: next to its own cgroup, in the nearest ancestor that already hands the memory
//     and pids controllers to its children and that massgen may write (root, or a delegated
//     subtree such as systemd's user@UID.service); its own cgroup cannot be used, as a cgroup
//     with processes cannot enable controllers for its children;
//   - cgroup v1 (hybrid systems, as root): a child of its own cgroup in the memory and pids
//     hierarchies.
// The command's first process joins before it runs anything (see limitPlan), so everything it
// starts is inside. Where neither exists, the limits fall back to rlimits (limits_linux.go).
// Creating and removing a cgroup costs more than starting a command (a memory cgroup above
// all), so a cgroup a command left empty is kept for the next one (its event counters are
// read as differences); those massgen leaves behind when it exits are removed by the next
// massgen that looks (usableHome).

// cgroupHome is a directory where one cgroup per command is created, and which of the
// controllers the cgroups created there have.
type cgroupHome struct {
	dir       string
	v2        bool
	mem, pids bool
}

// cgroupHomes is the detection, done once per process, and the idle cgroups.
type cgroupHomes struct {
	once  sync.Once
	homes []cgroupHome
	seq   atomic.Uint64
	mu    sync.Mutex
	idle  []*cmdCgroup
}

// maxIdleCgroups bounds the cgroups kept for reuse (about the commands that run at once).
const maxIdleCgroups = 8

// acquire returns an empty cgroup with the limits lim: an idle one, else a new one.
func (c *cgroupHomes) acquire(lim Limits) (*cmdCgroup, error) {
	c.mu.Lock()
	var cg *cmdCgroup
	if n := len(c.idle); n > 0 {
		cg, c.idle = c.idle[n-1], c.idle[:n-1]
	}
	c.mu.Unlock()
	if cg != nil && !cg.exists() {
		cg.remove(nil) // removed by someone else (another massgen's clean-up): a new one
		cg = nil
	}
	if cg != nil && cg.lim != lim {
		for _, d := range cg.dirs {
			if err := d.setLimits(lim); err != nil {
				cg.remove(nil) // a new one, then
				cg = nil
				break
			}
		}
	}
	if cg == nil {
		return newCmdCgroup(c.get(), lim)
	}
	cg.lim = lim
	return cg, nil
}

// release keeps cg for the next command once the command's processes have left it, else
// removes it. What is still in it is killed at once; waiting for the kernel to be done with
// those processes (bubblewrap's first process may still be exiting when bubblewrap itself has
// ended) happens in the background.
func (c *cgroupHomes) release(cg *cmdCgroup, log *zap.Logger) {
	if cg == nil || len(cg.dirs) == 0 {
		return
	}
	if cg.empty() {
		c.keep(cg, log)
		return
	}
	cg.kill()
	go func() {
		delay := 100 * time.Microsecond
		for i := 0; i < 12 && !cg.empty(); i++ {
			time.Sleep(delay)
			delay *= 2
			cg.kill()
		}
		if cg.empty() {
			c.keep(cg, log)
		} else {
			cg.remove(log)
		}
	}()
}

// keep puts the empty cg with the idle ones, or removes it when there are enough.
func (c *cgroupHomes) keep(cg *cmdCgroup, log *zap.Logger) {
	c.mu.Lock()
	if len(c.idle) < maxIdleCgroups {
		c.idle = append(c.idle, cg)
		cg = nil
	}
	c.mu.Unlock()
	cg.remove(log)
}

var cgroupsHere cgroupHomes

func (c *cgroupHomes) get() []cgroupHome {
	c.once.Do(func() { c.homes = findCgroupHomes("/proc/self/mountinfo", "/proc/self/cgroup") })
	return c.homes
}

// mountPoint is a cgroup file system mount of mountinfo.
type mountPoint struct {
	root, dir string
	v2        bool
	ctrls     []string // v1: the controllers of the hierarchy
}

// cgroupMounts lists the cgroup mounts in mountinfo.
func cgroupMounts(mountinfo []byte) []mountPoint {
	var out []mountPoint
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := mountPoint{root: unescapeMount(f[3]), dir: unescapeMount(f[4])}
		switch g[0] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			m.ctrls = strings.Split(g[2], ",")
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups parses /proc/self/cgroup: the v2 path ("" when none) and the v1 path of each
// controller.
func ownCgroups(data []byte) (v2 string, v1 map[string]string) {
	v1 = map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			v1[c] = parts[2]
		}
	}
	return v2, v1
}

// inMount is the directory of cgroup path p under mount m ("" when the mount does not show it).
func inMount(m mountPoint, p string) string {
	rel, ok := strings.CutPrefix(p, m.root)
	if !ok || m.root != "/" && rel != "" && rel[0] != '/' {
		return ""
	}
	return filepath.Join(m.dir, rel)
}

// findCgroupHomes finds where per-command cgroups can be created (see the top of the file).
// memory and pids each come from the first home that has them: v2 first.
func findCgroupHomes(mountinfoPath, cgroupPath string) []cgroupHome {
	mi, err := os.ReadFile(mountinfoPath)
	if err != nil {
		return nil
	}
	cg, err := os.ReadFile(cgroupPath)
	if err != nil {
		return nil
	}
	v2path, v1paths := ownCgroups(cg)
	var homes []cgroupHome
	var haveMem, havePids bool
	mounts := cgroupMounts(mi)
	for _, m := range mounts {
		if !m.v2 || v2path == "" {
			continue
		}
		own := inMount(m, v2path)
		if own == "" {
			continue
		}
		// The nearest ancestor (or the root itself) whose children get the controllers.
		for d := own; strings.HasPrefix(d, m.dir); d = filepath.Dir(d) {
			b, err := os.ReadFile(filepath.Join(d, "cgroup.subtree_control"))
			if err == nil {
				ctrls := strings.Fields(string(b))
				h := cgroupHome{dir: d, v2: true, mem: contains(ctrls, "memory"), pids: contains(ctrls, "pids")}
				if (h.mem || h.pids) && usableHome(d) {
					homes = append(homes, h)
					haveMem, havePids = h.mem, h.pids
				}
				if h.mem || h.pids {
					break // the nearest one decides: farther ones are not ours to use
				}
			}
			if d == m.dir {
				break
			}
		}
		break
	}
	for _, c := range []string{"memory", "pids"} {
		if c == "memory" && haveMem || c == "pids" && havePids {
			continue
		}
		for _, m := range mounts {
			if m.v2 || !contains(m.ctrls, c) {
				continue
			}
			dir := inMount(m, v1paths[c])
			if dir == "" || v1paths[c] == "" || !usableHome(dir) {
				continue
			}
			homes = append(homes, cgroupHome{dir: dir, mem: c == "memory", pids: c == "pids"})
			break
		}
	}
	return homes
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// usableHome: massgen may create cgroups in dir and move its processes into them; cgroups a
// massgen that is gone left behind are removed.
func usableHome(dir string) bool {
	if unix.Access(dir, unix.W_OK) != nil || unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK) != nil {
		return false
	}
	probe := filepath.Join(dir, fmt.Sprintf("massgen-%d-probe", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return false
	}
	unix.Rmdir(probe)
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			rest, ok := strings.CutPrefix(e.Name(), "massgen-")
			if !ok || !e.IsDir() {
				continue
			}
			pid, _, _ := strings.Cut(rest, "-")
			if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && unix.Kill(n, 0) == unix.ESRCH {
				unix.Rmdir(filepath.Join(dir, e.Name())) // empty ones only: the kernel refuses others
			}
		}
	}
	return true
}

// cmdCgroup is one command's cgroups (one per home).
type cmdCgroup struct {
	dirs []cmdCgroupDir
	lim  Limits // as set
}

type cmdCgroupDir struct {
	cgroupHome
	path  string
	procs *os.File // cgroup.procs, open for writing: the command's first process joins through it
	// The event counters as the previous command left them.
	ooms, refusals int64
}

// newCmdCgroup creates the command's cgroups with its limits. A failure leaves nothing behind.
func newCmdCgroup(homes []cgroupHome, lim Limits) (*cmdCgroup, error) {
	c := &cmdCgroup{lim: lim}
	name := fmt.Sprintf("massgen-%d-%d", os.Getpid(), cgroupsHere.seq.Add(1))
	for _, h := range homes {
		d := cmdCgroupDir{cgroupHome: h, path: filepath.Join(h.dir, name)}
		if err := os.Mkdir(d.path, 0o755); err != nil {
			c.remove(nil)
			return nil, err
		}
		c.dirs = append(c.dirs, d)
		if err := d.setLimits(lim); err != nil {
			c.remove(nil)
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(d.path, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			c.remove(nil)
			return nil, err
		}
		c.dirs[len(c.dirs)-1].procs = f
	}
	return c, nil
}

func writeCgroupFile(dir, name, value string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(value), 0)
}

func (d cmdCgroupDir) setLimits(lim Limits) error {
	mem := strconv.FormatInt(int64(lim.MemoryMB)<<20, 10)
	if d.mem {
		if d.v2 {
			if err := writeCgroupFile(d.path, "memory.max", mem); err != nil {
				return err
			}
			// Without this the kernel would swap the command out rather than stop it.
			if err := writeCgroupFile(d.path, "memory.swap.max", "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		} else {
			// memory+swap too (where swap accounting is on). The kernel keeps memory at or
			// under memory+swap: raised, memory+swap goes first.
			err := writeCgroupFile(d.path, "memory.limit_in_bytes", mem)
			if err != nil {
				if werr := writeCgroupFile(d.path, "memory.memsw.limit_in_bytes", mem); werr != nil {
					return err
				}
				err = writeCgroupFile(d.path, "memory.limit_in_bytes", mem)
			}
			if err != nil {
				return err
			}
			if err := writeCgroupFile(d.path, "memory.memsw.limit_in_bytes", mem); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	if d.pids {
		if err := writeCgroupFile(d.path, "pids.max", strconv.Itoa(lim.Processes)); err != nil {
			return err
		}
	}
	return nil
}

// procsFDs are the cgroup.procs files to write the command's first process into.
func (c *cmdCgroup) procsFDs() []int {
	var fds []int
	for _, d := range c.dirs {
		fds = append(fds, int(d.procs.Fd()))
	}
	return fds
}

// has says whether a cgroup bounds memory and processes.
func (c *cmdCgroup) has() (mem, pids bool) {
	if c == nil {
		return false, false
	}
	for _, d := range c.dirs {
		mem, pids = mem || d.mem, pids || d.pids
	}
	return mem, pids
}

// eventCount reads "key N" from a cgroup's event file (0 when absent).
func eventCount(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// hits are the limits the command's processes ran into: a process killed for memory (the OOM
// killer, inside the cgroup only), a process creation refused at the process limit.
func (c *cmdCgroup) hits() []limitHit {
	var out []limitHit
	if c == nil {
		return nil
	}
	for i := range c.dirs {
		d := &c.dirs[i]
		if d.mem {
			file := "memory.oom_control"
			if d.v2 {
				file = "memory.events"
			}
			n := eventCount(filepath.Join(d.path, file), "oom_kill")
			if n > d.ooms {
				out = append(out, limitHit{what: "memory", value: fmt.Sprintf("%d MiB", c.lim.MemoryMB), killed: true})
			}
			d.ooms = n
		}
		if d.pids {
			n := eventCount(filepath.Join(d.path, "pids.events"), "max")
			if n > d.refusals {
				out = append(out, limitHit{what: "process", value: strconv.Itoa(c.lim.Processes),
					detail: fmt.Sprintf("new processes or threads refused (%d times)", n-d.refusals)})
			}
			d.refusals = n
		}
	}
	return out
}

// exists: the cgroups are still there.
func (c *cmdCgroup) exists() bool {
	for _, d := range c.dirs {
		if _, err := os.Stat(d.path); err != nil {
			return false
		}
	}
	return true
}

// empty: no process is left in the cgroups.
func (c *cmdCgroup) empty() bool {
	for _, d := range c.dirs {
		b, err := os.ReadFile(filepath.Join(d.path, "cgroup.procs"))
		if err != nil || len(bytes.TrimSpace(b)) > 0 {
			return false
		}
	}
	return true
}

// remove kills what is left in the cgroups and removes them. The command's processes are
// normally gone already (its PID namespace ended with its first process).
func (c *cmdCgroup) remove(log *zap.Logger) {
	if c == nil {
		return
	}
	for _, d := range c.dirs {
		if d.procs != nil {
			d.procs.Close()
		}
		if err := removeCgroup(d.path); err != nil && log != nil {
			log.Warn("sandbox: a command's cgroup could not be removed", zap.String("cgroup", d.path), zap.Error(err))
		}
	}
	c.dirs = nil
}

// kill sends SIGKILL to every process in the cgroups (cgroup.kill where the kernel has it).
func (c *cmdCgroup) kill() {
	for _, d := range c.dirs {
		killCgroup(d.path)
	}
}

func killCgroup(path string) {
	if writeCgroupFile(path, "cgroup.kill", "1") == nil {
		return
	}
	if b, err := os.ReadFile(filepath.Join(path, "cgroup.procs")); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
}

// removeCgroup empties the cgroup at path (SIGKILL to every process in it: cgroup.kill where
// the kernel has it) and removes it, waiting a little for killed processes to be gone.
func removeCgroup(path string) error {
	delay := 100 * time.Microsecond
	for i := 0; ; i++ {
		err := unix.Rmdir(path)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || i == 12 {
			return err
		}
		killCgroup(path)
		// Killed processes leave the cgroup once the kernel has torn them down.
		time.Sleep(delay)
		delay *= 2
	}
}
