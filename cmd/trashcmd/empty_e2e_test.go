package trashcmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/runlock"
	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// TestTrashEmpty drives `massgen trash empty` in the built binary: without a terminal it deletes
// nothing unless --yes says so (exit 2); while a run holds the project it refuses (exit 5); with
// --yes it deletes the trash, removing a symlink planted in it without following it.
func TestTrashEmpty(t *testing.T) {
	bin := testbin.For(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"trash"}, args...)...)
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

	// Nothing trashed yet: nothing to do, and no .massgen/ made.
	if out, code := run("empty", "--yes"); code != 0 || !strings.Contains(out, "the trash is empty") {
		t.Fatalf("empty trash: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".massgen")); err == nil {
		t.Error("trash empty created .massgen/")
	}

	massgen := filepath.Join(dir, ".massgen")
	slot := filepath.Join(massgen, "trash", "log_20260101_000000")
	for _, name := range []string{"a.txt", "b.txt"} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := changes.MoveToTrash(slot, f, "agent_a"); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(dir, "keep")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "precious.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(slot, "planted")); err != nil {
		t.Fatal(err)
	}
	listed := func() string { out, _ := run("list"); return out }
	if l := listed(); strings.Count(l, "agent_a") != 2 {
		t.Fatalf("list:\n%s", l)
	}

	if out, code := run("empty"); code != 2 || !strings.Contains(out, "--yes") || strings.Count(listed(), "agent_a") != 2 {
		t.Errorf("empty without a terminal or --yes: exit %d (want 2, nothing removed)\n%s", code, out)
	}

	held, err := runlock.Acquire(context.Background(), massgen, runlock.Holder{PID: 4242}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, code := run("empty", "--yes")
	rout, rcode := run("restore", "log_20260101_000000/0001")
	held.Release()
	if code != 5 || !strings.Contains(out, "pid 4242") || strings.Count(listed(), "agent_a") != 2 {
		t.Errorf("empty while a run holds the project: exit %d (want 5, nothing removed)\n%s", code, out)
	}
	if rcode != 5 {
		t.Errorf("restore while a run holds the project: exit %d (want 5)\n%s", rcode, rout)
	}

	if out, code := run("empty", "--yes"); code != 0 || !strings.Contains(out, "deleted 2 trashed file(s)") {
		t.Errorf("empty --yes: exit %d\n%s", code, out)
	}
	if _, err := os.Lstat(filepath.Join(massgen, "trash")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("trash still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "precious.txt")); err != nil {
		t.Errorf("emptying the trash followed a symlink out of it: %v", err)
	}
	if l := listed(); !strings.Contains(l, "the trash is empty") {
		t.Errorf("list after empty:\n%s", l)
	}
}
