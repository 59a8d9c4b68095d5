//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
)

// zygotePIDLine prefixes the zygote's pid in the unprivileged child's output: the parent checks
// that it exited with the child.
const zygotePIDLine = "ZYGOTE-PID "

// runningZygote is this process's zygote for exe (nil: none running).
func runningZygote(exe string) *zygote {
	zygotes.mu.Lock()
	defer zygotes.mu.Unlock()
	if z := zygotes.byExe[exe]; z != nil && z.alive() {
		return z
	}
	return nil
}

// zygoteChild runs, as nobody, the namespaces mode through the zygote: concurrent commands,
// a timeout that ends the command's tree, the zygote killed while a command runs, and a
// zygote that cannot start (the helper takes over). Never is a command run unconfined.
func zygoteChild(t *testing.T, pol Policy, proj, ws, outside string) {
	if err := namespacesDirect.get(); err == nil {
		t.Fatal("the child builds views in-process: it should be unprivileged")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// confined checks one command through whatever path the mode takes now.
	confined := func(t *testing.T) {
		t.Helper()
		// No capability, no descriptor but the standard ones (3: ls's own directory).
		cmd := "cat .git/HEAD; echo pwned > .git/HEAD; cat " + outside + "/secret.txt; echo /proc/[0-9]*; id -u; " +
			"grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status | tr -s '\\t' ' '; ls /proc/self/fd"
		res := run(t, ModeNamespaces, pol, proj, cmd)
		want := "ref/proc/1\n65534\nCapInh: 0000000000000000\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\n" +
			"CapAmb: 0000000000000000\n0\n1\n2\n3\n"
		if res.Stdout != want || res.ExitCode != 0 {
			t.Fatalf("%q: %+v", cmd, res)
		}
	}
	confined(t)
	z := runningZygote(exe)
	if z == nil {
		t.Fatalf("no zygote after a namespaces command (failed: %v)", zygotes.failed[exe])
	}
	fmt.Printf("%s%d\n", zygotePIDLine, z.pid)
	// It shares massgen's mount namespace (each command copies massgen's current mounts) and
	// has a user namespace of its own.
	for ns, same := range map[string]bool{"mnt": true, "user": false} {
		mine, err1 := os.Readlink("/proc/self/ns/" + ns)
		its, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", z.pid, ns))
		if err1 != nil || err2 != nil || (mine == its) != same {
			t.Fatalf("%s namespace: massgen %s, zygote %s (%v %v)", ns, mine, its, err1, err2)
		}
	}

	t.Run("concurrent", func(t *testing.T) {
		const workers, each = 4, 25
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			go func() {
				for i := 0; i < each; i++ {
					want := fmt.Sprintf("%d.%d", w, i)
					cmd := "cat .git/HEAD; cat " + outside + "/secret.txt; echo /proc/[0-9]*; echo " + want + "; exit " + strconv.Itoa(i%3)
					res, err := Run(context.Background(), Options{Mode: ModeNamespaces, Command: cmd, Dir: proj, Policy: pol, Timeout: 30 * time.Second})
					if err != nil || res.Stdout != "ref/proc/1\n"+want+"\n" || res.ExitCode != i%3 || !strings.Contains(res.Stderr, "secret.txt") {
						errs <- fmt.Errorf("%q: %+v %v", cmd, res, err)
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
		if got := runningZygote(exe); got != z {
			t.Fatalf("the zygote changed during concurrent commands")
		}
	})

	t.Run("timeout ends the tree", func(t *testing.T) {
		marker := fmt.Sprintf("3603.%d", os.Getpid())
		res, err := Run(context.Background(), Options{Mode: ModeNamespaces, Dir: ws, Policy: pol, Timeout: 300 * time.Millisecond,
			Command: "setsid sleep " + marker + " >/dev/null 2>&1 </dev/null & sleep " + marker})
		if err != nil || !res.TimedOut {
			t.Fatalf("%+v %v", res, err)
		}
		waitGone(t, marker)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Run(ctx, Options{Mode: ModeNamespaces, Dir: ws, Policy: pol, Command: "sleep " + marker}); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled: %v", err)
		}
		waitGone(t, marker)
	})

	t.Run("zygote killed mid-run", func(t *testing.T) {
		z := runningZygote(exe)
		if z == nil {
			t.Fatal("no zygote")
		}
		fifo := filepath.Join(ws, "fifo")
		if err := unix.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		marker := fmt.Sprintf("3604.%d", os.Getpid())
		type ran struct {
			res Result
			err error
		}
		done := make(chan ran, 1)
		go func() {
			res, err := Run(context.Background(), Options{Mode: ModeNamespaces, Dir: ws, Policy: pol, Timeout: 60 * time.Second,
				Command: "setsid sleep " + marker + " >/dev/null 2>&1 </dev/null & echo up > fifo; sleep " + marker})
			done <- ran{res, err}
		}()
		// The command is running once it wrote to the fifo.
		b, err := os.ReadFile(fifo)
		if err != nil || string(b) != "up\n" {
			t.Fatalf("fifo: %q %v", b, err)
		}
		if err := syscall.Kill(z.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err == nil {
			t.Fatalf("a command whose zygote was killed reports success: %+v", r.res)
		}
		waitGone(t, marker)
		<-z.done
		confined(t)
		if nz := runningZygote(exe); nz == nil || nz == z {
			t.Fatalf("no new zygote after the old one died")
		} else {
			fmt.Printf("%s%d\n", zygotePIDLine, nz.pid)
		}
	})

	t.Run("zygote cannot start", func(t *testing.T) {
		// A helper binary that refuses to be the zygote: each command re-executes it.
		script := filepath.Join(t.TempDir(), "massgen")
		mustWrite(t, script, "#!/bin/sh\n[ \"$1\" = "+zygoteArg+" ] && exit 3\nexec "+exe+" \"$@\"\n")
		if err := os.Chmod(script, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			cmd := "cat .git/HEAD; echo pwned > .git/HEAD; cat " + outside + "/secret.txt; echo /proc/[0-9]*"
			res, err := Run(context.Background(), Options{Mode: ModeNamespaces, Command: cmd, Dir: proj, Policy: pol, Executable: script,
				Timeout: 30 * time.Second, Log: zaptest.NewLogger(t)})
			if err != nil || res.Stdout != "ref/proc/1\n" {
				t.Fatalf("%q through the helper: %+v %v", cmd, res, err)
			}
		}
		zygotes.mu.Lock()
		ferr := zygotes.failed[script]
		zygotes.mu.Unlock()
		if ferr == nil || runningZygote(script) != nil {
			t.Fatalf("the refusing zygote is recorded as running (failed: %v)", ferr)
		}
	})
	if b, _ := os.ReadFile(filepath.Join(proj, ".git", "HEAD")); string(b) != "ref" {
		t.Errorf(".git/HEAD changed: %q", b)
	}
}

// waitZygoteGone waits (bounded) for the zygote pid (a decimal string) to exit.
func waitZygoteGone(t *testing.T, pid string) {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(pid))
	if err != nil {
		t.Fatalf("zygote pid %q", pid)
	}
	fd, err := unix.PidfdOpen(n, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n)); !strings.Contains(string(b), zygoteArg) {
		return // the pid is another process's now
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if k, err := unix.Poll(fds, 10_000); err != nil || k == 0 {
		syscall.Kill(n, syscall.SIGKILL)
		t.Fatalf("the zygote %d outlived massgen (%v)", n, err)
	}
}
