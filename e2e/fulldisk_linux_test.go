package e2e

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// smallDisk mounts a tmpfs of size (such as "1m") at a new folder; we run as root in CI.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk is simulated with a small tmpfs, which needs root")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// A full disk during delivery: the write fails and the agent is told; the user's file keeps its
// old content whole and no temp file is left.
func TestFullDiskDuringDelivery(t *testing.T) {
	proj := smallDisk(t, "1m")
	dir := t.TempDir()
	writeFile(t, filepath.Join(proj, "page.html"), "old page")
	p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
		switch {
		case tr.final && tr.step == 0:
			return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(proj, "page.html"), "content": strings.Repeat("x", 2<<20)})}}
		case tr.final:
			return reply{text: "could not write: " + strings.Join(tr.results, " ")}
		default:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "a big page"})}}
		}
	}})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"solo", "m"}))
	res := run(t, dir, "--config", "cfg.yaml", "--context", proj+":write", "--display", "plain", "Write the page")
	if res.code != 0 || !strings.Contains(res.stdout, "no space left on device") {
		t.Fatalf("exit %d, stdout %q\n%s", res.code, res.stdout, res.stderr)
	}
	if got := readFile(t, filepath.Join(proj, "page.html")); got != "old page" {
		t.Errorf("page.html = %.40q, want the old page whole", got)
	}
	if left := tempFiles(t, proj); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// A full disk while massgen copies its own state (the answer's snapshot, the session's copy of
// the final workspace): each step says so on stderr, the turn is not marked saved, and the exit
// code says partial (4).
func TestFullDiskDuringSnapshotCopies(t *testing.T) {
	dir := smallDisk(t, "6m")
	ws := filepath.Join(dir, ".massgen", "workspaces", "workspace1")
	p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
		switch {
		case tr.final:
			return reply{text: "presented"}
		case tr.step == 0:
			return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(ws, "big.bin"), "content": strings.Repeat("x", 4<<20)})}}
		default:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "big.bin"})}}
		}
	}})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"solo", "m"}))
	// Piped stdin: a session, whose turn copies the final workspace.
	res := runIn(t, dir, "Make a big file\n", "--config", "cfg.yaml", "--display", "plain")
	if res.code != 4 || res.stdout != "presented\n" {
		t.Fatalf("exit %d, stdout %q, want 4 and the answer\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"Not saved: agent solo: saving the answer snapshot: ",
		"Not saved: turn 1 was not saved in the session: ",
	} {
		if !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "no space left on device") {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stderr, "Saved turn") {
		t.Errorf("a turn was said saved:\n%s", res.stderr)
	}
	if turns, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "*", "turn_*")); len(turns) != 0 {
		t.Errorf("turn folders on disk: %v", turns)
	}
	if _, err := os.Stat(filepath.Join(dir, ".massgen", "snapshots", "solo", "big.bin")); err == nil {
		t.Error("a snapshot was left half-made")
	}
}

// A 50 MB task on stdin is refused with exit 2 and a message naming the limit, without reading it
// into memory; nothing of it reaches the log or a session.
func TestHugeTaskRefused(t *testing.T) {
	dir := t.TempDir()
	p := newProvider(t, map[string]func(turn) reply{"m": soloScript("should not run")})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"solo", "m"}))
	cmd := exec.Command(binary, "--config", "cfg.yaml", "--display", "plain")
	cmd.Dir, cmd.Env = dir, cleanEnv(t)
	cmd.Stdin = io.LimitReader(repeatByte('x'), 50<<20)
	peak := measured(t, cmd)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 2 || !strings.Contains(errb.String(), "the task is 52428800 bytes, more than the limit of 1048576 bytes") ||
		!strings.Contains(errb.String(), "--max-task-bytes") {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	rss := peak() // KiB
	t.Logf("peak RSS %d MiB", rss>>10)
	if rss > 150<<10 {
		t.Errorf("peak RSS %d MiB reading a 50 MB task", rss>>10)
	}
	if len(p.requests("m")) != 0 {
		t.Error("the task reached the model")
	}
	logs, _ := filepath.Glob(filepath.Join(dir, ".massgen", "logs", "*", "massgen.log"))
	for _, l := range logs {
		if fi, err := os.Stat(l); err == nil && fi.Size() > 64<<10 {
			t.Errorf("%s is %d bytes", l, fi.Size())
		}
	}
	if turns, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "*", "turn_*")); len(turns) != 0 {
		t.Errorf("turns saved: %v", turns)
	}
}

type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
