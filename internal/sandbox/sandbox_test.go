//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/massgen-go/massgen/internal/sandbox/netproxy"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

// TestMain lets the test binary act as the sandbox helper: Run re-executes os.Executable()
// (this binary) with the helper marker, and MaybeRunHelper takes over before any test runs.
func TestMain(m *testing.M) {
	MaybeRunHelper()
	os.Exit(m.Run())
}

// modes returns the sandboxes to test. On machines with neither it skips with a visible message.
func modes(t *testing.T) []Mode {
	t.Helper()
	var ms []Mode
	if LandlockABI() >= minLandlockABI {
		ms = append(ms, ModeLandlock)
	} else {
		t.Logf("Landlock unavailable (ABI %d): landlock cases not run", LandlockABI())
	}
	if BubblewrapPath() != "" {
		ms = append(ms, ModeBubblewrap)
	} else {
		t.Logf("bubblewrap unavailable: bubblewrap cases not run")
	}
	if err := NamespacesError(); err == nil {
		ms = append(ms, ModeNamespaces)
		// Where massgen builds the view itself, the helper's way is tested too.
		if namespacesDirect.get() == nil {
			ms = append(ms, modeNamespacesHelper)
		}
	} else {
		t.Logf("namespaces mode unavailable (%v): namespaces cases not run", err)
	}
	if len(ms) == 0 {
		t.Skip("SANDBOX TESTS SKIPPED: neither Landlock (ABI >= 3) nor bubblewrap is available on this machine")
	}
	return ms
}

// modeNamespacesHelper is the namespaces mode through the re-executed helper, where massgen
// would otherwise build the view itself (as root on Linux 6.18 or later).
const modeNamespacesHelper Mode = "namespaces-helper"

// withMode sets o's mode from a mode of modes(t).
func withMode(mode Mode, o Options) Options {
	o.Mode = mode
	if mode == modeNamespacesHelper {
		o.Mode, o.viaHelper = ModeNamespaces, true
	}
	return o
}

type fixture struct {
	ws, ro, outside string
	pol             Policy
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{
		ws:      filepath.Join(base, "ws"),
		ro:      filepath.Join(base, "readonly"),
		outside: filepath.Join(base, "outside"),
	}
	for _, d := range []string{f.ws, f.ro, f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(f.ro, "doc.txt"), "read me")
	mustWrite(t, filepath.Join(f.outside, "secret.txt"), "top secret")
	f.pol = Policy{Read: []string{f.ro}, Write: []string{f.ws}}
	return f
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, mode Mode, pol Policy, dir, command string) Result {
	t.Helper()
	res, err := Run(context.Background(), withMode(mode, Options{Command: command, Dir: dir, Policy: pol, Timeout: 30 * time.Second, Log: zaptest.NewLogger(t)}))
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return res
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// TestEscapes runs commands that try to leave the sandbox by means other than path arguments
// checked by the permission engine. Every one of them succeeds with command_sandbox: none
// (TestEscapesSucceedWithoutSandbox), so these tests fail if the sandbox is off.
func TestEscapes(t *testing.T) {
	_, pyErr := exec.LookPath("python3")
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			tests := []struct {
				name    string
				command func(f fixture) string
				victim  func(f fixture) string // must not exist afterwards
				python  bool
			}{
				{"python open outside", func(f fixture) string {
					return fmt.Sprintf(`python3 -c "open('%s/x','w').write('pwned')"`, f.outside)
				}, func(f fixture) string { return filepath.Join(f.outside, "x") }, true},
				{"cd .. then write", func(f fixture) string { return `cd ..; echo pwned > f` },
					func(f fixture) string { return filepath.Join(filepath.Dir(f.ws), "f") }, false},
				{"script written in workspace then run", func(f fixture) string {
					return fmt.Sprintf("printf '#!/bin/sh\\necho pwned > %s/y\\n' > s.sh && chmod +x s.sh && ./s.sh", f.outside)
				}, func(f fixture) string { return filepath.Join(f.outside, "y") }, false},
				{"write into read-only root", func(f fixture) string { return fmt.Sprintf("echo pwned > %s/new.txt", f.ro) },
					func(f fixture) string { return filepath.Join(f.ro, "new.txt") }, false},
				{"symlink in workspace to outside", func(f fixture) string {
					return fmt.Sprintf("ln -s %s link && echo pwned > link/z", f.outside)
				}, func(f fixture) string { return filepath.Join(f.outside, "z") }, false},
				{"write to /tmp", func(f fixture) string { return "echo pwned > /tmp/massgen-sandbox-escape-" + string(mode) },
					func(f fixture) string { return "/tmp/massgen-sandbox-escape-" + string(mode) }, false},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if tt.python && pyErr != nil {
						t.Skip("python3 not installed")
					}
					f := newFixture(t)
					victim := tt.victim(f)
					os.Remove(victim)
					res := run(t, mode, f.pol, f.ws, tt.command(f))
					if exists(victim) {
						os.Remove(victim)
						t.Fatalf("sandbox escape: %s was created (exit %d, stderr %q)", victim, res.ExitCode, res.Stderr)
					}
					if res.ExitCode == 0 {
						t.Errorf("escape attempt exited 0; stderr %q", res.Stderr)
					}
				})
			}
		})
	}
}

func TestEscapesSucceedWithoutSandbox(t *testing.T) {
	f := newFixture(t)
	res := run(t, ModeNone, f.pol, f.ws, `cd ..; echo x > f`)
	if res.ExitCode != 0 || !exists(filepath.Join(filepath.Dir(f.ws), "f")) {
		t.Fatalf("without a sandbox the write should succeed: %+v", res)
	}
}

func TestAllowedWork(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			res := run(t, mode, f.pol, f.ws, fmt.Sprintf(
				"cat %s/doc.txt > copy.txt && mkdir -p sub && echo hi > sub/a && mv sub/a b && rm b && "+
					"printf 'echo from-script' > s.sh && sh s.sh && echo tmp > $TMPDIR/t && cat $TMPDIR/t && ls /usr/bin >/dev/null", f.ro))
			if res.ExitCode != 0 {
				t.Fatalf("exit %d, stderr %q", res.ExitCode, res.Stderr)
			}
			if got, _ := os.ReadFile(filepath.Join(f.ws, "copy.txt")); string(got) != "read me" {
				t.Errorf("copy.txt = %q", got)
			}
			if !strings.Contains(res.Stdout, "from-script") || !strings.Contains(res.Stdout, "tmp") {
				t.Errorf("stdout = %q", res.Stdout)
			}
			if want := withMode(mode, Options{}).Mode; res.Sandbox != want {
				t.Errorf("Sandbox = %q, want %q", res.Sandbox, want)
			}
			// python3 runs inside (so the python escape cases test the sandbox, not a missing
			// interpreter).
			if _, err := exec.LookPath("python3"); err == nil {
				if res := run(t, mode, f.pol, f.ws, `python3 -c "print('py-ok')"`); res.Stdout != "py-ok\n" {
					t.Errorf("python3 does not run in the sandbox: %+v", res)
				}
			}
		})
	}
}

func TestReadOutsideDenied(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			res := run(t, mode, f.pol, f.ws, fmt.Sprintf("cat %s/secret.txt", f.outside))
			if res.ExitCode == 0 || strings.Contains(res.Stdout, "top secret") {
				t.Fatalf("read outside succeeded: %+v", res)
			}
		})
	}
}

// TestKeepPathsStayReadOnly: protected / excluded paths under a writable root.
func TestKeepPathsStayReadOnly(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			proj := filepath.Join(filepath.Dir(f.ws), "project")
			mustWrite(t, filepath.Join(proj, "src", "main.go"), "package main")
			mustWrite(t, filepath.Join(proj, ".git", "HEAD"), "ref")
			mustWrite(t, filepath.Join(proj, "golden", "expected.txt"), "gold")
			mustWrite(t, filepath.Join(proj, "deep", "keep.txt"), "keep")
			mustWrite(t, filepath.Join(proj, "deep", "free.txt"), "free")
			pol := Policy{Write: []string{f.ws, proj}, Keep: []string{
				filepath.Join(proj, ".git"), filepath.Join(proj, "golden"), filepath.Join(proj, "deep", "keep.txt")}}
			for _, c := range []string{"echo x > .git/HEAD", "echo x > golden/expected.txt", "rm golden/expected.txt",
				"echo x > golden/new.txt", "echo x > deep/keep.txt", "rm -rf .git", "mv deep/keep.txt src/",
				"ln .git/HEAD src/h && echo pwned > src/h", "ln golden/expected.txt src/g && echo pwned > src/g"} {
				res := run(t, mode, pol, proj, c)
				if res.ExitCode == 0 {
					t.Errorf("%q succeeded", c)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(proj, ".git", "HEAD")); string(b) != "ref" {
				t.Errorf(".git/HEAD changed: %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(proj, "golden", "expected.txt")); string(b) != "gold" {
				t.Errorf("golden/expected.txt changed: %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(proj, "deep", "keep.txt")); string(b) != "keep" {
				t.Errorf("deep/keep.txt changed: %q", b)
			}
			res := run(t, mode, pol, proj, "echo y > src/main.go && echo y > deep/free.txt && mkdir src/new && echo z > src/new/f && cat .git/HEAD")
			if res.ExitCode != 0 || res.Stdout != "ref" {
				t.Fatalf("allowed writes failed: %+v", res)
			}
		})
	}
}

// liveProcs lists the processes (not zombies) whose command line contains marker.
func liveProcs(marker string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			continue
		}
		if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); !strings.Contains(string(st), ") Z ") {
			out = append(out, pid)
		}
	}
	return out
}

// waitGone waits (bounded) until no process carries marker; the survivors are killed and
// reported.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(liveProcs(marker)) > 0 {
		if time.Now().After(deadline) {
			left := liveProcs(marker)
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v outlived their command", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProcessTreeEndsWithCommand: what a command starts ends with it, in every sandbox, when
// it times out and when it returns at once leaving background processes, in its process group
// or not (setsid): under Landlock the command has its own PID namespace.
func TestProcessTreeEndsWithCommand(t *testing.T) {
	lane.Long(t)
	for _, mode := range append(modes(t), ModeNone) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			marker := fmt.Sprintf("3600.%d%d", os.Getpid(), len(mode))
			start := time.Now()
			res, err := Run(context.Background(), withMode(mode, Options{Dir: f.ws, Policy: f.pol, Timeout: 300 * time.Millisecond,
				Command: "sleep " + marker + " & sleep " + marker}))
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.ExitCode != -1 {
				t.Fatalf("want timed out, got %+v", res)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %v", d)
			}
			waitGone(t, marker)
			if mode == ModeNone {
				return // no sandbox: setsid does leave
			}
			res = run(t, mode, f.pol, f.ws, "setsid sleep "+marker+" >/dev/null 2>&1 </dev/null & sleep "+marker+" >/dev/null 2>&1 </dev/null & echo started")
			if res.Stdout != "started\n" {
				t.Fatalf("%+v", res)
			}
			waitGone(t, marker)
		})
	}
}

func TestCancelKillsCommand(t *testing.T) {
	mode := modes(t)[0]
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var res Result
	var err error
	go func() {
		defer close(done)
		res, err = Run(ctx, withMode(mode, Options{Dir: f.ws, Policy: f.pol, Timeout: time.Minute,
			Command: "echo started > started; sleep 60"}))
	}()
	// Wait until the command runs (polling its side effect), then cancel.
	for !exists(filepath.Join(f.ws, "started")) {
		select {
		case <-done:
			t.Fatalf("command ended early: %+v %v", res, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	start := time.Now()
	cancel()
	<-done
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Fatalf("cancel: %+v %v after %v", res, err, time.Since(start))
	}
}

func TestOutputCapped(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			res, err := Run(context.Background(), withMode(mode, Options{Dir: f.ws, Policy: f.pol, MaxOutput: 1000,
				Command: "head -c 100000 /dev/zero | tr '\\0' a; echo err >&2"}))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Truncated || len(res.Stdout) != 1000 || res.Stderr != "err\n" || res.ExitCode != 0 {
				t.Fatalf("got truncated=%v len=%d stderr=%q exit=%d", res.Truncated, len(res.Stdout), res.Stderr, res.ExitCode)
			}
		})
	}
}

func TestNoSecretsInEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-should-not-leak")
	for _, mode := range modes(t) {
		f := newFixture(t)
		res := run(t, mode, f.pol, f.ws, "env")
		if strings.Contains(res.Stdout, "sk-should-not-leak") {
			t.Fatalf("%s: API key visible to the command", mode)
		}
	}
}

// TestProcEnvironOfOtherProcesses: a process of ours holding a secret in its environment (as
// massgen holds API keys) cannot be read through /proc/<pid>/environ from inside the sandbox.
// Without a sandbox it can (the control case), so the test is meaningful.
func TestProcEnvironOfOtherProcesses(t *testing.T) {
	holder := exec.Command("sleep", "60")
	holder.Env = append(os.Environ(), "MASSGEN_TEST_SECRET=sk-in-proc-environ")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	cmd := fmt.Sprintf("cat /proc/%d/environ 2>/dev/null | tr '\\0' '\\n' | grep sk-in-proc; true", holder.Process.Pid)
	f := newFixture(t)
	if res := run(t, ModeNone, f.pol, f.ws, cmd); !strings.Contains(res.Stdout, "sk-in-proc-environ") {
		t.Fatalf("control: without a sandbox the environ should be readable: %+v", res)
	}
	for _, mode := range modes(t) {
		if res := run(t, mode, f.pol, f.ws, cmd); strings.Contains(res.Stdout, "sk-in-proc-environ") {
			t.Errorf("%s: secret read from /proc/%d/environ", mode, holder.Process.Pid)
		}
		// Nor can it signal processes outside the sandbox (massgen itself, other agents).
		run(t, mode, f.pol, f.ws, fmt.Sprintf("kill -KILL %d", holder.Process.Pid))
		if err := holder.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("%s: the command killed a process outside the sandbox", mode)
		}
	}
}

// TestNoCapabilities: even when massgen runs as root, commands have no capabilities left and
// cannot gain any (no_new_privs). With Landlock the bounding set is emptied too.
func TestNoCapabilities(t *testing.T) {
	for _, mode := range modes(t) {
		f := newFixture(t)
		res := run(t, mode, f.pol, f.ws, "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status")
		fields := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
			k, v, _ := strings.Cut(l, ":")
			fields[k] = strings.TrimSpace(v)
		}
		if len(fields) != 6 {
			t.Fatalf("%s: /proc/self/status: %q %q", mode, res.Stdout, res.Stderr)
		}
		for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
			if fields[k] != "0000000000000000" {
				t.Errorf("%s: %s = %s", mode, k, fields[k])
			}
		}
		if fields["NoNewPrivs"] != "1" {
			t.Errorf("%s: NoNewPrivs = %s", mode, fields["NoNewPrivs"])
		}
		if mode == ModeLandlock && fields["CapBnd"] != "0000000000000000" {
			t.Errorf("landlock: CapBnd = %s", fields["CapBnd"])
		}
	}
}

// TestUnixSocketOutside: a UNIX socket outside the roots (think /var/run/docker.sock) cannot be
// connected to. Without a sandbox it can (the control case).
func TestUnixSocketOutside(t *testing.T) {
	lane.Long(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	f := newFixture(t)
	sock := filepath.Join(f.outside, "daemon.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("daemon-says-hi"))
			c.Close()
		}
	}()
	cmd := fmt.Sprintf(`python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('%s'); print(s.recv(100).decode())"`, sock)
	if res := run(t, ModeNone, f.pol, f.ws, cmd); !strings.Contains(res.Stdout, "daemon-says-hi") {
		t.Fatalf("control: without a sandbox the socket should answer: %+v", res)
	}
	for _, mode := range modes(t) {
		if res := run(t, mode, f.pol, f.ws, cmd); strings.Contains(res.Stdout, "daemon-says-hi") || res.ExitCode == 0 {
			t.Errorf("%s: connected to a UNIX socket outside the sandbox: %+v", mode, res)
		}
	}
	// Abstract sockets (no path: they live in the network namespace) neither.
	name := fmt.Sprintf("massgen-test-%d", os.Getpid())
	aln, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer aln.Close()
	go func() {
		for {
			c, err := aln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("daemon-says-hi"))
			c.Close()
		}
	}()
	acmd := fmt.Sprintf(`python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0%s'); print(s.recv(100).decode())"`, name)
	if res := run(t, ModeNone, f.pol, f.ws, acmd); !strings.Contains(res.Stdout, "daemon-says-hi") {
		t.Fatalf("control: without a sandbox the abstract socket should answer: %+v", res)
	}
	for _, mode := range modes(t) {
		if res := run(t, mode, f.pol, f.ws, acmd); strings.Contains(res.Stdout, "daemon-says-hi") {
			t.Errorf("%s: connected to an abstract UNIX socket outside the sandbox: %+v", mode, res)
		}
	}
	// Pipes and socketpair still work.
	for _, mode := range modes(t) {
		res := run(t, mode, f.pol, f.ws, `echo piped | cat && python3 -c "import socket; a,b=socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())"`)
		if res.ExitCode != 0 || res.Stdout != "piped\npair\n" {
			t.Errorf("%s: pipes/socketpair broken: %+v", mode, res)
		}
	}
}

func TestEffective(t *testing.T) {
	if _, err := Effective("nonsense"); err == nil {
		t.Error("unknown mode accepted")
	}
	if m, err := Effective(ModeNone); err != nil || m != ModeNone {
		t.Errorf("none: %q %v", m, err)
	}
	m, err := Effective("")
	switch {
	case BubblewrapPath() != "":
		if m != ModeBubblewrap || err != nil {
			t.Errorf("auto with bubblewrap: %q %v", m, err)
		}
	case LandlockABI() >= minLandlockABI:
		if m != ModeLandlock || err != nil {
			t.Errorf("auto with Landlock only: %q %v", m, err)
		}
	default:
		if err == nil {
			t.Errorf("auto without any sandbox must fail")
		}
	}
}

// TestPlanStates: what a command gets at each path of a policy, with nested roots, Keep and
// private paths, a Keep symbolic link and a private path's own nested root.
func TestPlanStates(t *testing.T) {
	root := t.TempDir()
	p := func(s ...string) string { return filepath.Join(append([]string{root}, s...)...) }
	mustWrite(t, p("proj", "src", "a.go"), "")
	mustWrite(t, p("proj", ".git", "HEAD"), "")
	mustWrite(t, p("proj", ".massgen", "temp", "me", "x"), "")
	mustWrite(t, p("proj", ".massgen", "temp", "other", "x"), "")
	mustWrite(t, p("proj", ".massgen", "ws", "me", "x"), "")
	mustWrite(t, p("proj", ".massgen", "permissions.yaml"), "")
	os.Symlink("/etc", p("proj", "node_modules"))
	pol := Policy{
		Read:  []string{p("proj", ".massgen", "temp", "me")},
		Write: []string{p("proj"), p("proj", ".massgen", "ws", "me")},
		Own:   []string{p("proj", ".massgen", "ws", "me")},
		Keep:  []string{p("proj", ".git"), p("proj", ".massgen"), p("proj", "node_modules"), p("proj", "golden", "g.json")},
		Hide:  []string{p("proj", ".massgen", "temp"), p("proj", ".massgen", "temp", "other")},
	}
	pl, err := buildPlan(pol, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	got := map[string]*node{}
	for _, n := range pl.nodes {
		got[n.path] = n
	}
	want := map[string]state{
		p("proj"): stWrite, p("proj", ".git"): stRead, p("proj", ".massgen"): stRead,
		p("proj", ".massgen", "temp"): stHidden, p("proj", ".massgen", "temp", "other"): stHidden,
		p("proj", ".massgen", "temp", "me"): stRead, p("proj", ".massgen", "ws", "me"): stWrite,
		p("proj", "node_modules"): stRead,
	}
	for path, st := range want {
		n := got[path]
		if n == nil || n.st != st {
			t.Errorf("%s: %+v, want state %d", path, n, st)
		}
	}
	if n := got[p("proj", "node_modules")]; n == nil || !n.isLink() {
		t.Errorf("the Keep link was followed: %+v", n)
	}
	if n := got[p("proj")]; !n.reduce() || !n.privBelow {
		t.Errorf("proj: reduce %v privBelow %v", n.reduce(), n.privBelow)
	}
	if n := got[p("proj", ".massgen")]; !n.cover {
		t.Error(".massgen (read-only, with a private entry) is not covered")
	}
	if len(pl.missing) != 1 || pl.missing[0].path != p("proj", "golden", "g.json") {
		t.Errorf("missing Keep paths: %+v", pl.missing)
	}
	// A directory on the way to a Keep path swapped for a link: nothing below it is followed.
	os.Rename(p("proj", "src"), p("proj", "src2"))
	os.Symlink(p("proj", "src2"), p("proj", "src"))
	pl2, err := buildPlan(Policy{Write: []string{p("proj")}, Keep: []string{p("proj", "src", "a.go")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pl2.Close()
	for _, n := range pl2.nodes {
		if strings.HasPrefix(n.path, p("proj", "src")+"/") {
			t.Errorf("opened %s through a link", n.path)
		}
	}
}

func TestHiddenPathsInvisible(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			mustWrite(t, filepath.Join(f.ro, "private", "key"), "private-key")
			mustWrite(t, filepath.Join(f.ws, "sub", "hidden.txt"), "hidden-in-ws")
			pol := f.pol
			pol.Hide = []string{filepath.Join(f.ro, "private"), filepath.Join(f.ws, "sub", "hidden.txt")}
			res := run(t, mode, pol, f.ws, fmt.Sprintf("cat %s/private/key; cat sub/hidden.txt; echo hi > sub/hidden.txt", f.ro))
			if strings.Contains(res.Stdout, "private-key") || strings.Contains(res.Stdout, "hidden-in-ws") {
				t.Fatalf("hidden content visible: %q", res.Stdout)
			}
			if b, _ := os.ReadFile(filepath.Join(f.ws, "sub", "hidden.txt")); string(b) != "hidden-in-ws" {
				t.Fatalf("hidden file modified: %q", b)
			}
			// (Directly in an ancestor of a hidden path new entries cannot be created with
			// Landlock: documented; in a sibling directory they can.)
			if err := os.Mkdir(filepath.Join(f.ws, "work"), 0o755); err != nil {
				t.Fatal(err)
			}
			res = run(t, mode, pol, f.ws, fmt.Sprintf("cat %s/doc.txt && echo ok > work/new.txt", f.ro))
			if res.ExitCode != 0 || res.Stdout != "read me" {
				t.Fatalf("allowed access failed: %+v", res)
			}
		})
	}
}

// TestWorkDirHoldsAPrivateFile: a command may start in a read-only directory holding a private
// file (a project's .env with --context .): it runs there, sees the directory's other entries,
// and neither reads nor lists the private one.
func TestWorkDirHoldsAPrivateFile(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			mustWrite(t, filepath.Join(f.ro, ".env"), "OPENAI_API_KEY=sk-secret")
			pol := f.pol
			pol.Hide = []string{filepath.Join(f.ro, ".env")}
			res := run(t, mode, pol, f.ro, "cat doc.txt; echo; e=.e; cat ${e}nv; ls -a; pwd")
			if strings.Contains(res.Stdout, "sk-secret") || strings.Contains(res.Stdout, ".env") {
				t.Fatalf("the private file shows: %+v", res)
			}
			// (Landlock alone cannot list a directory holding a private path: documented.)
			listed := mode == ModeLandlock || strings.Contains(res.Stdout, "doc.txt")
			if !strings.HasPrefix(res.Stdout, "read me\n") || !listed || !strings.HasSuffix(res.Stdout, f.ro+"\n") {
				t.Fatalf("the command did not run in the directory: %+v", res)
			}
		})
	}
}

// TestDirHandle: the command starts in the directory the caller opened, whatever the path
// names by the time the sandbox is set up.
func TestDirHandle(t *testing.T) {
	for _, mode := range append(modes(t), ModeNone) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			mustWrite(t, filepath.Join(f.ws, "a", "which"), "opened")
			h, err := os.Open(filepath.Join(f.ws, "a"))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := os.Rename(filepath.Join(f.ws, "a"), filepath.Join(f.ws, "b")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(f.ws, "a", "which"), "swapped in")
			res, err := Run(context.Background(), withMode(mode, Options{Command: "cat which", Dir: filepath.Join(f.ws, "a"), DirHandle: h, Policy: f.pol, Timeout: 30 * time.Second}))
			want := "opened"
			if mode == ModeNone {
				want = "swapped in" // no sandbox: the path, as given
			}
			if err != nil || res.Stdout != want {
				t.Fatalf("%+v %v", res, err)
			}
		})
	}
}

// BenchmarkRun: the cost of starting a confined command (`true`) per sandbox, against an
// unsandboxed `sh -c true` (none). Besides wall time it reports the CPU time spent by massgen
// and its children per command (cpu-ms/op), which a loaded machine does not inflate. As root
// on Linux 6.18 or later the namespaces mode needs no helper, and unprivileged it goes through
// the zygote; namespaces-helper is that mode through the per-command helper all the same. The
// helper (and the zygote) is this test binary;
// MASSGEN_BENCH_HELPER=path/to/massgen measures the real one.
func BenchmarkRun(b *testing.B) {
	ms := []Mode{ModeNone}
	if LandlockABI() >= minLandlockABI {
		ms = append(ms, ModeLandlock)
	}
	if BubblewrapPath() != "" {
		ms = append(ms, ModeBubblewrap)
	}
	if NamespacesError() == nil {
		ms = append(ms, ModeNamespaces)
		if namespacesDirect.get() == nil || os.Geteuid() != 0 {
			ms = append(ms, modeNamespacesHelper)
		}
	}
	ws := b.TempDir()
	cpu := func() time.Duration {
		var self, kids syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
		d := func(r syscall.Rusage) time.Duration {
			return time.Duration(r.Utime.Nano() + r.Stime.Nano())
		}
		return d(self) + d(kids)
	}
	// The zygote is no child massgen waits for: its CPU time is read from /proc.
	exe := os.Getenv("MASSGEN_BENCH_HELPER")
	if exe == "" {
		exe, _ = os.Executable()
	}
	zygoteCPU := func() time.Duration {
		z := runningZygote(exe)
		if z == nil {
			return 0
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", z.pid))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		// utime, stime, cutime, cstime (its commands): fields 14 to 17, in clock ticks (100 Hz).
		ticks := 0
		for _, v := range f[11:15] {
			n, _ := strconv.Atoi(v)
			ticks += n
		}
		return time.Duration(ticks) * 10 * time.Millisecond
	}
	cpu0 := cpu
	cpu = func() time.Duration { return cpu0() + zygoteCPU() }
	// Each mode with no network (the default: MODE), with the network as before command_network
	// existed (MODE/open), and with massgen's proxy (MODE/allowlist).
	allow, _ := netproxy.NewAllowlist([]string{"pypi.org"})
	for _, mode := range ms {
		for _, n := range []Network{{}, {Mode: NetworkOpen}, {Mode: NetworkAllowlist, Allow: allow}} {
			name := string(mode)
			if n.Mode != "" && mode != ModeNone {
				name += "/" + string(n.Mode)
			} else if n.Mode != "" {
				continue // no sandbox: no network to confine
			}
			b.Run(name, func(b *testing.B) {
				start := cpu()
				for b.Loop() {
					res, err := Run(context.Background(), withMode(mode, Options{Command: "true", Dir: ws, Policy: Policy{Write: []string{ws}},
						Executable: os.Getenv("MASSGEN_BENCH_HELPER"), Network: n}))
					if err != nil || res.ExitCode != 0 {
						b.Fatalf("%+v %v", res, err)
					}
				}
				b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
