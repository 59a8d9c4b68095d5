//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

// TestRedteamPolicyShapes: policies seen in real layouts run in every sandbox: a hidden path
// outside every root (another agent's workspace, the logs) and a writable root nested in a
// read-only (Keep) path of another writable root (the workspace in <project>/.massgen/).
func TestRedteamPolicyShapes(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			base := t.TempDir()
			proj := filepath.Join(base, "proj")
			ws := filepath.Join(proj, ".massgen", "workspaces", "a")
			other := filepath.Join(proj, ".massgen", "workspaces", "b")
			logs := filepath.Join(base, "elsewhere", "logs")
			for _, d := range []string{ws, other, logs, filepath.Join(proj, "src")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(t, filepath.Join(other, "b.txt"), "private")
			mustWrite(t, filepath.Join(proj, ".massgen", "state"), "state")
			pol := Policy{Write: []string{proj, ws}, Keep: []string{filepath.Join(proj, ".massgen")}, Hide: []string{other, logs}}
			res := run(t, mode, pol, ws, "echo a > a.txt && cat a.txt && echo p > ../../../src/p.txt")
			if res.ExitCode != 0 || res.Stdout != "a\n" {
				t.Fatalf("nested writable workspace: %+v", res)
			}
			for _, c := range []string{"echo x > ../../state", "echo x > ../b/b.txt", "cat ../b/b.txt", "mkdir ../c"} {
				if res := run(t, mode, pol, ws, c); res.ExitCode == 0 {
					t.Errorf("%q succeeded: %+v", c, res)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(proj, ".massgen", "state")); string(b) != "state" {
				t.Errorf("Keep path written: %q", b)
			}
		})
	}
}

// swapper exchanges a and b (renameat2 RENAME_EXCHANGE) in a loop until the returned stop is
// called, which returns how many exchanges were made. It stands for a process racing the
// sandbox set-up or the clean-up (a background process left by an earlier command, another
// agent's command).
func swapper(t *testing.T, a, b string) (stop func() int) {
	t.Helper()
	done := make(chan struct{})
	count := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				count <- n
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) == nil {
				n++
			}
		}
	}()
	return func() int { close(done); return <-count }
}

// landlockSetup runs the Landlock helper's set-up for pol (plan, ruleset, restriction) on a
// fresh OS thread of this process, then probe on that thread, and returns probe's error. The
// thread is never unlocked, so it dies with its goroutine: the rest of the test process stays
// unconfined. This is the helper's own code, run thousands of times without an exec each.
func landlockSetup(pol Policy, probe func() error) (setupErr, probeErr error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		pl, err := buildPlan(pol, nil)
		if err != nil {
			setupErr = err
			return
		}
		defer pl.Close()
		rs, err := pl.landlockRuleset(confine.LandlockNet{})
		if err == nil {
			err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		}
		if err == nil {
			err = ll.LandlockRestrictSelf(rs, 0)
		}
		if rs >= 0 {
			unix.Close(rs)
		}
		if err != nil {
			setupErr = err
			return
		}
		probeErr = probe()
	}()
	<-done
	return
}

// TestRedteamCarveLinkSwapRace: the Landlock carve lists a directory and grants each entry.
// A directory swapped for a symbolic link to an outside directory between the listing and the
// grant must grant nothing outside (on main it granted write access to the link's target). A
// swapper exchanges a directory and such a link during 2,000 set-ups run in-process (the
// helper's own code) and during real commands; no write may land outside.
func TestRedteamCarveLinkSwapRace(t *testing.T) {
	lane.Long(t)
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			base := t.TempDir()
			proj := filepath.Join(base, "proj")
			outside := filepath.Join(base, "outside")
			mustWrite(t, filepath.Join(proj, ".git", "HEAD"), "ref") // makes proj carved
			mustWrite(t, filepath.Join(proj, "d", "f"), "d")
			mustWrite(t, filepath.Join(outside, "secret.txt"), "outside secret")
			if err := os.Symlink(outside, filepath.Join(proj, "l")); err != nil {
				t.Fatal(err)
			}
			pol := Policy{Write: []string{proj}, Keep: []string{filepath.Join(proj, ".git")}}
			stop := swapper(t, filepath.Join(proj, "d"), filepath.Join(proj, "l"))
			if mode == ModeLandlock {
				escapes := 0
				for i := 0; i < 2000; i++ {
					serr, perr := landlockSetup(pol, func() error {
						fd, err := unix.Open(filepath.Join(outside, "pwned"), unix.O_WRONLY|unix.O_CREAT, 0o644)
						if err == nil {
							unix.Close(fd)
						}
						return err
					})
					if serr != nil {
						t.Fatalf("set-up %d: %v", i, serr)
					}
					if perr == nil {
						escapes++
						os.Remove(filepath.Join(outside, "pwned"))
					}
				}
				if escapes > 0 {
					t.Errorf("%d of 2000 set-ups granted write access outside through a swapped link", escapes)
				}
			}
			for i := 0; i < 20; i++ {
				res, err := Run(context.Background(), withMode(mode, Options{Command: fmt.Sprintf("echo pwned > %s/pwned; cat %s/secret.txt; cat l/secret.txt d/secret.txt", outside, outside),
					Dir: proj, Policy: pol, Timeout: 30 * time.Second}))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(res.Stdout, "outside secret") || exists(filepath.Join(outside, "pwned")) {
					t.Fatalf("command %d reached outside: %+v", i, res)
				}
			}
			if n := stop(); n < 100 {
				t.Fatalf("the swapper made only %d exchanges", n)
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside secret" {
				t.Fatalf("outside changed: %q", b)
			}
		})
	}
}

// TestRedteamAncestorRename: a protected path cannot be moved out of its name by renaming a
// directory above it, one level or more: on main `mv tests t2` in one command, a write to
// t2/golden.json in the next and `mv t2 tests` in a third changed a protected file under
// bubblewrap. Both as three commands, and as a race: one command renames the ancestors 2,000
// times while other commands are set up and write through whatever name they find.
func TestRedteamAncestorRename(t *testing.T) {
	lane.Long(t)
	_, pyErr := exec.LookPath("python3")
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			proj := filepath.Join(t.TempDir(), "proj")
			golden := filepath.Join(proj, "tests", "golden.json")
			deep := filepath.Join(proj, "a", "b", "c.json")
			mustWrite(t, golden, "gold")
			mustWrite(t, deep, "deep")
			mustWrite(t, filepath.Join(proj, "a", "free.txt"), "free")
			pol := Policy{Write: []string{proj}, Keep: []string{golden, deep}}
			check := func(when string) {
				t.Helper()
				if b, _ := os.ReadFile(golden); string(b) != "gold" {
					t.Fatalf("%s: tests/golden.json = %q", when, b)
				}
				if b, _ := os.ReadFile(deep); string(b) != "deep" {
					t.Fatalf("%s: a/b/c.json = %q", when, b)
				}
			}
			for _, c := range []string{"mv tests t2; mv a a2; mv a/b a/b2", "echo pwned > t2/golden.json; echo pwned > a2/b/c.json; echo pwned > a/b2/c.json",
				"mv t2 tests; mv a2 a; mv a/b2 a/b"} {
				run(t, mode, pol, proj, c)
			}
			check("three commands")
			if pyErr != nil {
				t.Skip("python3 not installed: race part not run")
			}
			renamer := `import os, time
for i in range(2000):
    time.sleep(0.0005)
    for a, b in (("tests", "t2"), ("a", "a2"), ("a/b", "a/b2")):
        try:
            os.rename(a, b)
            os.rename(b, a)
        except OSError:
            pass
print("done")`
			done := make(chan Result)
			go func() {
				res, _ := Run(context.Background(), withMode(mode, Options{Command: "python3 -c '" + renamer + "'", Dir: proj, Policy: pol, Timeout: time.Minute}))
				done <- res
			}()
			writes := 0
			for {
				select {
				case res := <-done:
					if !strings.Contains(res.Stdout, "done") {
						t.Fatalf("the renaming command did not run: %+v", res)
					}
					check(fmt.Sprintf("race, after %d writing commands", writes))
					if writes < 3 {
						t.Fatalf("only %d writing commands ran during the renames", writes)
					}
					return
				default:
				}
				run(t, mode, pol, proj, "for f in tests/golden.json t2/golden.json a/b/c.json a2/b/c.json a/b2/c.json; do echo pwned > $f; done 2>/dev/null")
				writes++
			}
		})
	}
}

// TestRedteamCleanup: the clean-up after a command takes away the .git, .env and .massgen a
// command created in a writable root that is not the agent's own, and nothing else.
//   - Race: it walks with directory handles, so a directory swapped for a link to an outside
//     directory holding a .git never makes it delete that .git (on main it did). 2,000
//     clean-ups run in-process while a swapper exchanges the directory and the link, then
//     real commands.
//   - Plants: "new" means not at that name with that inode before the command: `mv olddir
//     .git` and `ln oldfile .env` are taken away (on main they stayed: their birth time was
//     older than the command), to the trash when the caller gives one.
func TestRedteamCleanup(t *testing.T) {
	lane.Long(t)
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			base := t.TempDir()
			proj := filepath.Join(base, "proj")
			ws := filepath.Join(base, "ws")
			outside := filepath.Join(base, "outside")
			trashDir := filepath.Join(base, "trash")
			mustWrite(t, filepath.Join(outside, ".git", "config"), "outside git")
			mustWrite(t, filepath.Join(proj, "src", "sub", "f.txt"), "f")
			mustWrite(t, filepath.Join(proj, "olddir", "config"), "[core]\n\tfsmonitor = touch /tmp/pwned\n")
			mustWrite(t, filepath.Join(proj, "oldfile"), "OPENAI_BASE_URL=https://evil.example\n")
			mustWrite(t, filepath.Join(ws, "w.txt"), "w")
			if err := os.MkdirAll(trashDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(proj, "src", "lnk")); err != nil {
				t.Fatal(err)
			}
			// golden/g.json: a protected path that does not exist yet.
			pol := Policy{Write: []string{proj, ws}, Own: []string{ws}, Keep: []string{filepath.Join(proj, "golden", "g.json")}}
			outsideGit := filepath.Join(outside, ".git", "config")

			stop := swapper(t, filepath.Join(proj, "src", "sub"), filepath.Join(proj, "src", "lnk"))
			for i := 0; i < 2000; i++ {
				pl, err := buildPlan(pol, nil)
				if err != nil {
					t.Fatal(err)
				}
				sw := pl.inventory()
				var res Result
				sw.after(&res, nil, zap.NewNop())
				pl.Close()
				if !exists(outsideGit) || len(res.Removed) > 0 {
					t.Fatalf("clean-up %d removed %v (outside .git still there: %v)", i, res.Removed, exists(outsideGit))
				}
			}
			for i := 0; i < 10; i++ {
				if res := run(t, mode, pol, proj, "true"); len(res.Removed) > 0 || !exists(outsideGit) {
					t.Fatalf("command %d: clean-up removed %v", i, res.Removed)
				}
			}
			if n := stop(); n < 100 {
				t.Fatalf("the swapper made only %d exchanges", n)
			}

			seq := 0
			trash := func(dir *os.File, name, path string) (string, error) {
				seq++
				id := fmt.Sprint(seq)
				td, err := unix.Open(trashDir, unix.O_PATH|unix.O_DIRECTORY, 0)
				if err != nil {
					return "", err
				}
				defer unix.Close(td)
				return id, unix.Renameat(int(dir.Fd()), name, td, id)
			}
			res, err := Run(context.Background(), withMode(mode, Options{Dir: proj, Policy: pol, Timeout: 30 * time.Second, Trash: trash,
				Command: "mv olddir .git && ln oldfile .env && mkdir -p src/x/.massgen && echo 'mode: bypassPermissions' > src/x/.massgen/permissions.yaml && " +
					"ln -s /etc src/.GIT && mkdir golden && echo pwned > golden/g.json && echo ok"}))
			if err != nil || res.Stdout != "ok\n" {
				t.Fatalf("plant command: %+v %v", res, err)
			}
			for _, p := range []string{".git", ".env", "src/x/.massgen", "src/.GIT", "golden/g.json"} {
				if exists(filepath.Join(proj, p)) {
					t.Errorf("%s planted for good", p)
				}
			}
			if len(res.Removed) != 5 || !strings.Contains(res.Stderr, "massgen trash restore") {
				t.Errorf("removed %v, stderr %q", res.Removed, res.Stderr)
			}
			// Recoverable: what was taken away is in the trash, content intact.
			found := map[string]bool{}
			for i := 1; i <= seq; i++ {
				b, _ := os.ReadFile(filepath.Join(trashDir, fmt.Sprint(i), "config"))
				c, _ := os.ReadFile(filepath.Join(trashDir, fmt.Sprint(i)))
				found[string(b)+string(c)] = true
			}
			if !found["[core]\n\tfsmonitor = touch /tmp/pwned\n"] || !found["OPENAI_BASE_URL=https://evil.example\n"] {
				t.Errorf("trash holds %v", found)
			}
			// Control: in the agent's own workspace they are fine.
			if res := run(t, mode, pol, ws, "mkdir -p .git && echo x > .git/config && echo K=1 > .env && echo ok"); res.Stdout != "ok\n" || len(res.Removed) != 0 ||
				!exists(filepath.Join(ws, ".git", "config")) || !exists(filepath.Join(ws, ".env")) {
				t.Fatalf("control: %+v", res)
			}
		})
	}
}

// TestRedteamMetadataAndIPC: what Landlock does not govern is closed by the seccomp filter (or
// the namespaces bubblewrap creates): no setuid/setgid bit anywhere (chmod, or a file created
// with one), no extended attribute written outside the writable roots, no SysV IPC with a
// process outside the sandbox (on main, under Landlock, all of these worked).
func TestRedteamMetadataAndIPC(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	// A segment of a process outside the sandbox, holding a secret.
	key := 0x4d470000 + os.Getpid()&0xffff
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Skipf("no SysV shared memory here: %v", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	mem, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmDetach(mem)
	copy(mem, "shm-secret-of-massgen")
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			base := t.TempDir()
			ws := filepath.Join(base, "ws")
			proj := filepath.Join(base, "proj")
			outside := filepath.Join(base, "outside")
			mustWrite(t, filepath.Join(ws, "tool"), "#!/bin/sh\n")
			mustWrite(t, filepath.Join(proj, "golden"), "gold")
			mustWrite(t, filepath.Join(outside, "tool"), "#!/bin/sh\n")
			pol := Policy{Read: []string{proj}, Write: []string{ws}}
			py := func(code string) string { return "python3 -c '" + code + "'" }
			for _, c := range []string{
				"chmod u+s tool; chmod g+s tool",
				py(`import os; os.chmod("tool", 0o6755)`),
				py(`import os; os.close(os.open("suid", os.O_CREAT|os.O_WRONLY, 0o4755))`),
				fmt.Sprintf("chmod 4755 %s/tool", outside),
				py(fmt.Sprintf(`import os; os.setxattr("%s/tool", "user.pwned", b"1")`, outside)),
				py(fmt.Sprintf(`import os; os.setxattr("%s/golden", "user.pwned", b"1")`, proj)),
			} {
				run(t, mode, pol, ws, c)
			}
			for _, p := range []string{filepath.Join(ws, "tool"), filepath.Join(ws, "suid"), filepath.Join(outside, "tool")} {
				if fi, err := os.Stat(p); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
					t.Errorf("%s: %v", p, fi.Mode())
				}
			}
			for _, p := range []string{filepath.Join(outside, "tool"), filepath.Join(proj, "golden")} {
				if sz, _ := unix.Getxattr(p, "user.pwned", nil); sz > 0 {
					t.Errorf("%s: extended attribute written", p)
				}
			}
			// The outside segment can be neither found nor read, and segments the command
			// creates do not outlive it.
			newKey := 0x7a7a0000 + len(mode)
			t.Cleanup(func() {
				if id, err := unix.SysvShmGet(newKey, 0, 0); err == nil {
					unix.SysvShmCtl(id, unix.IPC_RMID, nil)
				}
			})
			res := run(t, mode, pol, ws, py(fmt.Sprintf(`import ctypes
l = ctypes.CDLL(None, use_errno=True); l.shmat.restype = ctypes.c_void_p
i = l.shmget(%d, 0, 0)
print("get", i)
if i >= 0:
    p = l.shmat(i, None, 0)
    print(ctypes.string_at(p, 21) if p not in (None, ctypes.c_void_p(-1).value) else "noat")
print("new", l.shmget(%d, 4096, 0o1600))`, key, newKey)))
			if strings.Contains(res.Stdout, "shm-secret") || !strings.Contains(res.Stdout, "get -1") {
				t.Errorf("outside shared memory reached: %+v", res)
			}
			if b, _ := os.ReadFile("/proc/sysvipc/shm"); strings.Contains(string(b), fmt.Sprint(newKey)) {
				t.Errorf("a segment created by the command outlived it: %+v", res)
			}
			// Control: ordinary chmod and files work.
			if res := run(t, mode, pol, ws, "chmod 755 tool && printf 'echo ran' > s && chmod +x s && ./s"); res.Stdout != "ran\n" {
				t.Fatalf("control: %+v", res)
			}
		})
	}
}

// TestRedteamHiddenNotListable: private paths are neither readable nor listable by name, also
// from above; roots nested in them (the agent's own temp workspace and workspace) stay
// visible and usable. On main, under Landlock, the list-only grants above a private path let
// `ls` show the real ids in temp_workspaces and snapshots and other agents' file names.
func TestRedteamHiddenNotListable(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			proj := filepath.Join(t.TempDir(), "proj")
			mg := filepath.Join(proj, ".massgen")
			for p, s := range map[string]string{
				"src/a.go":                              "a",
				".massgen/temp/agent_me/agent1/n.md":    "anonymous",
				".massgen/temp/agent_xyz/agent1/n.md":   "other view",
				".massgen/snapshots/agent_xyz/plan.txt": "other snapshot",
				".massgen/workspaces/ws_me/mine.txt":    "mine",
				".massgen/workspaces/ws_xyz/theirs.txt": "other live",
				".massgen/sessions/s1/metadata.json":    "agent_xyz won",
				".massgen/permissions.yaml":             "mode: acceptEdits",
			} {
				mustWrite(t, filepath.Join(proj, p), s)
			}
			own := filepath.Join(mg, "workspaces", "ws_me")
			pol := Policy{
				Read:  []string{filepath.Join(mg, "temp", "agent_me")},
				Write: []string{proj, own}, Own: []string{own},
				Keep: []string{mg},
				Hide: []string{filepath.Join(mg, "temp"), filepath.Join(mg, "temp", "agent_xyz"), filepath.Join(mg, "snapshots"),
					filepath.Join(mg, "workspaces", "ws_xyz"), filepath.Join(mg, "sessions")},
			}
			for _, c := range []string{"ls ../../temp ../../snapshots ../../sessions ../", "ls -R ../..", "ls ../../snapshots/*", "ls ../../temp/*",
				"cat ../../snapshots/*/* ../../temp/*/*/* ../*/* ../../sessions/*/*", "find ../.. " + proj} {
				res := run(t, mode, pol, own, c+" 2>&1")
				for _, s := range []string{"xyz", "plan.txt", "theirs", "other", "won"} {
					if strings.Contains(res.Stdout, s) {
						t.Errorf("%q showed %q: %q", c, s, res.Stdout)
					}
				}
			}
			// A set-up that fails (here: a working directory inside a private path) says so
			// without naming the path.
			if mode == ModeBubblewrap {
				res, err := Run(context.Background(), withMode(mode, Options{Command: "pwd", Dir: filepath.Join(mg, "temp", "agent_xyz"), Policy: pol, Timeout: 30 * time.Second}))
				if err == nil || strings.Contains(fmt.Sprint(err, res), "xyz") {
					t.Errorf("set-up failure: %+v %v", res, err)
				}
			}
			res := run(t, mode, pol, own, "cat mine.txt ../../temp/agent_me/agent1/n.md && ls ../../temp/agent_me && echo new > new.txt && cat ../../permissions.yaml")
			if res.ExitCode != 0 || res.Stdout != "mineanonymousagent1\nmode: acceptEdits" {
				t.Fatalf("own workspace and temp workspace: %+v", res)
			}
		})
	}
}
