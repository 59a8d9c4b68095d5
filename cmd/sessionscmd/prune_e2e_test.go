package sessionscmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/runlock"
	"github.com/massgen-go/massgen/internal/testing/testbin"
	"github.com/massgen-go/massgen/session"
)

// TestSessionsPrune drives `massgen sessions prune` in the built binary: it deletes the sessions
// and run logs older than --older-than and keeps the newer ones; it asks (without a terminal,
// only --yes confirms: exit 2), refuses while a run holds the project (exit 5), and rejects a
// bad duration (exit 2).
func TestSessionsPrune(t *testing.T) {
	bin := testbin.For(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"sessions"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "HOME="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	}
	if out, code := run("prune", "--older-than", "7d", "--yes"); code != 0 || !strings.Contains(out, "Nothing older") {
		t.Fatalf("prune with no state: exit %d\n%s", code, out)
	}
	massgen := filepath.Join(dir, ".massgen")
	if _, err := os.Stat(massgen); err == nil {
		t.Error("prune created .massgen/")
	}

	store, err := session.Open(filepath.Join(massgen, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old, err := store.New(now.Add(-30 * 24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	recent, err := store.New(now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*session.Session{old, recent} { // a session's folder is made with its first turn
		if _, err := s.SaveTurn(session.Turn{Task: "t", Answer: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	oldLog := filepath.Join(massgen, "logs", "log_"+now.Add(-30*24*time.Hour).Format("20060102_150405"))
	newLog := filepath.Join(massgen, "logs", "log_"+now.Add(-time.Hour).Format("20060102_150405"))
	other := filepath.Join(massgen, "logs", "notes") // not a run folder: never touched
	for _, d := range []string{oldLog, newLog, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	all := []string{old.Dir, recent.Dir, oldLog, newLog, other}
	intact := func() bool {
		for _, p := range all {
			if !exists(p) {
				return false
			}
		}
		return true
	}

	for _, bad := range []string{"", "soon", "-3d", "0h"} {
		if out, code := run("prune", "--older-than", bad, "--yes"); code != 2 || !intact() {
			t.Errorf("--older-than %q: exit %d (want 2, nothing removed)\n%s", bad, code, out)
		}
	}
	if out, code := run("prune", "--older-than", "7d"); code != 2 || !strings.Contains(out, "--yes") || !strings.Contains(out, old.ID) || !intact() {
		t.Errorf("prune without a terminal or --yes: exit %d (want 2, listing, nothing removed)\n%s", code, out)
	}
	held, err := runlock.Acquire(context.Background(), massgen, runlock.Holder{PID: 4242}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, code := run("prune", "--older-than", "7d", "--yes")
	held.Release()
	if code != 5 || !strings.Contains(out, "pid 4242") || !intact() {
		t.Errorf("prune while a run holds the project: exit %d (want 5, nothing removed)\n%s", code, out)
	}

	out, code = run("prune", "--older-than", "7d", "--yes")
	if code != 0 || !strings.Contains(out, "deleted session "+old.ID) || !strings.Contains(out, "deleted log "+filepath.Base(oldLog)) {
		t.Errorf("prune --yes: exit %d\n%s", code, out)
	}
	if exists(old.Dir) || exists(oldLog) {
		t.Error("the old session or log is still there")
	}
	if !exists(recent.Dir) || !exists(newLog) || !exists(other) {
		t.Error("prune removed something newer than 7 days, or not a run folder")
	}
	if out, _ := run("list"); !strings.Contains(out, recent.ID) || strings.Contains(out, old.ID) {
		t.Errorf("list after prune:\n%s", out)
	}
}
