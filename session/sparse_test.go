//go:build linux || darwin

package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen/snapshots"
)

// A turn's workspace copy keeps holes (a 64 MiB sparse file with no blocks stays without
// blocks), and a workspace of 1 TiB apparent size (`truncate -s 1T big`) is refused with a
// message, writing no turn.
func TestTurnCopyOfSparseFiles(t *testing.T) {
	blocks := func(p string) int64 {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Blocks)
	}
	base := t.TempDir()
	st, err := Open(filepath.Join(base, ".massgen", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	ses, err := st.New(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	writeFile(t, filepath.Join(ws, "index.html"), "<p>")
	holes := filepath.Join(ws, "holes")
	if err := os.WriteFile(holes, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(holes, 64<<20); err != nil {
		t.Fatal(err)
	}
	if blocks(holes) != 0 {
		t.Skip("this filesystem allocates blocks for holes")
	}
	dir, err := ses.SaveTurn(Turn{Task: "t", Answer: "a", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "workspace", "holes")
	if fi, err := os.Stat(copied); err != nil || fi.Size() != 64<<20 || blocks(copied) != 0 {
		t.Fatalf("the copy of a 64 MiB sparse file: %v, %v, %d blocks", fi, err, blocks(copied))
	}

	big := filepath.Join(ws, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<40); err != nil {
		t.Skipf("no 1 TiB sparse file here: %v", err)
	}
	_, err = ses.SaveTurn(Turn{Task: "t2", Answer: "a2", Workspace: ws})
	var tl *snapshots.TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "1.0 TiB") || !strings.Contains(err.Error(), "big") {
		t.Fatalf("SaveTurn with a 1 TiB sparse file = %v", err)
	}
	ents, _ := os.ReadDir(ses.Dir)
	for _, e := range ents {
		if e.Name() == "turn_2" || strings.HasPrefix(e.Name(), ".turn_2") {
			t.Errorf("the refused turn left %s", e.Name())
		}
	}
}

// A new session whose first turn cannot be saved (a workspace too large to copy) leaves nothing
// in the sessions folder: no empty session, no hidden folder; Latest still finds none.
func TestFailedFirstTurnLeavesNoSession(t *testing.T) {
	base := t.TempDir()
	st, err := Open(filepath.Join(base, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	ses, err := st.New(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	big := filepath.Join(ws, "big")
	writeFile(t, big, "")
	if err := os.Truncate(big, 1<<40); err != nil {
		t.Skipf("no 1 TiB sparse file here: %v", err)
	}
	if _, err := ses.SaveTurn(Turn{Task: "t", Answer: "a", Workspace: ws}); err == nil {
		t.Fatal("the turn was saved")
	}
	ents, _ := os.ReadDir(st.Root())
	for _, e := range ents {
		if e.Name() != lockName {
			t.Errorf("left in the sessions folder: %s", e.Name())
		}
	}
	if _, err := st.Latest(); !errors.Is(err, ErrNoSessions) {
		t.Errorf("Latest = %v", err)
	}
	// The next turn of that session is its first.
	if err := os.Remove(big); err != nil {
		t.Fatal(err)
	}
	dir, err := ses.SaveTurn(Turn{Task: "t", Answer: "a", Workspace: ws})
	if err != nil || filepath.Base(dir) != "turn_1" {
		t.Fatalf("SaveTurn = %q, %v", dir, err)
	}
}
