//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGKILL while the final agent writes many files into a context path: every file is wholly old
// or wholly new, the next run starts cleanly (the lock is free) and its sweep leaves no temp
// file, including one an earlier kill left; the killed turn, recovered, lists what it delivered.
func TestKillDuringDelivery(t *testing.T) {
	const files, size = 100, 256 << 10
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	content := func(kind string, i int) string {
		return strings.Repeat(fmt.Sprintf("%s-%03d;", kind, i), size/8)
	}
	for i := 0; i < files; i += 2 { // half the files exist before
		writeFile(t, filepath.Join(proj, fmt.Sprintf("f%03d.txt", i)), content("old", i))
	}
	// A temp file a kill in an earlier run left (where writes use O_TMPFILE a kill leaves none):
	// the run's first sweep removes it.
	leftover := filepath.Join(proj, ".f000.txt.massgen-tmp-a8cd01234567")
	writeFile(t, leftover, content("new", 0)[:size/2])

	deliver := func(tr turn) reply {
		switch {
		case tr.final && tr.step == 0:
			var calls []toolCall
			for i := range files {
				calls = append(calls, tc("write_file", map[string]any{"path": filepath.Join(proj, fmt.Sprintf("f%03d.txt", i)), "content": content("new", i)}))
			}
			return reply{calls: calls}
		case tr.final:
			return reply{text: "delivered"}
		default:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "will write the files"})}}
		}
	}
	p := newProvider(t, map[string]func(turn) reply{"m": deliver, "quiet": soloScript("nothing to do")})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"solo", "m"}))
	writeFile(t, filepath.Join(dir, "quiet.yaml"), faultConfig(p, "", [2]string{"solo", "quiet"}))

	s := start(t, dir, "", "--config", "cfg.yaml", "--context", "proj:write", "--display", "plain", "Write the files")
	isNew := func(i int) bool {
		b := make([]byte, 8)
		f, err := os.Open(filepath.Join(proj, fmt.Sprintf("f%03d.txt", i)))
		if err != nil {
			return false
		}
		defer f.Close()
		n, _ := f.Read(b)
		return n == 8 && string(b[:4]) == "new-"
	}
	until(t, "the first delivered file", time.Minute, func() bool {
		for i := range files {
			if isNew(i) {
				return true
			}
		}
		select {
		case <-s.done:
			t.Fatalf("massgen ended before delivering: %v\n%s", s.err, s.stderr)
		default:
		}
		return false
	})
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t, 30*time.Second); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d after SIGKILL", code)
	}
	check := func(when string) (written int) {
		for i := range files {
			p := filepath.Join(proj, fmt.Sprintf("f%03d.txt", i))
			b, err := os.ReadFile(p)
			switch {
			case err != nil && i%2 == 1:
				// a new file not written yet
			case err != nil:
				t.Errorf("%s: %s is gone: %v", when, p, err)
			case string(b) == content("new", i):
				written++
			case i%2 == 0 && string(b) == content("old", i):
			default:
				t.Errorf("%s: %s is neither wholly old nor wholly new (%d bytes, starts %q)", when, p, len(b), b[:min(len(b), 12)])
			}
		}
		return written
	}
	written := check("after the kill")
	t.Logf("%d of %d files were delivered before the kill; temp files left: %v", written, files, tempFiles(t, proj))
	if !strings.Contains(s.stderr.String(), "Removed 1 temp file left in context paths by an interrupted write") {
		t.Errorf("the first run did not sweep the earlier leftover:\n%s", s.stderr)
	}
	// What this kill may have left, as a filesystem without O_TMPFILE would have it.
	writeFile(t, leftover, content("new", 0)[:size/2])

	res := run(t, dir, "--config", "quiet.yaml", "--context", "proj:write", "--display", "plain", "Anything left?")
	if res.code != 0 || res.stdout != "nothing to do\n" {
		t.Fatalf("the next run: exit %d, stdout %q\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "left in context paths by an interrupted write") {
		t.Errorf("the sweep was not reported:\n%s", res.stderr)
	}
	if left := tempFiles(t, proj); len(left) != 0 {
		t.Errorf("temp files left after the next run: %v", left)
	}
	check("after the next run")

	// The killed turn, recovered from its journal, says what it delivered: the files wholly
	// new, read from its change set like every turn's (nothing else keeps a list of them).
	var want []string
	for i := range files {
		if isNew(i) {
			want = append(want, filepath.Join(proj, fmt.Sprintf("f%03d.txt", i)))
		}
	}
	mds, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "session_*", "turn_*", "metadata.json"))
	var recovered int
	for _, m := range mds {
		var md struct {
			Status         string   `json:"status"`
			FilesDelivered []string `json:"files_delivered"`
		}
		if err := json.Unmarshal([]byte(readFile(t, m)), &md); err != nil {
			t.Fatal(err)
		}
		if md.Status != "interrupted" {
			continue
		}
		recovered++
		if !slices.Equal(md.FilesDelivered, want) {
			t.Errorf("the recovered turn's files_delivered = %d files %v, want the %d wholly new ones", len(md.FilesDelivered), md.FilesDelivered, len(want))
		}
	}
	if recovered != 1 {
		t.Errorf("%d recovered turns in %v, want 1", recovered, mds)
	}
}

// descendants lists the pids whose ancestry leads to pid.
func descendants(pid int) map[int]string {
	parent := map[int]int{}
	cmdline := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		parent[p], _ = strconv.Atoi(fields[1])
		c, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cmdline[p] = strings.ReplaceAll(string(c), "\x00", " ")
	}
	out := map[int]string{}
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out[p] = cmdline[p]
				break
			}
		}
	}
	return out
}

// processesRunning lists the processes whose command line contains s, and among them those that
// run program (their argv[0]).
func processesRunning(s string) (all, program []string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		c, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(strings.ReplaceAll(string(c), "\x00", " "), s) {
			continue
		}
		all = append(all, e.Name()+": "+strings.ReplaceAll(string(c), "\x00", " "))
		if argv0, _, _ := strings.Cut(string(c), "\x00"); argv0 == strings.Fields(s)[0] {
			program = append(program, e.Name())
		}
	}
	return all, program
}

// SIGINT and SIGTERM while an agent's command runs (with a process it put in the background) and
// another agent waits for its model: massgen exits at once with 128 + the signal (130, 143) and
// leaves no process behind.
func TestSignalsLeaveNoProcess(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			token := fmt.Sprintf("1000.%d%d", os.Getpid(), time.Now().UnixNano()%1e6) // a unique sleep
			inFlight := make(chan struct{}, 8)
			p := newProvider(t, map[string]func(turn) reply{
				"cmd": func(tr turn) reply {
					if tr.step == 0 {
						return reply{calls: []toolCall{tc("execute_command", map[string]any{"command": "sleep " + token + " & sleep " + token, "timeout": 600})}}
					}
					return reply{block: true}
				},
				"slow": func(tr turn) reply {
					inFlight <- struct{}{}
					return reply{block: true}
				},
			})
			writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"runner", "cmd"}, [2]string{"waiter", "slow"}))
			s := start(t, dir, "", "--config", "cfg.yaml", "--display", "plain", "Run things")
			select {
			case <-inFlight:
			case <-s.done:
				t.Fatalf("massgen ended: %v\n%s", s.err, s.stderr)
			case <-time.After(time.Minute):
				t.Fatal("no request in flight")
			}
			until(t, "both sleeps running", time.Minute, func() bool { _, sleeps := processesRunning("sleep " + token); return len(sleeps) == 2 })
			before := descendants(s.cmd.Process.Pid)
			sent := time.Now()
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code, want := s.wait(t, 15*time.Second), 128+int(sig); code != want { // 130, 143
				t.Errorf("exit %d, want %d\n%s", code, want, s.stderr)
			}
			if took := time.Since(sent); took > 10*time.Second {
				t.Errorf("massgen took %s to stop", took)
			}
			exited := time.Now()
			left := func() []string { all, _ := processesRunning("sleep " + token); return all }
			atExit := len(left())
			for time.Since(exited) < 5*time.Second && len(left()) > 0 {
				time.Sleep(time.Millisecond)
			}
			t.Logf("at exit %d sleeps, gone after %s", atExit, time.Since(exited))
			if left := left(); len(left) != 0 {
				for _, l := range left {
					pid, _ := strconv.Atoi(strings.SplitN(l, ":", 2)[0])
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Errorf("processes left behind: %v", left)
			}
			for pid, cmd := range before {
				if err := syscall.Kill(pid, 0); err == nil {
					if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.ReplaceAll(string(c), "\x00", " ") == cmd {
						t.Errorf("descendant %d (%s) still runs", pid, cmd)
					}
				}
			}
			if s.stdout.Len() != 0 {
				t.Errorf("stdout = %q", s.stdout)
			}
		})
	}
}
