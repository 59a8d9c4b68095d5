package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/runlock"
)

// Read-only commands do not need the run lock: they work while a run holds the project (the
// run's own refusal is tested in internal/app).
func TestReadOnlyCommandsWhileBusy(t *testing.T) {
	e := newTestEnv(t, "")
	e.Write(t, "c.yaml", workspaceConfig)
	held, err := runlock.Acquire(context.Background(), filepath.Join(e.Wd, ".massgen"), runlock.Holder{PID: 4242}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	for _, args := range [][]string{
		{"configs", "list"},
		{"sessions", "list"},
		{"permissions", "check", "--config", "c.yaml", "--agent", "a1", "read_file", filepath.Join(e.Wd, "c.yaml")},
		{"tools", "list", "--config", "c.yaml", "--agent", "a1"},
	} {
		e.ErrOut.Reset()
		if code := e.exec(args...); code == cmdutil.ExitBusy || strings.Contains(e.ErrOut.String(), "run.lock") {
			t.Errorf("%v: exit %d while a run holds the project:\n%s", args, code, e.ErrOut)
		}
	}
}
