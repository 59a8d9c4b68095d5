package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/runlock"
)

// A second run in a project refuses at once with exit 5, naming the run that holds it, and
// writes nothing under .massgen/logs; read-only commands do not need the lock.
func TestSecondRunIsBusy(t *testing.T) {
	e := newTestEnv(t, "")
	e.write(t, "c.yaml", workspaceConfig)
	held, err := runlock.Acquire(context.Background(), filepath.Join(e.wd, ".massgen"), runlock.Holder{PID: 4242}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	rec := &recorder{}
	opts := e.runOpts(rec)
	opts.ConfigName, opts.Question, opts.Yes = "c.yaml", "q", true
	err = runRun(context.Background(), opts)
	if code := cmdutil.CodeOf(err); code != cmdutil.ExitBusy {
		t.Fatalf("exit %d (%v), want %d", code, err, cmdutil.ExitBusy)
	}
	if !strings.Contains(err.Error(), "pid 4242") || !strings.Contains(err.Error(), "--wait") {
		t.Errorf("message: %v", err)
	}
	if len(rec.tasks) != 0 {
		t.Error("the turn ran")
	}
	if m, _ := filepath.Glob(filepath.Join(e.wd, ".massgen", "logs", "*")); len(m) != 0 {
		t.Errorf("a busy run made log folders: %v", m)
	}
	for _, args := range [][]string{
		{"configs", "list"},
		{"sessions", "list"},
		{"permissions", "check", "--config", "c.yaml", "--agent", "a1", "read_file", filepath.Join(e.wd, "c.yaml")},
		{"tools", "list", "--config", "c.yaml", "--agent", "a1"},
	} {
		e.errOut.Reset()
		if code := e.exec(args...); code == cmdutil.ExitBusy || strings.Contains(e.errOut.String(), runlock.FileName) {
			t.Errorf("%v: exit %d while a run holds the project:\n%s", args, code, e.errOut)
		}
	}
}
