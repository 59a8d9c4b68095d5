//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Runs that end badly (issue 23): a signal, a full disk, a closed pipe. Each still leaves a
// record of what it changed, and `massgen undo` takes back exactly that run's changes.

// deliverThenBlock is a solo model that answers, then as the final agent makes calls (chosen
// from the request) and, once their results are back, fires delivered and never replies again:
// the run is stopped while the final agent delivers.
func deliverThenBlock(delivered *signal, calls func(tr turn) []toolCall) func(turn) reply {
	return func(tr turn) reply {
		switch {
		case !tr.final:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "ready to deliver"})}}
		case tr.step == 0:
			return reply{calls: calls(tr)}
		default:
			delivered.fire()
			return reply{block: true}
		}
	}
}

// waitFor waits for s (or the process's end, which fails the test).
func waitFor(t *testing.T, s *started, sig *signal, what string) {
	t.Helper()
	select {
	case <-sig.C():
	case <-s.done:
		t.Fatalf("massgen ended before %s: %v\nstderr:\n%s", what, s.err, s.stderr)
	case <-time.After(time.Minute):
		t.Fatalf("timed out waiting for %s\nstderr:\n%s", what, s.stderr)
	}
}

// Item 1: run 1 creates s0.txt; run 2 is stopped (SIGTERM, SIGKILL) while its final agent
// delivers. `massgen undo` takes back exactly run 2's changes (an interrupted turn, recovered
// from its journal), says so, and leaves run 1's file; `sessions show` lists the turn.
func TestUndoAfterInterruptedDelivery(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			proj := filepath.Join(dir, "proj")
			s0, keep, r2 := filepath.Join(proj, "s0.txt"), filepath.Join(proj, "keep.txt"), filepath.Join(proj, "r2.txt")
			writeFile(t, keep, "original\n")
			delivered := newSignal()
			p := newProvider(t, map[string]func(turn) reply{
				"first": deliverer(func(tr turn) ([]toolCall, string) {
					return []toolCall{tc("write_file", map[string]any{"path": s0, "content": "run one\n"})}, "Run one."
				}),
				"second": deliverThenBlock(delivered, func(tr turn) []toolCall {
					return []toolCall{
						tc("write_file", map[string]any{"path": keep, "content": "changed by run two\n"}),
						tc("write_file", map[string]any{"path": r2, "content": "run two\n"}),
					}
				}),
			})
			writeFile(t, filepath.Join(dir, "one.yaml"), soloConfig(p, "first"))
			writeFile(t, filepath.Join(dir, "two.yaml"), soloConfig(p, "second"))
			if r := run(t, dir, "--config", "one.yaml", "--context", "proj", "First task"); r.code != 0 || !exists(s0) {
				t.Fatalf("run 1: exit %d\n%s", r.code, r.stderr)
			}
			s := start(t, dir, "", "--config", "two.yaml", "--context", "proj", "--display", "plain", "Second task")
			waitFor(t, s, delivered, "the delivery")
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := s.wait(t, 30*time.Second)
			if sig == syscall.SIGTERM && code != 143 || sig == syscall.SIGKILL && code != 137 {
				t.Fatalf("run 2: exit %d after %v\n%s", code, sig, s.stderr)
			}
			if readFile(t, r2) != "run two\n" {
				t.Fatal("run 2 did not deliver")
			}
			logs, _ := filepath.Glob(filepath.Join(dir, ".massgen", "logs", "log_*"))
			if len(logs) != 2 {
				t.Fatalf("log folders: %v", logs)
			}
			run2 := filepath.Base(logs[1])

			u := run(t, dir, "undo")
			if u.code != 0 {
				t.Fatalf("undo: exit %d\nstdout:\n%s\nstderr:\n%s", u.code, u.stdout, u.stderr)
			}
			// SIGTERM: the run saves its turn as cancelled; SIGKILL: the next start (here undo)
			// recovers it from its journal as interrupted.
			status := map[syscall.Signal]string{syscall.SIGTERM: "cancelled", syscall.SIGKILL: "interrupted"}[sig]
			if !strings.Contains(u.stderr, status) || !strings.Contains(u.stderr, run2) {
				t.Errorf("undo does not say it takes back run 2's %s turn (%s):\n%s", status, run2, u.stderr)
			}
			if exists(r2) || readFile(t, keep) != "original\n" {
				t.Errorf("run 2's changes are still there: r2.txt exists %v, keep.txt %q", exists(r2), readFile(t, keep))
			}
			if readFile(t, s0) != "run one\n" {
				t.Error("undo took back run 1's file")
			}
			show := run(t, dir, "sessions", "show")
			if show.code != 0 || !strings.Contains(show.stdout, "Ended:   "+status) || !strings.Contains(show.stdout, r2) {
				t.Errorf("sessions show does not list the %s turn: exit %d\n%s%s", status, show.code, show.stdout, show.stderr)
			}
			// The record is used once: undo again steps back to run 1 (issue 26 item 9).
			run1 := filepath.Base(logs[0])
			if again := run(t, dir, "undo"); again.code != 0 || exists(s0) || !strings.Contains(again.stderr, "(run "+run1) || exists(r2) {
				t.Errorf("a second undo: exit %d, s0.txt exists %v, want run 1 (%s) taken back\n%s%s", again.code, exists(s0), run1, again.stdout, again.stderr)
			}
		})
	}
}

// Item 2: the disk fills while the session is saved. The run says "Not saved" (exit 4) and
// leaves no empty session folder; `massgen undo` takes back the delivered file and `--continue`
// resumes the session the turn is recovered into.
func TestDiskFullAtSessionSave(t *testing.T) {
	dir := smallDisk(t, "7m")
	proj := filepath.Join(dir, "proj")
	delivered := filepath.Join(proj, "d.txt")
	writeFile(t, filepath.Join(proj, "keep.txt"), "keep\n")
	ws := filepath.Join(dir, ".massgen", "workspaces", "workspace1")
	p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
		switch {
		case tr.has("Next task") && tr.final:
			return reply{text: "next answer"}
		case tr.has("Next task"):
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "next"})}}
		case tr.final && tr.step == 0:
			return reply{calls: []toolCall{tc("write_file", map[string]any{"path": delivered, "content": "delivered\n"})}}
		case tr.final:
			return reply{text: "presented"}
		case tr.step == 0:
			return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(ws, "big.bin"), "content": strings.Repeat("x", 4<<20)})}}
		default:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "big.bin"})}}
		}
	}})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"solo", "m"}))
	res := run(t, dir, "--config", "cfg.yaml", "--context", "proj", "--display", "plain", "Make a big file")
	if res.code != 4 || !strings.Contains(res.stderr, "Not saved: turn 1 was not saved in the session") {
		t.Fatalf("exit %d, want 4 and Not saved\n%s", res.code, res.stderr)
	}
	if readFile(t, delivered) != "delivered\n" {
		t.Fatal("the file was not delivered")
	}
	if s, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "session_*")); len(s) != 0 {
		t.Errorf("session folders after a failed save: %v", s)
	}
	u := run(t, dir, "undo")
	if u.code != 0 || exists(delivered) {
		t.Fatalf("undo: exit %d, d.txt exists %v\nstdout:\n%s\nstderr:\n%s", u.code, exists(delivered), u.stdout, u.stderr)
	}
	if readFile(t, filepath.Join(proj, "keep.txt")) != "keep\n" {
		t.Error("undo touched a file the turn did not change")
	}
	if err := os.Remove(filepath.Join(ws, "big.bin")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	c := run(t, dir, "--continue", "--display", "plain", "Next task")
	if c.code != 0 || c.stdout != "next answer\n" || !strings.Contains(c.stderr, "Continuing session") {
		t.Errorf("--continue: exit %d, stdout %q\n%s", c.code, c.stdout, c.stderr)
	}
}

// fillDisk writes a file at path that leaves about leave bytes free on its filesystem.
func fillDisk(t *testing.T, path string, leave int64) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	if free <= leave {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for n := free - leave; n > 0; n -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), n)]); err != nil {
			break
		}
	}
}

// Item 3: the disk fills while the journal keeps the "after" copies. The turn is not reported
// saved (Not saved, exit 4), the text file is not called binary, and once space is freed `undo`
// restores it without a false conflict.
func TestDiskFullDuringAfterCopies(t *testing.T) {
	dir := smallDisk(t, "4m")
	proj := t.TempDir() // the user's files are elsewhere: only massgen's records are short of space
	f := filepath.Join(proj, "f.txt")
	writeFile(t, f, "original\n")
	var big strings.Builder
	for i := 0; big.Len() < 1<<20; i++ {
		fmt.Fprintf(&big, "line %07d\n", i)
	}
	filler := filepath.Join(dir, "filler")
	p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
		switch {
		case !tr.final:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "ready"})}}
		case tr.step == 0:
			return reply{calls: []toolCall{tc("write_file", map[string]any{"path": f, "content": big.String()})}}
		default:
			fillDisk(t, filler, 256<<10) // the write landed: now the disk is all but full
			return reply{text: "written"}
		}
	}})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"solo", "m"}))
	res := run(t, dir, "--config", "cfg.yaml", "--context", proj, "--display", "plain", "Write f")
	if res.code != 4 || !strings.Contains(res.stderr, "Not saved: ") || !strings.Contains(res.stderr, "no space left on device") {
		t.Errorf("exit %d, want 4 with Not saved\n%s", res.code, res.stderr)
	}
	if strings.Contains(res.stderr, "Saved turn") {
		t.Errorf("the turn was said saved:\n%s", res.stderr)
	}
	for _, l := range strings.Split(res.stderr, "\n") {
		if strings.Contains(l, f) && strings.Contains(l, "binary") {
			t.Errorf("the text file is called binary: %q", l)
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	u := run(t, dir, "undo")
	if u.code != 0 || readFile(t, f) != "original\n" {
		t.Errorf("undo: exit %d, f.txt %.20q\nstdout:\n%s\nstderr:\n%s", u.code, readFile(t, f), u.stdout, u.stderr)
	}
}

// Item 4: restoring from the trash onto another filesystem that is full fails without leaving
// a truncated file (or a temp file) at the original path; a retry once space is freed restores
// it whole.
func TestTrashRestoreAcrossDevicesOnFullDisk(t *testing.T) {
	dir := t.TempDir() // .massgen (and the trash) on the test's disk
	proj := smallDisk(t, "4m")
	big := filepath.Join(proj, "big.txt")
	content := strings.Repeat("0123456789abcde\n", 1572864/16)
	writeFile(t, big, content)
	p := newProvider(t, map[string]func(turn) reply{"m": deliverer(func(tr turn) ([]toolCall, string) {
		return []toolCall{
			tc("read_file", map[string]any{"path": big}),
			tc("delete_file", map[string]any{"path": big}),
		}, "deleted"
	})})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
	if r := run(t, dir, "--config", "cfg.yaml", "--context", proj, "Delete big.txt"); r.code != 0 || exists(big) {
		t.Fatalf("run: exit %d, big.txt exists %v\n%s", r.code, exists(big), r.stderr)
	}
	l := run(t, dir, "trash", "list", "--json")
	var entries []struct {
		ID           string `json:"id"`
		OriginalPath string `json:"original_path"`
	}
	if err := json.Unmarshal([]byte(l.stdout), &entries); err != nil || len(entries) != 1 || entries[0].OriginalPath != big {
		t.Fatalf("trash list: %v %q", err, l.stdout)
	}
	filler := filepath.Join(proj, "filler")
	fillDisk(t, filler, 300<<10)
	r := run(t, dir, "trash", "restore", entries[0].ID)
	if r.code == 0 {
		t.Fatalf("restore onto a full disk succeeded?\n%s%s", r.stdout, r.stderr)
	}
	if exists(big) {
		fi, _ := os.Stat(big)
		t.Errorf("a failed restore left %s (%d bytes)", big, fi.Size())
	}
	if left := tempFiles(t, proj); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r = run(t, dir, "trash", "restore", entries[0].ID)
	if r.code != 0 || readFile(t, big) != content {
		t.Errorf("retry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Item 5: Ctrl-C in a piped session ends it with 130: no false success, and the next task never
// runs.
func TestPipedCtrlCEndsTheSession(t *testing.T) {
	for name, stdin := range map[string]string{"one task": "First task\n", "two tasks": "First task\nSecond task\n"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			asked := newSignal()
			p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
				if tr.has("Second task") {
					return reply{text: "second"}
				}
				asked.fire()
				return reply{block: true}
			}})
			writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
			s := start(t, dir, stdin, "--config", "cfg.yaml", "--display", "plain")
			waitFor(t, s, asked, "the first request")
			if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := s.wait(t, 30*time.Second); code != 130 {
				t.Errorf("exit %d, want 130\n%s", code, s.stderr)
			}
			for _, body := range p.requests("m") {
				if strings.Contains(string(body), "Second task") {
					t.Fatal("the second task ran after Ctrl-C")
				}
			}
			if s.stdout.Len() != 0 {
				t.Errorf("stdout = %q", s.stdout)
			}
		})
	}
}

// Item 6: `massgen ... | head -1`: the reader goes away after the first answer; the second turn
// delivers, fails to print, and is saved (undoable) before massgen exits non-zero, saying why.
func TestClosedPipeSavesTheTurn(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	b := filepath.Join(proj, "b.txt")
	writeFile(t, filepath.Join(proj, "keep.txt"), "keep\n")
	closed := newSignal()
	deliverB := deliverer(func(tr turn) ([]toolCall, string) {
		<-closed.C() // the reader is gone before turn B delivers
		return []toolCall{tc("write_file", map[string]any{"path": b, "content": "bee\n"})}, "answer B"
	})
	p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
		if tr.has("Task B") {
			return deliverB(tr)
		}
		return soloScript("answer A")(tr)
	}})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
	cmd := exec.Command(binary, "--config", "cfg.yaml", "--context", "proj", "--display", "plain")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, cleanEnv(t), strings.NewReader("Task A\nTask B\n")
	var errb lockedBuffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-waited:
		default:
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "answer A\n" {
		t.Fatalf("first line %q, %v\n%s", line, err, errb.String())
	}
	out.Close() // head -1 exits
	closed.fire()
	err = cmd.Wait()
	close(waited)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			t.Fatalf("massgen died of %v\n%s", ws.Signal(), errb.String())
		}
		code = ee.ExitCode()
	}
	if code == 0 || !strings.Contains(errb.String(), "broken pipe") {
		t.Errorf("exit %d, want non-zero and the broken pipe reported\n%s", code, errb.String())
	}
	if readFile(t, b) != "bee\n" {
		t.Fatalf("turn B did not deliver\n%s", errb.String())
	}
	if turns, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "*", "turn_2")); len(turns) != 1 {
		t.Errorf("turn 2 was not saved: %v\n%s", turns, errb.String())
	}
	if u := run(t, dir, "undo"); u.code != 0 || exists(b) {
		t.Errorf("undo: exit %d, b.txt exists %v\n%s%s", u.code, exists(b), u.stdout, u.stderr)
	}
}

// Item 7: SIGHUP (the terminal closed) ends the run like SIGTERM: "cancelled" on stderr, a JSON
// result on stdout, exit 129 (128 + SIGHUP), and the turn's record saved (undo takes the delivery back).
func TestSIGHUPEndsTheRunCarefully(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	h := filepath.Join(proj, "h.txt")
	writeFile(t, filepath.Join(proj, "keep.txt"), "keep\n")
	delivered := newSignal()
	p := newProvider(t, map[string]func(turn) reply{"m": deliverThenBlock(delivered, func(tr turn) []toolCall {
		return []toolCall{tc("write_file", map[string]any{"path": h, "content": "hup\n"})}
	})})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
	s := start(t, dir, "", "--config", "cfg.yaml", "--context", "proj", "--output", "json", "--display", "plain", "Deliver h")
	waitFor(t, s, delivered, "the delivery")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t, 30*time.Second); code != 129 {
		t.Fatalf("exit %d after SIGHUP, want 129\n%s", code, s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "cancelled") {
		t.Errorf("stderr does not say the run was cancelled:\n%s", s.stderr)
	}
	lines := lastLines(s.stdout.String(), 1)
	var res struct {
		Type     string `json:"type"`
		ExitCode int    `json:"exit_code"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &res); err != nil || res.Type != "result" || res.ExitCode != 129 || res.Error == "" {
		t.Errorf("last stdout line %q (%v), want a result with exit_code 129 and the reason", lines[0], err)
	}
	if u := run(t, dir, "undo"); u.code != 0 || exists(h) {
		t.Errorf("undo: exit %d, h.txt exists %v\n%s%s", u.code, exists(h), u.stdout, u.stderr)
	}
}

// Item 8: stdout that cannot be written (/dev/full) is an error: non-zero exit, said on stderr,
// and the turn is saved first.
func TestStdoutWriteErrorFails(t *testing.T) {
	for _, mode := range []string{"text", "json"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			p := newProvider(t, map[string]func(turn) reply{"m": soloScript("the answer")})
			writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skip(err)
			}
			defer full.Close()
			cmd := exec.Command(binary, "--config", "cfg.yaml", "--yes", "--output", mode, "--display", "plain", "A task")
			cmd.Dir, cmd.Env, cmd.Stdout = dir, cleanEnv(t), full
			var errb strings.Builder
			cmd.Stderr = &errb
			err = cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code == 0 || !strings.Contains(errb.String(), "no space left on device") {
				t.Errorf("exit %d, want non-zero and the error on stderr\n%s", code, errb.String())
			}
			if turns, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "*", "turn_1")); len(turns) != 1 {
				t.Errorf("the turn was not saved: %v", turns)
			}
		})
	}
}

// Item 10: a directory the turn removed comes back with its exact mode (0775 stays 0775 under
// umask 022), its files with theirs.
func TestUndoRestoresDirectoryModes(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	d, f := filepath.Join(proj, "d"), filepath.Join(proj, "d", "f.txt")
	writeFile(t, f, "in d\n")
	if err := os.Chmod(f, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o775); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, map[string]func(turn) reply{"m": deliverer(func(tr turn) ([]toolCall, string) {
		return []toolCall{
			tc("read_file", map[string]any{"path": f}),
			tc("delete_file", map[string]any{"path": d, "recursive": true}),
		}, "removed d"
	})})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
	if r := runUmask(t, dir, "022", "--config", "cfg.yaml", "--context", "proj", "Remove d"); r.code != 0 || exists(d) {
		t.Fatalf("run: exit %d, d exists %v\n%s", r.code, exists(d), r.stderr)
	}
	if u := runUmask(t, dir, "022", "undo"); u.code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", u.code, u.stdout, u.stderr)
	}
	for path, want := range map[string]fs.FileMode{d: 0o775, f: 0o640} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", path, err, fi.Mode(), want)
		}
	}
}

// Item 12: undo and trash restore take the project's run lock: during a run they refuse (exit
// 5), or with --wait wait for the run to end.
func TestUndoWaitsForTheRun(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	s0 := filepath.Join(proj, "s0.txt")
	writeFile(t, filepath.Join(proj, "keep.txt"), "keep\n")
	asked := newSignal()
	p := newProvider(t, map[string]func(turn) reply{
		"first": deliverer(func(tr turn) ([]toolCall, string) {
			return []toolCall{tc("write_file", map[string]any{"path": s0, "content": "one\n"})}, "one"
		}),
		"slow": func(tr turn) reply { asked.fire(); return reply{block: true} },
	})
	writeFile(t, filepath.Join(dir, "one.yaml"), soloConfig(p, "first"))
	writeFile(t, filepath.Join(dir, "slow.yaml"), soloConfig(p, "slow"))
	if r := run(t, dir, "--config", "one.yaml", "--context", "proj", "First"); r.code != 0 {
		t.Fatalf("run 1: exit %d\n%s", r.code, r.stderr)
	}
	s := start(t, dir, "", "--config", "slow.yaml", "--context", "proj", "--display", "plain", "Slow")
	waitFor(t, s, asked, "the slow run's request")
	for _, args := range [][]string{{"undo"}, {"trash", "restore", "log_x/0001"}} {
		if r := run(t, dir, args...); r.code != 5 || !strings.Contains(r.stderr, "another massgen run") {
			t.Errorf("%v during a run: exit %d, want 5\n%s", args, r.code, r.stderr)
		}
	}
	if !exists(s0) {
		t.Fatal("undo changed files during the run")
	}
	w := start(t, dir, "", "undo", "--wait")
	until(t, "undo --wait to wait", time.Minute, func() bool { return strings.Contains(w.stderr.String(), "Waiting for") })
	if exists(s0) == false {
		t.Fatal("undo --wait did not wait")
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 30*time.Second)
	if code := w.wait(t, time.Minute); code != 0 || exists(s0) {
		t.Errorf("undo --wait: exit %d, s0.txt exists %v\n%s%s", code, exists(s0), w.stdout, w.stderr)
	}
}

// A run killed during delivery in a continued session: the next massgen start in the project
// recovers the turn into that session (interrupted, turn 2) before it continues it, and its
// agents are told the turn ended before an answer.
func TestNextStartRecoversTheKilledTurn(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	a, b := filepath.Join(proj, "a.txt"), filepath.Join(proj, "b.txt")
	writeFile(t, filepath.Join(proj, "keep.txt"), "keep\n")
	delivered := newSignal()
	blockB := deliverThenBlock(delivered, func(tr turn) []toolCall {
		return []toolCall{tc("write_file", map[string]any{"path": b, "content": "bee\n"})}
	})
	p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
		switch {
		case tr.has("Task C"):
			return soloScript("answer C")(tr)
		case tr.has("Task B"):
			return blockB(tr)
		}
		return deliverer(func(turn) ([]toolCall, string) {
			return []toolCall{tc("write_file", map[string]any{"path": a, "content": "ay\n"})}, "answer A"
		})(tr)
	}})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
	if r := run(t, dir, "--config", "cfg.yaml", "--context", "proj", "Task A"); r.code != 0 {
		t.Fatalf("run A: exit %d\n%s", r.code, r.stderr)
	}
	s := start(t, dir, "", "--continue", "--display", "plain", "Task B")
	waitFor(t, s, delivered, "the delivery of B")
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 30*time.Second)

	c := run(t, dir, "--continue", "--display", "plain", "Task C")
	if c.code != 0 || c.stdout != "answer C\n" {
		t.Fatalf("run C: exit %d, stdout %q\n%s", c.code, c.stdout, c.stderr)
	}
	sessions, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "session_*"))
	if len(sessions) != 1 || !strings.Contains(c.stderr, "Recovered turn 2 of session "+filepath.Base(sessions[0])) {
		t.Fatalf("sessions %v; run C's stderr:\n%s", sessions, c.stderr)
	}
	if !strings.Contains(c.stderr, "Saved turn 3 of session") {
		t.Errorf("run C was not turn 3 of the session:\n%s", c.stderr)
	}
	reqs := p.requests("m")
	last := string(reqs[len(reqs)-1])
	if !strings.Contains(last, "Task B") || !strings.Contains(last, "before a final answer") {
		t.Errorf("run C's agents were not told of the interrupted turn B:\n%.2000s", last)
	}
	// undo takes back the latest turn that changed files: B (C changed nothing).
	if u := run(t, dir, "undo"); u.code != 0 || exists(b) || !exists(a) || !strings.Contains(u.stderr, "turn 2 of session") {
		t.Errorf("undo: exit %d, b.txt exists %v, a.txt exists %v\n%s%s", u.code, exists(b), exists(a), u.stdout, u.stderr)
	}
}
