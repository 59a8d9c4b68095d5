//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/lane"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
)

// hardeningModes are the modes the hardening tests run in: modes(t) and, where massgen is not
// root, the namespaces mode through the per-command helper too (as root modes(t) has it).
func hardeningModes(t *testing.T) []Mode {
	ms := modes(t)
	if slices.Contains(ms, ModeNamespaces) && !slices.Contains(ms, modeNamespacesHelper) {
		ms = append(ms, modeNamespacesHelper)
	}
	return ms
}

// kernelProbe is a python3 program that calls each system call of probes once, with harmless
// arguments, and prints "name ok" or "name ERRNO" per call (it writes nothing anywhere).
func kernelProbe(probes []string) string {
	return `import ctypes, errno, os
l = ctypes.CDLL(None, use_errno=True)
l.syscall.restype = ctypes.c_long
def a(x):
    return ctypes.c_long(x) if isinstance(x, int) else x
def sc(name, nr, *args):
    ctypes.set_errno(0)
    r = l.syscall(ctypes.c_long(nr), *[a(x) for x in args])
    e = ctypes.get_errno() if r == -1 else 0
    print(name, errno.errorcode.get(e, e) if e else "ok", flush=True)
def op(name, path):
    try:
        os.close(os.open(path, os.O_WRONLY))
        print(name, "ok", flush=True)
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno), flush=True)
buf = ctypes.create_string_buffer(512)
ctypes.memmove(buf, (64).to_bytes(4, "little"), 4)
mnt = ctypes.c_int(0)
` + strings.Join(probes, "\n") + "\n"
}

// kernelProbes are the calls the sandbox must refuse, each with arguments that make it succeed
// (or fail with another error) where it is allowed.
func kernelProbes() (probes []string, names []string) {
	add := func(name, code string) { probes, names = append(probes, code), append(names, name) }
	add("keyctl", fmt.Sprintf(`sc("keyctl", %d, 0, -3, 1)`, unix.SYS_KEYCTL))                                         // the session keyring's id
	add("keyctl_search", fmt.Sprintf(`sc("keyctl_search", %d, 10, -3, b"user", b"%s", 0)`, unix.SYS_KEYCTL, keyName)) // massgen's key
	add("add_key", fmt.Sprintf(`sc("add_key", %d, b"user", b"massgen-probe", b"x", 1, -4)`, unix.SYS_ADD_KEY))        // the user keyring
	add("request_key", fmt.Sprintf(`sc("request_key", %d, b"user", b"%s", None, 0)`, unix.SYS_REQUEST_KEY, keyName))
	add("io_uring_setup", fmt.Sprintf(`sc("io_uring_setup", %d, 1, buf)`, unix.SYS_IO_URING_SETUP))
	add("userfaultfd", fmt.Sprintf(`sc("userfaultfd", %d, 1|os.O_CLOEXEC)`, unix.SYS_USERFAULTFD)) // UFFD_USER_MODE_ONLY
	add("unshare", fmt.Sprintf(`sc("unshare", %d, %d)`, unix.SYS_UNSHARE, unix.CLONE_NEWUSER))
	add("name_to_handle_at", fmt.Sprintf(`sc("name_to_handle_at", %d, -100, b".", buf, ctypes.byref(mnt), 0)`, unix.SYS_NAME_TO_HANDLE_AT))
	add("personality", fmt.Sprintf(`sc("personality", %d, 0x0040000)`, unix.SYS_PERSONALITY)) // ADDR_NO_RANDOMIZE
	add("clone3", fmt.Sprintf(`sc("clone3", %d, None, 0)`, unix.SYS_CLONE3))
	add("bpf", fmt.Sprintf(`sc("bpf", %d, 0, buf, 72)`, unix.SYS_BPF))
	add("perf_event_open", fmt.Sprintf(`sc("perf_event_open", %d, buf, 0, -1, -1, 0)`, unix.SYS_PERF_EVENT_OPEN))
	add("settimeofday", fmt.Sprintf(`sc("settimeofday", %d, None, None)`, unix.SYS_SETTIMEOFDAY))
	add("core_pattern", `op("core_pattern", "/proc/sys/kernel/core_pattern")`)
	add("drop_caches", `op("drop_caches", "/proc/sys/vm/drop_caches")`)
	add("sysrq_trigger", `op("sysrq_trigger", "/proc/sysrq-trigger")`)
	add("ip_forward", `op("ip_forward", "/proc/sys/net/ipv4/ip_forward")`)
	add("sys_thp", `op("sys_thp", "/sys/kernel/mm/transparent_hugepage/enabled")`)
	return probes, names
}

// keyName is the key massgen (this test) holds in its session keyring, as an API key would be.
var keyName = fmt.Sprintf("massgen-test-secret-%d", os.Getpid())

func parseProbe(out string) map[string]string {
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			got[k] = v
		}
	}
	return got
}

// TestRedteamKernelSurface: what a container runtime keeps from its workloads a command cannot
// reach in any mode: the kernel keyrings (massgen's own key included), io_uring, userfaultfd,
// new namespaces, file handles, eBPF, performance counters, the clock, and, as root, the
// host's sysctls (/proc/sys), the SysRq trigger and /sys. Each call is first made without a
// sandbox: a call that is refused there already (by this machine's settings) is not counted.
func TestRedteamKernelSurface(t *testing.T) {
	lane.Long(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	id, err := unix.AddKey("user", keyName, []byte("sk-keyring-secret"), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Skipf("no kernel keyring here: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0)
	probes, names := kernelProbes()
	prog := kernelProbe(probes)
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.ws, "probe.py"), prog)
	control := parseProbe(run(t, ModeNone, f.pol, f.ws, "python3 probe.py").Stdout)
	t.Cleanup(func() { // the control's add_key
		if k, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", "massgen-probe", 0); err == nil {
			unix.KeyctlInt(unix.KEYCTL_UNLINK, k, unix.KEY_SPEC_USER_KEYRING, 0, 0)
		}
	})
	var open []string
	for _, n := range names {
		if v := control[n]; v != "EPERM" && v != "EACCES" && v != "ENOENT" && v != "" {
			open = append(open, n)
		}
	}
	t.Logf("reachable without a sandbox here: %v (control: %v)", open, control)
	if !slices.Contains(open, "keyctl_search") || !slices.Contains(open, "add_key") {
		t.Fatalf("control: a command without a sandbox should reach massgen's keyring: %v", control)
	}
	if os.Geteuid() == 0 && !slices.Contains(open, "core_pattern") {
		t.Fatalf("control: as root, /proc/sys should be writable without a sandbox: %v", control)
	}
	for _, mode := range hardeningModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			res := run(t, mode, f.pol, f.ws, "python3 probe.py")
			got := parseProbe(res.Stdout)
			for _, n := range open {
				switch v := got[n]; {
				case v == "":
					t.Errorf("%s: not probed: %+v", n, res)
				case n == "clone3" && v != "ENOSYS":
					t.Errorf("clone3: %s, want ENOSYS", v)
				case v == "ok" || n != "clone3" && !slices.Contains([]string{"EPERM", "EACCES", "EROFS", "ENOENT"}, v):
					// Refused by the filter (EPERM), or the file is read-only (EROFS),
					// inaccessible (EACCES) or absent (ENOENT) in the sandbox.
					t.Errorf("%s: %s (without a sandbox: %s)", n, v, control[n])
				}
			}
		})
	}
}

// unprivEnv marks a copy of this test binary run as nobody by TestHardeningUnprivileged.
const unprivEnv = "MASSGEN_SANDBOX_UNPRIVILEGED"

// TestHardeningUnprivileged runs the hardening tests again as an unprivileged user (setpriv to
// nobody), in every mode that user can run: bubblewrap, the namespaces mode through the zygote
// and through the helper, Landlock.
func TestHardeningUnprivileged(t *testing.T) {
	lane.Long(t)
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	copyFile(t, self, bin)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run", "^(TestRedteamKernelSurface|TestCommandLimits|TestLimitsConcurrent|TestShellBarrierInvisible)$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), unprivEnv+"=1", "TMPDIR=/tmp")
	out, err := cmd.CombinedOutput()
	t.Logf("unprivileged run:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRedteamKernelSurface") {
		t.Fatalf("unprivileged run: %v", err)
	}
}

// forkMany forks up to 300 children that wait on a pipe, prints how many it got, then lets
// them go: a fork bomb that ends by itself.
const forkMany = `import os, sys
r, w = os.pipe()
n = 0
for i in range(300):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork refused:", e, file=sys.stderr)
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    n += 1
print(n)
os.close(w)
for i in range(n):
    os.wait()
sys.exit(0 if n == 300 else 1)
`

// TestCommandLimits: a fork bomb, a 4 GiB allocation, a CPU hog and a file past the size limit
// are stopped at the command's limits (set low here) and reported as such, in every mode;
// massgen starts processes of its own all along, and the next command runs normally.
func TestCommandLimits(t *testing.T) {
	lane.Long(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	t.Logf("cgroups used here: %+v (euid %d)", cgroupsHere.get(), os.Geteuid())
	lim := Limits{MemoryMB: 256, Processes: 64, CPUSeconds: 60, FileSizeMB: 1}
	cases := []struct {
		name, command string
		want          string // in Result.Limit
		check         func(t *testing.T, f fixture, res Result)
		cpu           int // CPU seconds, when not lim's
	}{
		{"fork bomb", "python3 fork.py", "process limit 64", func(t *testing.T, f fixture, res Result) {
			if n, err := strconv.Atoi(strings.TrimSpace(res.Stdout)); err != nil || n >= 64 {
				t.Errorf("forked %q processes (limit 64)", res.Stdout)
			}
		}, 0},
		{"shell fork bomb", "b(){ b | b & }; b; sleep 2", "process limit 64", nil, 0},
		{"4 GiB allocation", `python3 -c "b = b'x' * (4 << 30); print(len(b))"`, "memory limit 256 MiB", func(t *testing.T, f fixture, res Result) {
			if res.ExitCode == 0 || strings.Contains(res.Stdout, "4294967296") {
				t.Errorf("allocated: %+v", res)
			}
		}, 0},
		{"CPU hog", `python3 -c "while True: pass"`, "killed: CPU time limit 1 s", nil, 1},
		{"big file", "head -c 5000000 /dev/zero > big", "file size limit 1 MiB", func(t *testing.T, f fixture, res Result) {
			if fi, err := os.Stat(filepath.Join(f.ws, "big")); err == nil && fi.Size() > 1<<20 {
				t.Errorf("big is %d bytes", fi.Size())
			}
		}, 0},
		{"sparse terabyte", "truncate -s 1T sparse", "file size limit 1 MiB", func(t *testing.T, f fixture, res Result) {
			if fi, err := os.Stat(filepath.Join(f.ws, "sparse")); err == nil && fi.Size() > 1<<20 {
				t.Errorf("sparse is %d bytes", fi.Size())
			}
		}, 0},
	}
	for _, mode := range hardeningModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					f := newFixture(t)
					mustWrite(t, filepath.Join(f.ws, "fork.py"), forkMany)
					// Meanwhile this process (massgen) starts processes of its own: the
					// command's bomb leaves it room.
					done, outside := make(chan struct{}), make(chan error, 1)
					go func() {
						var err error
						for n := 0; err == nil; n++ {
							select {
							case <-done:
								outside <- nil
								return
							default:
							}
							err = exec.Command("/bin/true").Run()
						}
						outside <- err
					}()
					l := lim
					if c.cpu != 0 {
						l.CPUSeconds = c.cpu
					}
					res, err := Run(context.Background(), withMode(mode, Options{Command: c.command, Dir: f.ws, Policy: f.pol,
						Timeout: 60 * time.Second, Limits: l, Log: zaptest.NewLogger(t)}))
					close(done)
					if oerr := <-outside; oerr != nil {
						t.Errorf("massgen could not start a process while the command ran: %v", oerr)
					}
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("Limit: %q (exit %d, timed out %v)", res.Limit, res.ExitCode, res.TimedOut)
					if !strings.Contains(res.Limit, c.want) {
						t.Errorf("Limit = %q, want %q; %+v", res.Limit, c.want, res)
					}
					if c.check != nil {
						c.check(t, f, res)
					}
					if res := run(t, mode, f.pol, f.ws, "echo fine"); res.Stdout != "fine\n" || res.Limit != "" {
						t.Errorf("the next command: %+v", res)
					}
				})
			}
		})
	}
}

// TestShellBarrierInvisible: the shell's wait for its limits changes nothing the command can
// see: $0 and its arguments, a syntax error on its first line (reported as the shell's, not as a
// set-up failure), its descriptors.
func TestShellBarrierInvisible(t *testing.T) {
	for _, mode := range append(hardeningModes(t), ModeNone) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			// (3 is ls's own directory.)
			if res := run(t, mode, f.pol, f.ws, "echo $0 $#; ls /proc/self/fd"); res.Stdout != "/bin/sh 0\n0\n1\n2\n3\n" {
				t.Errorf("$0, $#, descriptors: %q", res.Stdout)
			}
			for _, c := range []string{"echo a; if", "echo a\nfi"} {
				res := run(t, mode, f.pol, f.ws, c)
				if res.ExitCode != 2 || !strings.Contains(strings.ToLower(res.Stderr), "syntax error") || res.Limit != "" {
					t.Errorf("%q: %+v", c, res)
				}
			}
		})
	}
}

// TestLimitsConcurrent: commands running at the same time, each with its own limits, each get
// their own (the rlimits as the command sees them; the cgroups are not shared).
func TestLimitsConcurrent(t *testing.T) {
	lane.Long(t)
	for _, mode := range hardeningModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			errs := make(chan error, 40)
			for g := 0; g < 4; g++ {
				go func() {
					for i := 0; i < 10; i++ {
						cpu := 100 + 10*g + i
						res, err := Run(context.Background(), withMode(mode, Options{Command: "grep -E '^Max (cpu time|file size)' /proc/self/limits",
							Dir: f.ws, Policy: f.pol, Timeout: 30 * time.Second, Limits: Limits{CPUSeconds: cpu, FileSizeMB: cpu}}))
						switch {
						case err != nil:
							errs <- err
						case !strings.Contains(res.Stdout, fmt.Sprintf("Max cpu time              %d                  %d ", cpu, cpu+1)) ||
							!strings.Contains(res.Stdout, fmt.Sprintf("Max file size             %d ", cpu<<20)):
							errs <- fmt.Errorf("cpu %d: %q", cpu, res.Stdout)
						default:
							errs <- nil
						}
					}
				}()
			}
			for i := 0; i < 40; i++ {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		})
	}
}
