//go:build linux || darwin

package snapshots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"go.uber.org/zap/zaptest"
)

// blocks is the disk space a file takes, in 512-byte blocks.
func blocks(t testing.TB, p string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks)
}

// sparse makes p a file of size bytes with data only at the offsets given (4 KiB each).
func sparse(t testing.TB, p string, size int64, at ...int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, off := range at {
		if _, err := f.WriteAt(bytes.Repeat([]byte{'d'}, 4096), off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// sameBytes compares two files by content.
func sameBytes(t testing.TB, a, b string) bool {
	t.Helper()
	fa, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	ba, bb := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		na, ea := fa.Read(ba)
		nb, eb := fb.Read(bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			return ea == eb
		}
	}
}

// Snapshot, temp workspace (copy mode), log and session-style copies keep holes: a 64 MiB
// sparse file with no blocks stays without blocks, and a file with data between holes costs its
// data blocks only, with the same content.
func TestCopiesKeepHoles(t *testing.T) {
	lane.Long(t)
	f := newFixture(t, "a")
	ws := f.ws["a"]
	sparse(t, filepath.Join(ws, "empty64"), 64<<20)
	sparse(t, filepath.Join(ws, "d", "mixed"), 64<<20, 0, 20<<20, 64<<20-4096)
	if b := blocks(t, filepath.Join(ws, "empty64")); b != 0 {
		t.Skipf("this filesystem allocated %d blocks for a sparse file", b)
	}
	dataBlocks := blocks(t, filepath.Join(ws, "d", "mixed"))
	if !f.save("a", "answer") {
		t.Fatal("not saved")
	}
	copyDir := filepath.Join(f.base, "copy")
	if err := CopyTree(context.Background(), ws, copyDir, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(f.base, "clone")
	if err := cloneTree(context.Background(), f.store.SnapshotDir("a"), clone, modeCopy); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{f.store.SnapshotDir("a"), copyDir, clone} {
		if b := blocks(t, filepath.Join(dir, "empty64")); b != 0 {
			t.Errorf("%s: the 64 MiB sparse file takes %d blocks, want 0", dir, b)
		}
		mixed := filepath.Join(dir, "d", "mixed")
		if b := blocks(t, mixed); b > dataBlocks {
			t.Errorf("%s: the mixed file takes %d blocks, the original %d", dir, b, dataBlocks)
		}
		if fi, err := os.Stat(mixed); err != nil || fi.Size() != 64<<20 || !sameBytes(t, mixed, filepath.Join(ws, "d", "mixed")) {
			t.Errorf("%s: the mixed file's content differs (%v)", dir, err)
		}
	}
	// A delta keeps holes too.
	sparse(t, filepath.Join(ws, "later"), 32<<20, 8<<20)
	f.save("a", "vote")
	if b := blocks(t, filepath.Join(f.store.SnapshotDir("a"), "later")); b > blocks(t, filepath.Join(ws, "later")) {
		t.Errorf("delta copy: %d blocks", b)
	}
}

// A workspace whose apparent size passes the cap (a 1 TiB sparse file, `truncate -s 1T big`) is
// refused by Save and CopyTree with a message naming the size, the cap and the largest file,
// before anything is written; the previous snapshot stays.
func TestHugeSparseWorkspaceRefused(t *testing.T) {
	f := newFixture(t, "a")
	ws := f.ws["a"]
	f.write("a", "notes.md", "first answer\n")
	if !f.save("a", "answer") {
		t.Fatal("not saved")
	}
	big := filepath.Join(ws, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<40); err != nil {
		t.Skipf("no 1 TiB sparse file here: %v", err)
	}
	saved, err := f.store.Save(context.Background(), "a", ws, "vote")
	var tl *TooLargeError
	if saved || !errors.As(err, &tl) {
		t.Fatalf("Save = %v, %v; want a *TooLargeError", saved, err)
	}
	for _, want := range []string{"1.0 TiB", "32.0 GiB", "largest file is big (1.0 TiB)", "previous snapshot is kept"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(f.store.SnapshotDir("a"), "big")); err == nil {
		t.Error("the big file reached the snapshot")
	}
	if got := readFileT(t, filepath.Join(f.store.SnapshotDir("a"), "notes.md")); got != "first answer\n" {
		t.Errorf("previous snapshot lost: %q", got)
	}
	dst := filepath.Join(f.base, "copy")
	err = CopyTree(context.Background(), ws, dst, zaptest.NewLogger(t))
	if !errors.As(err, &tl) {
		t.Fatalf("CopyTree = %v; want a *TooLargeError", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		t.Error("CopyTree wrote its destination before refusing")
	}
}

// A file that grows past the cap after the scan is not copied either: the copy stops at the cap.
func TestCopyBudgetStopsGrowth(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	sparse(t, src, 10<<20, 0)
	b := newCopyBudget(dir, 8<<20)
	d, err := safefs.OpenDirPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in, fi, err := d.OpenFileAt("src")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	err = copyOpen(in, fi, filepath.Join(dir, "dst"), b)
	var we *WriteError
	var tl *TooLargeError
	if !errors.As(err, &we) || !errors.As(err, &tl) {
		t.Fatalf("copyOpen = %v, want a WriteError for the cap", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "dst")); err == nil {
		t.Error("a copy was written past the cap")
	}
	// Within the cap, the copy is made.
	if err := copyOpen(in, fi, filepath.Join(dir, "dst2"), newCopyBudget(dir, 16<<20)); err != nil {
		t.Fatal(err)
	}
}

func readFileT(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkCopyData: the hole-keeping copy against a plain copy, for a dense file (what most
// workspace files are: SEEK_DATA/SEEK_HOLE must cost nothing there) and a sparse one.
func BenchmarkCopyData(b *testing.B) {
	dir := b.TempDir()
	dense := filepath.Join(dir, "dense")
	if err := os.WriteFile(dense, bytes.Repeat([]byte("0123456789abcdef"), 8<<20/16), 0o644); err != nil {
		b.Fatal(err)
	}
	holes := filepath.Join(dir, "holes")
	sparse(b, holes, 256<<20, 0, 64<<20, 128<<20, 256<<20-4096)
	for _, src := range []string{dense, holes} {
		for _, mode := range []string{"keep-holes", "plain"} {
			b.Run(filepath.Base(src)+"/"+mode, func(b *testing.B) {
				in, err := os.Open(src)
				if err != nil {
					b.Fatal(err)
				}
				defer in.Close()
				fi, _ := in.Stat()
				b.SetBytes(fi.Size())
				for i := range b.N {
					dst := filepath.Join(dir, fmt.Sprintf("out-%s-%d", mode, i))
					out, err := os.Create(dst)
					if err != nil {
						b.Fatal(err)
					}
					if mode == "plain" {
						err = plainCopy(out, in, fi.Size())
					} else {
						_, _ = in.Seek(0, io.SeekStart)
						err = copyData(out, in, fi.Size())
					}
					out.Close()
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(blocks(b, dst)*512)/(1<<20), "MiB-on-disk")
					os.Remove(dst)
				}
			})
		}
	}
}
