//go:build linux || darwin

package snapshots

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/internal/wsowner"
)

// swapper swaps the folder dir for a link to target and back until stopped: the attack of an
// agent that wants massgen to follow a link out of its workspace.
func swapper(t *testing.T, dir, target string) (stop func()) {
	t.Helper()
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		aside := dir + ".aside"
		for !done.Load() {
			if os.Rename(dir, aside) != nil {
				_ = os.MkdirAll(dir, 0o755) // cleared meanwhile: make it again
				_ = os.WriteFile(filepath.Join(dir, "inside.txt"), []byte("inside"), 0o644)
				continue
			}
			_ = os.Symlink(target, dir)
			_ = os.Remove(dir)
			_ = os.Rename(aside, dir)
		}
	})
	return func() { done.Store(true); wg.Wait() }
}

// noSecret fails when anything under dir holds the outside file's content or name.
func noSecret(t *testing.T, dir, when string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if strings.Contains(d.Name(), "secret") {
			t.Errorf("%s: %s copied from outside the workspace", when, p)
		}
		if d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "SECRET") {
				t.Errorf("%s: %s holds the content of a file outside the workspace", when, p)
			}
		}
		return nil
	})
}

// A workspace folder swapped for a link to a folder outside, thousands of times while Save and
// CopyTree run: nothing outside the workspace is ever read into a snapshot or a copy (the walk
// and the opens go by descriptor, never through a link).
func TestSaveAndCopyWithFolderSwappedForLink(t *testing.T) {
	lane.Long(t)
	f := newFixture(t, "a")
	ws := f.ws["a"]
	outside := filepath.Join(f.base, "outside")
	writeFile(t, filepath.Join(outside, "secret.txt"), "SECRET")
	f.write("a", "keep.txt", "kept")
	f.write("a", "d/inside.txt", "inside")
	for _, target := range []string{outside, "../../../outside"} {
		stop := swapper(t, filepath.Join(ws, "d"), target)
		for i := range 1000 {
			if _, err := f.store.Save(context.Background(), "a", ws, "swap"); err != nil {
				stop()
				t.Fatalf("save %d: %v", i, err)
			}
			noSecret(t, f.store.SnapshotDir("a"), "save")
			if i%10 == 0 {
				dst := filepath.Join(f.base, "copies", strings.ReplaceAll(target, "/", "_"), string(rune('a'+i/100)), "c")
				if err := CopyTree(context.Background(), ws, filepath.Join(dst, string(rune('0'+i%100/10))), nil); err != nil {
					stop()
					t.Fatalf("copy %d: %v", i, err)
				}
			}
			if t.Failed() {
				break
			}
		}
		stop()
	}
	noSecret(t, filepath.Join(f.base, "copies"), "CopyTree")
	if b, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil || string(b) != "SECRET" {
		t.Fatalf("the file outside changed: %q %v", b, err)
	}
}

// A folder of a workspace swapped for a link to a user folder while ClearWorkspace empties the
// workspace, thousands of times: the user's files stay.
func TestClearWithFolderSwappedForLink(t *testing.T) {
	lane.Long(t)
	base := t.TempDir()
	mg := filepath.Join(base, ".massgen")
	ws := filepath.Join(mg, "workspaces", "ws")
	_, err := wsowner.Claim(ws, mg, false)
	must(t, err)
	user := filepath.Join(base, "user")
	writeFile(t, filepath.Join(user, "precious.txt"), "keep me")
	stop := swapper(t, filepath.Join(ws, "d"), user)
	defer stop()
	for i := range 2000 {
		_ = ClearWorkspace(ws) // may fail on an entry made meanwhile; never outside
		if b, err := os.ReadFile(filepath.Join(user, "precious.txt")); err != nil || string(b) != "keep me" {
			t.Fatalf("clear %d reached the user's folder: %q %v", i, b, err)
		}
	}
}

// A workspace nested deeper than safefs walks (an agent's attempt to make its snapshot fail) is
// saved all the same, the part past the limit left out.
func TestDeepWorkspaceSaved(t *testing.T) {
	f := newFixture(t, "a")
	deep := f.ws["a"]
	for range safefs.MaxTreeDepth + 20 {
		deep = filepath.Join(deep, "d")
	}
	must(t, os.MkdirAll(deep, 0o755))
	f.write("a", "top.txt", "top")
	if _, err := f.store.Save(context.Background(), "a", f.ws["a"], "deep"); err != nil {
		t.Fatalf("a deep workspace failed the save: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(f.store.SnapshotDir("a"), "top.txt")); err != nil || string(b) != "top" {
		t.Fatalf("snapshot: %q %v", b, err)
	}
}
