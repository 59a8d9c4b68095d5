//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/lane"
)

// childEnv tells a copy of this test binary, run as another user, which child test to run.
const childEnv = "MASSGEN_SANDBOX_CHILD"

// TestNamespacesUnprivileged runs the namespaces and Landlock modes as an unprivileged user
// (setpriv to nobody), and the fallback where user namespaces are blocked (inside bubblewrap
// with --disable-userns, as nobody): auto falls back to Landlock alone and says so.
func TestNamespacesUnprivileged(t *testing.T) {
	lane.Long(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	if LandlockABI() < minLandlockABI {
		t.Skip("no Landlock")
	}
	// A copy of this binary that nobody can run.
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
	childArgs := []string{bin, "-test.run", "^TestNamespacesChild$", "-test.v", "-test.count=1"}
	cases := []struct {
		name   string
		prefix []string
		expect string
	}{
		{"unprivileged", []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}, "namespaces"},
		{"zygote", []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}, "zygote"},
	}
	if bw := BubblewrapPath(); bw != "" {
		cases = append(cases, struct {
			name   string
			prefix []string
			expect string
		}{"user namespaces blocked", []string{bw, "--unshare-user", "--disable-userns", "--uid", "65534", "--gid", "65534",
			"--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--"}, "fallback"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			argv := append(append([]string(nil), c.prefix...), childArgs...)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), childEnv+"="+c.expect, "TMPDIR=/tmp")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "CHILD-OK") {
				t.Fatalf("child (%s): %v\n%s", c.expect, err, out)
			}
			// massgen (the child) exited: so did its zygotes.
			for _, line := range strings.Split(string(out), "\n") {
				if pid, ok := strings.CutPrefix(line, zygotePIDLine); ok {
					waitZygoteGone(t, pid)
				}
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNamespacesChild is TestNamespacesUnprivileged's child, run as nobody.
func TestNamespacesChild(t *testing.T) {
	expect := os.Getenv(childEnv)
	if expect == "" {
		t.Skip("run by TestNamespacesUnprivileged")
	}
	if os.Geteuid() == 0 {
		t.Fatal("the child runs as root")
	}
	base := t.TempDir()
	proj := filepath.Join(base, "proj")
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	mustWrite(t, filepath.Join(proj, ".git", "HEAD"), "ref")
	mustWrite(t, filepath.Join(proj, "tests", "golden.json"), "gold")
	mustWrite(t, filepath.Join(outside, "secret.txt"), "outside secret")
	mustWrite(t, filepath.Join(ws, "w"), "w")
	pol := Policy{Write: []string{proj, ws}, Own: []string{ws},
		Keep: []string{filepath.Join(proj, ".git"), filepath.Join(proj, "tests", "golden.json")}}
	switch expect {
	case "namespaces":
		if err := NamespacesError(); err != nil {
			t.Fatalf("namespaces unavailable to an unprivileged user here: %v", err)
		}
		// A final agent creates files next to .git; .git, the protected file and their
		// ancestors hold; outside is unreadable.
		res := run(t, ModeNamespaces, pol, proj, "echo x > new.txt && mkdir newdir && ls && cat .git/HEAD && id -u")
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, "new.txt\nnewdir\ntests\nref65534\n") {
			t.Fatalf("next to .git: %+v", res)
		}
		for _, c := range []string{"echo pwned > .git/HEAD", "mv tests t2", "echo pwned > tests/golden.json", "cat " + outside + "/secret.txt", "mv .git g"} {
			if res := run(t, ModeNamespaces, pol, proj, c); res.ExitCode == 0 || strings.Contains(res.Stdout, "outside secret") {
				t.Errorf("%q: %+v", c, res)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(proj, "tests", "golden.json")); string(b) != "gold" {
			t.Errorf("golden changed: %q", b)
		}
		// Landlock alone, unprivileged: its own PID namespace through a user namespace.
		marker := fmt.Sprintf("3601.%d", os.Getpid())
		run(t, ModeLandlock, pol, ws, "setsid sleep "+marker+" >/dev/null 2>&1 </dev/null & echo started")
		waitGone(t, marker)
	case "fallback":
		err := NamespacesError()
		if err == nil || !strings.Contains(err.Error(), "user namespaces") {
			t.Fatalf("NamespacesError with user namespaces blocked: %v", err)
		}
		if _, err := Effective(ModeNamespaces); err == nil || !strings.Contains(err.Error(), "namespaces") {
			t.Fatalf("Effective(namespaces): %v", err)
		}
		if m, err := Effective(ModeAuto); m != ModeLandlock || err != nil {
			t.Fatalf("auto: %q %v (bubblewrap: %q)", m, err, BubblewrapPath())
		}
		if f := Fallback(ModeAuto); !strings.Contains(f, "Landlock alone") || !strings.Contains(f, "user namespaces") {
			t.Fatalf("fallback message: %q", f)
		}
		res := run(t, ModeAuto, pol, ws, "echo ok > ok.txt && cat ok.txt")
		if res.Stdout != "ok\n" || res.Sandbox != ModeLandlock {
			t.Fatalf("landlock fallback: %+v", res)
		}
		if res := run(t, ModeAuto, pol, proj, "echo pwned > .git/HEAD; cat "+outside+"/secret.txt"); strings.Contains(res.Stdout, "outside secret") {
			t.Fatalf("landlock fallback: %+v", res)
		}
	case "zygote":
		zygoteChild(t, pol, proj, ws, outside)
	default:
		t.Fatalf("unknown child expectation %q", expect)
	}
	fmt.Println("CHILD-OK")
}

// TestNamespacesInProcess: where massgen builds the view on threads of its own (as root on
// Linux 6.18 or later), its own mount namespace, mounts and descriptors are what they were
// after hundreds of commands, concurrent ones and ones whose set-up fails included, and no
// thread of it is left in a command's namespaces.
func TestNamespacesInProcess(t *testing.T) {
	lane.Long(t)
	if err := namespacesDirect.get(); err != nil {
		t.Skipf("the namespaces mode uses the helper here: %v", err)
	}
	f := newFixture(t)
	proj := filepath.Join(f.ws, "proj")
	mustWrite(t, filepath.Join(proj, ".git", "HEAD"), "ref")
	mustWrite(t, filepath.Join(proj, "secret", "key"), "private key")
	pol := f.pol
	pol.Keep = []string{filepath.Join(proj, ".git")}
	pol.Hide = []string{filepath.Join(proj, "secret")}
	// Warm up: Go's first fork, the probes, the runtime's descriptors.
	run(t, ModeNamespaces, pol, proj, "true")
	fds, mounts, nss := countFDs(t), readText(t, "/proc/self/mountinfo"), threadMountNS(t)
	if len(nss) != 1 {
		t.Fatalf("massgen's threads are in several mount namespaces before the test: %v", nss)
	}
	const workers, each = 4, 50
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			for i := 0; i < each; i++ {
				cmd := "cat .git/HEAD; ls; echo x > .git/HEAD; cat secret/key; echo /proc/[0-9]*"
				res, err := Run(t.Context(), Options{Mode: ModeNamespaces, Command: cmd, Dir: proj, Policy: pol, Timeout: 30 * time.Second})
				switch {
				case err != nil:
					errs <- err
					return
				case res.Stdout != "refsecret\n/proc/1\n": // the shell alone, as PID 1
					errs <- fmt.Errorf("%q: %+v", cmd, res)
					return
				}
				// A set-up that fails half-way (the working directory is gone from the view).
				if _, err := Run(t.Context(), Options{Mode: ModeNamespaces, Command: "true", Dir: filepath.Join(proj, "secret"), Policy: pol}); err == nil {
					errs <- fmt.Errorf("a command started in a private directory")
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := countFDs(t); got != fds {
		t.Errorf("descriptors: %d before, %d after", fds, got)
	}
	if got := readText(t, "/proc/self/mountinfo"); got != mounts {
		t.Errorf("massgen's mounts changed:\n%s\nafter:\n%s", mounts, got)
	}
	if got := threadMountNS(t); len(got) != 1 || got[0] != nss[0] {
		t.Errorf("threads' mount namespaces: %v before, %v after", nss, got)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".git", "HEAD")); string(b) != "ref" {
		t.Errorf(".git/HEAD changed: %q", b)
	}
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// threadMountNS lists the distinct mount namespaces of this process's threads.
func threadMountNS(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, task := range tasks {
		ns, err := os.Readlink(filepath.Join("/proc/self/task", task.Name(), "ns", "mnt"))
		if err != nil {
			continue // the thread ended meanwhile
		}
		if !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}
