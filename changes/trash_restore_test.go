//go:build unix

package changes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/lane"
	"golang.org/x/sys/unix"
)

// plantTrash writes a trash slot as moveToTrash leaves it (meta.json, then data) for the file
// orig, and returns its id.
func plantTrash(t testing.TB, massgenDir, run string, seq int, orig, content string) string {
	t.Helper()
	slot := filepath.Join(massgenDir, "trash", run, fmt.Sprintf("%04d", seq))
	if err := os.MkdirAll(slot, 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(TrashEntry{OriginalPath: orig, Agent: "agent_a", DeletedAt: time.Now().UTC(), Mode: "-rw-r--r--"})
	if err := os.WriteFile(filepath.Join(slot, trashMeta), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(slot, "data"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return run + "/" + filepath.Base(slot)
}

func emptyDir(t testing.TB, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	if len(ents) != 0 {
		t.Fatalf("something was written outside the context path: %s holds %v", dir, ents)
	}
}

// The attack of issue 20 item 6, and its variants: the final agent deletes
// proj/docs/authorized_keys (trashed, restorable), then a command swaps a folder on the way for
// a link to elsewhere. The user's restore must never write through the link.
func TestTrashRestoreRefusesPlantedLink(t *testing.T) {
	tests := []struct {
		name string
		// plant changes proj after the deletion; outside is a folder outside every context path.
		plant func(t *testing.T, proj, outside string)
		// link names the link the refusal must name ("" = the restore succeeds).
		link     string
		restored string // where the file then is, relative to proj
		errHas   string
	}{
		{name: "parent swapped for a link", link: "docs", plant: func(t *testing.T, proj, outside string) {
			mustRename(t, filepath.Join(proj, "docs"), filepath.Join(proj, "docs_old"))
			mustSymlink(t, outside, filepath.Join(proj, "docs"))
		}},
		{name: "parent swapped for a relative link", link: "docs", plant: func(t *testing.T, proj, outside string) {
			mustRename(t, filepath.Join(proj, "docs"), filepath.Join(proj, "docs_old"))
			rel, _ := filepath.Rel(proj, outside)
			mustSymlink(t, rel, filepath.Join(proj, "docs"))
		}},
		{name: "parent swapped for a dangling link", link: "docs", plant: func(t *testing.T, proj, outside string) {
			mustRename(t, filepath.Join(proj, "docs"), filepath.Join(proj, "docs_old"))
			mustSymlink(t, filepath.Join(outside, "made", "by", "restore"), filepath.Join(proj, "docs"))
		}},
		{name: "grandparent swapped for a link", link: "sub", plant: func(t *testing.T, proj, outside string) {
			// proj/sub/docs/authorized_keys: sub becomes a link to a tree outside with docs/.
			mustRename(t, filepath.Join(proj, "docs"), filepath.Join(proj, "docs_old"))
			if err := os.MkdirAll(filepath.Join(outside, "docs"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, outside, filepath.Join(proj, "sub"))
		}},
		{name: "a link at the name itself", errHas: "exists now", plant: func(t *testing.T, proj, outside string) {
			mustSymlink(t, filepath.Join(outside, "authorized_keys"), filepath.Join(proj, "docs", "authorized_keys"))
		}},
		{name: "parent moved away", restored: "docs/authorized_keys", plant: func(t *testing.T, proj, outside string) {
			mustRename(t, filepath.Join(proj, "docs"), filepath.Join(proj, "docs_old"))
		}},
		{name: "nothing changed", restored: "docs/authorized_keys", plant: func(*testing.T, string, string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			proj, outside, massgen := filepath.Join(base, "proj"), filepath.Join(base, "outside"), filepath.Join(base, "proj", ".massgen")
			for _, d := range []string{filepath.Join(proj, "docs"), outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			orig := filepath.Join(proj, "docs", "authorized_keys")
			if tt.link == "sub" {
				orig = filepath.Join(proj, "sub", "docs", "authorized_keys")
			}
			write(t, orig, "ssh-ed25519 AAAA attacker\n")
			trashDir := filepath.Join(massgen, "trash", "log_1")
			if err := MoveToTrash(trashDir, orig, "agent_a"); err != nil {
				t.Fatal(err)
			}
			if tt.link == "sub" {
				mustRename(t, filepath.Join(proj, "sub"), filepath.Join(proj, "sub_old"))
			}
			tt.plant(t, proj, outside)
			entries, err := ListTrash(massgen)
			if err != nil || len(entries) != 1 {
				t.Fatalf("ListTrash = %v, %v", entries, err)
			}
			err = RestoreTrash(massgen, entries[0].ID)
			switch {
			case tt.link != "":
				want := filepath.Join(proj, tt.link) + " is now a symbolic link"
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("RestoreTrash = %v, want a refusal naming the link (%q)", err, want)
				}
			case tt.errHas != "":
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("RestoreTrash = %v, want %q", err, tt.errHas)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if got := read(t, filepath.Join(proj, tt.restored)); got != "ssh-ed25519 AAAA attacker\n" {
					t.Fatalf("restored content %q", got)
				}
				if after, _ := ListTrash(massgen); len(after) != 0 {
					t.Fatalf("trash after the restore: %v", after)
				}
				return
			}
			// Refused: nothing outside, and the entry is still in the trash for a later restore.
			var found []string
			filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					found = append(found, p)
				}
				return nil
			})
			if len(found) != 0 {
				t.Fatalf("written outside the context path: %v", found)
			}
			if after, _ := ListTrash(massgen); len(after) != 1 {
				t.Fatalf("the refused entry left the trash: %v", after)
			}
		})
	}
}

// A racing process swaps the parent folder for a link to a folder outside the project while
// the user restores, over thousands of restores: each restore either puts the file in the real
// folder (under its name of the moment) or is refused; nothing is ever written outside.
func TestTrashRestoreRaceSwapsParentForLink(t *testing.T) {
	lane.Long(t)
	base := t.TempDir()
	proj, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	massgen := filepath.Join(proj, ".massgen")
	docs, docsOld := filepath.Join(proj, "docs"), filepath.Join(proj, "docs_old")
	for _, d := range []string{docs, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The real folder, held by descriptor whatever its name, to clear what a restore put there.
	real, err := os.Open(docs)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	orig := filepath.Join(docs, "authorized_keys")

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			if os.Rename(docs, docsOld) != nil {
				continue
			}
			_ = os.Symlink(outside, docs)
			_ = os.Remove(docs)
			// A restore that found docs missing made a new one: clear it, then put the real one back.
			for os.Rename(docsOld, docs) != nil && !stop.Load() {
				_ = os.RemoveAll(docs)
			}
		}
	})
	const n = 3000
	var restored, refusedLink, other int
	var otherErrs []string
	for i := 1; i <= n; i++ {
		id := plantTrash(t, massgen, "log_1", i, orig, "key\n")
		err := RestoreTrash(massgen, id)
		emptyDir(t, outside)
		switch {
		case err == nil:
			restored++
		case strings.Contains(err.Error(), "symbolic link"):
			refusedLink++
		default:
			other++
			if len(otherErrs) < 5 {
				otherErrs = append(otherErrs, err.Error())
			}
		}
		if err := unix.Unlinkat(int(real.Fd()), "authorized_keys", 0); err != nil && !errors.Is(err, unix.ENOENT) {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	emptyDir(t, outside)
	t.Logf("%d restores: %d restored, %d refused (link), %d other (%v)", n, restored, refusedLink, other, otherErrs)
	if restored == 0 || refusedLink == 0 {
		t.Fatalf("the race was not exercised: %d restored, %d refused for a link", restored, refusedLink)
	}
}

// Across filesystems (the trash on tmpfs, the project elsewhere) the entry is copied under a
// temp name in the destination folder and renamed into place: files, trees and links come back
// whole, nothing half-written is left by a refusal, and a planted link is refused the same way.
func TestTrashRestoreAcrossFilesystems(t *testing.T) {
	shm := "/dev/shm"
	var a, b unix.Stat_t
	base := t.TempDir()
	if unix.Stat(shm, &a) != nil || unix.Stat(base, &b) != nil || a.Dev == b.Dev {
		t.Skip("needs /dev/shm on another filesystem than the test's temp folder")
	}
	massgen, err := os.MkdirTemp(shm, "massgen-trash-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(massgen) })
	proj, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	write(t, filepath.Join(proj, "docs", "a.txt"), "a\n")
	write(t, filepath.Join(proj, "tree", "x", "y.txt"), "y\n")
	mustSymlink(t, "x/y.txt", filepath.Join(proj, "tree", "link"))
	if err := os.Chmod(filepath.Join(proj, "docs", "a.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	trashDir := filepath.Join(massgen, "trash", "log_1")
	for _, p := range []string{"docs/a.txt", "tree"} {
		if err := MoveToTrash(trashDir, filepath.Join(proj, p), "agent_a"); err != nil {
			t.Fatal(err)
		}
	}
	// The tree comes back whole.
	if err := RestoreTrash(massgen, "log_1/0002"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(proj, "tree", "x", "y.txt")); got != "y\n" {
		t.Fatalf("tree restored with %q", got)
	}
	if target, err := os.Readlink(filepath.Join(proj, "tree", "link")); err != nil || target != "x/y.txt" {
		t.Fatalf("link restored as %q, %v", target, err)
	}
	// A link planted for docs: refused, nothing outside, no temp entry anywhere.
	mustRename(t, filepath.Join(proj, "docs"), filepath.Join(proj, "docs_old"))
	mustSymlink(t, outside, filepath.Join(proj, "docs"))
	if err := RestoreTrash(massgen, "log_1/0001"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("RestoreTrash through a link = %v", err)
	}
	emptyDir(t, outside)
	// The link removed, the file comes back with its mode, and no temp name is left.
	if err := os.Remove(filepath.Join(proj, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := RestoreTrash(massgen, "log_1/0001"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(proj, "docs", "a.txt"))
	if err != nil || fi.Mode().Perm() != 0o640 || read(t, filepath.Join(proj, "docs", "a.txt")) != "a\n" {
		t.Fatalf("restored file: %v, %v", fi, err)
	}
	ents, _ := os.ReadDir(filepath.Join(proj, "docs"))
	if len(ents) != 1 {
		t.Fatalf("docs holds %v after the restore", ents)
	}
}

func mustRename(t *testing.T, a, b string) {
	t.Helper()
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
