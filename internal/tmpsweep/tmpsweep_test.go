package tmpsweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/lane"
)

func write(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSweepRemovesOnlyAbandonedTempFiles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	abandoned := []string{
		filepath.Join(proj, ".f12.txt.massgen-tmp-a8cd01234567"),
		filepath.Join(proj, "sub", "deeper", ".page.html.massgen-tmp-0123456789ab"),
	}
	for _, p := range abandoned {
		write(t, p, "half a file")
	}
	kept := map[string]string{
		filepath.Join(proj, "f12.txt"):                                     "the user's file",
		filepath.Join(proj, ".f12.txt.massgen-tmp-xyz"):                    "not the pattern",
		filepath.Join(proj, ".f12.txt.massgen-tmp-A8CD01234567"):           "not the pattern (upper case)",
		filepath.Join(proj, ".git", ".x.massgen-tmp-a8cd01234567"):         "agents never write in .git",
		filepath.Join(proj, "node_modules", ".y.massgen-tmp-a8cd01234567"): "nor in node_modules",
	}
	for p := range kept {
		write(t, p, "keep")
	}
	// Held open by a live writer (this process).
	live := filepath.Join(proj, ".live.txt.massgen-tmp-ffffffffffff")
	write(t, live, "being written")
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kept[live] = "open"
	// A second link: not a temp file massgen made.
	linked := filepath.Join(proj, ".linked.massgen-tmp-eeeeeeeeeeee")
	write(t, linked, "linked")
	if err := os.Link(linked, filepath.Join(root, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	kept[linked] = "linked"
	// A symlink with the name, to a user file outside.
	outside := filepath.Join(root, "outside.txt")
	write(t, outside, "outside")
	if err := os.Symlink(outside, filepath.Join(proj, ".s.massgen-tmp-dddddddddddd")); err != nil {
		t.Fatal(err)
	}
	kept[outside] = "symlink target"

	rep, err := Sweep(ctx, []string{proj}, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(abandoned)
	if !slices.Equal(rep.Removed, abandoned) {
		t.Errorf("removed %v, want %v", rep.Removed, abandoned)
	}
	for _, p := range abandoned {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for p, why := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s (%s) was removed", p, why)
		}
	}
	var reasons []string
	for _, k := range rep.Kept {
		reasons = append(reasons, filepath.Base(k.Path)+": "+k.Reason)
	}
	slices.Sort(reasons)
	want := []string{".linked.massgen-tmp-eeeeeeeeeeee: it has other links", ".live.txt.massgen-tmp-ffffffffffff: a process has it open (a write in progress)"}
	if !slices.Equal(reasons, want) {
		t.Errorf("kept %q, want %q", reasons, want)
	}
}

// A context path that is a file: only its own temp files, beside it, are swept.
func TestSweepFileContextPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "README.md")
	write(t, file, "readme")
	mine := filepath.Join(dir, ".README.md.massgen-tmp-0123456789ab")
	other := filepath.Join(dir, ".other.txt.massgen-tmp-0123456789ab")
	write(t, mine, "half")
	write(t, other, "half")
	rep, err := Sweep(context.Background(), []string{file, filepath.Join(dir, "missing")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Removed, []string{mine}) {
		t.Errorf("removed %v, want only %s", rep.Removed, mine)
	}
	if _, err := os.Stat(other); err != nil {
		t.Error("a temp file of another file outside the context path was removed")
	}
}

// Writers race the sweep: each writes a temp file, keeps it open, renames it into place and
// only then closes it, as filesystem's atomic write does. No writer ever loses its temp file to
// a sweep, and no temp file is left once they stop.
func TestSweepNeverTakesALiveWrite(t *testing.T) {
	dir := t.TempDir()
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				name := fmt.Sprintf("f%d.txt", w)
				tmp := filepath.Join(dir, fmt.Sprintf(".%s.massgen-tmp-%012x", name, i))
				f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
				if err != nil {
					errs <- err
					return
				}
				_, err = f.WriteString(fmt.Sprint(i))
				if err == nil {
					err = os.Rename(tmp, filepath.Join(dir, name))
				}
				f.Close()
				if err != nil {
					errs <- fmt.Errorf("writer %d, write %d: %w", w, i, err)
					return
				}
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	removed := 0
	for range 300 {
		rep, err := Sweep(context.Background(), []string{dir}, nil)
		if err != nil {
			t.Fatal(err)
		}
		removed += len(rep.Removed)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if removed != 0 {
		t.Errorf("the sweep removed %d temp files of live writes", removed)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if IsTempName(e.Name()) {
			t.Errorf("%s left behind", e.Name())
		}
	}
}

// A folder of the context path is swapped for a link to a folder outside it, thousands of
// times, while sweeps run: an abandoned-looking temp file outside is never listed or removed
// (the sweep walks and removes through descriptors, never through a link).
func TestSweepSwappedFolderStaysInside(t *testing.T) {
	lane.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("temp files are removed on Linux only (/proc)")
	}
	base := t.TempDir()
	root := filepath.Join(base, "proj")
	outside := filepath.Join(base, "outside")
	bait := filepath.Join(outside, ".secret.txt.massgen-tmp-0123456789ab")
	write(t, filepath.Join(root, "sub", "keep.txt"), "inside")
	write(t, bait, "not in the context path")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		sub, aside := filepath.Join(root, "sub"), filepath.Join(root, "aside")
		// Each state is held for a moment (the attacker's timing, not synchronisation): the
		// folder is a folder when it is listed and a link when it is entered and swept.
		for i := 0; !stop.Load(); i++ {
			_ = os.Rename(sub, aside)
			_ = os.Symlink(outside, sub)
			time.Sleep(time.Duration(i%50) * 10 * time.Microsecond)
			_ = os.Remove(sub)
			_ = os.Rename(aside, sub)
			time.Sleep(time.Duration(i%7) * 10 * time.Microsecond)
		}
	})
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 3000 {
		rep, _ := Sweep(context.Background(), []string{root}, nil)
		if len(rep.Removed) > 0 {
			t.Fatalf("sweep %d removed %v", i, rep.Removed)
		}
		for _, k := range rep.Kept {
			t.Errorf("sweep %d listed %s (%s)", i, k.Path, k.Reason)
		}
		if _, err := os.Lstat(bait); err != nil {
			t.Fatalf("sweep %d: the file outside is gone: %v", i, err)
		}
	}
}
