//go:build linux || darwin

package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// each runs a test once per strategy the platform can run (strategies_*_test.go): on Linux the
// native one and the portable ones macOS uses, forced on Linux.
func each(t *testing.T, fn func(t *testing.T, s feat)) {
	for _, st := range strategies() {
		t.Run(st.name, func(t *testing.T) { fn(t, st.f) })
	}
}

func tree(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "x/y"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/b/c/f.txt", "x/y/g.txt", "a/file"} {
		if err := os.WriteFile(filepath.Join(base, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"a/abs":     filepath.Join(base, "x"), // absolute, to a directory
		"a/rel":     "b/c",                    // relative, to a directory
		"a/up":      "../x/y/g.txt",           // relative with .., to a file
		"a/chain":   "rel/f.txt",              // a link to a path through a link
		"a/dangle":  "nowhere/new.txt",        // dangling
		"a/loop1":   "loop2",                  // a loop
		"a/loop2":   "loop1",                  //
		"a/b/outer": "../../x/../a/b/c/f.txt", // .. after a real directory
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(base, l)); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// TestResolveMatchesKernel: for existing paths the walk reaches what the kernel reaches
// (EvalSymlinks is the oracle), for missing ones it appends the missing components.
func TestResolveMatchesKernel(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		tests := []struct {
			in, want string
			exists   bool
			missing  []string
		}{
			{"a/b/c/f.txt", "a/b/c/f.txt", true, nil},
			{"a/abs/y/g.txt", "x/y/g.txt", true, nil},
			{"a/rel/f.txt", "a/b/c/f.txt", true, nil},
			{"a/up", "x/y/g.txt", true, nil},
			{"a/chain", "a/b/c/f.txt", true, nil},
			{"a/b/outer", "a/b/c/f.txt", true, nil},
			{"a/rel/../f.txt", "a/b/f.txt", false, nil}, // .. from the directory reached, not textual
			{"a/dangle", "a/nowhere/new.txt", false, []string{"nowhere"}},
			{"a/new/deeper/n.txt", "a/new/deeper/n.txt", false, []string{"new", "deeper"}},
			{"a/new/../b/c", "a/b/c", true, nil}, // the kernel refuses; the walk appends and pops
			{"a//b/./c/", "a/b/c", true, nil},
			{"a/abs/", "x", true, nil},
		}
		for _, tt := range tests {
			t.Run(tt.in, func(t *testing.T) {
				w, err := resolve(s, base+"/"+tt.in, false)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				if want := filepath.Join(base, tt.want); w.Path != want {
					t.Errorf("Path = %s, want %s", w.Path, want)
				}
				if w.Exists != tt.exists {
					t.Errorf("Exists = %v", w.Exists)
				}
				if strings.Join(w.Missing, "/") != strings.Join(tt.missing, "/") {
					t.Errorf("Missing = %v, want %v", w.Missing, tt.missing)
				}
				if tt.exists && !strings.Contains(tt.in, "new") {
					if k, err := filepath.EvalSymlinks(base + "/" + tt.in); err != nil || k != w.Path {
						t.Errorf("kernel reaches %s (%v), walk %s", k, err, w.Path)
					}
					if filepath.Join(w.Dir.Path, w.Name) != w.Path {
						t.Errorf("Dir %s + Name %s != %s", w.Dir.Path, w.Name, w.Path)
					}
				}
			})
		}
	})
}

func TestResolveEntryAndErrors(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		w, err := resolve(s, base+"/a/abs", true)
		if err != nil {
			t.Fatal(err)
		}
		if w.Path != base+"/a/abs" || !w.Info.IsLink() {
			t.Errorf("entry walk: %s link=%v", w.Path, w.Info.IsLink())
		}
		w.Close()
		w, err = resolve(s, base+"/a/abs/", true) // a trailing slash follows the link
		if err != nil || w.Path != base+"/x" {
			t.Errorf("entry walk with slash: %v %v", w, err)
		}
		w.Close()
		for in, wantErr := range map[string]error{
			"a/loop1":       unix.ELOOP,
			"a/file/x":      unix.ENOTDIR,
			"a/file/":       unix.ENOTDIR,
			"a/up/whatever": unix.ENOTDIR,
		} {
			_, err := resolve(s, base+"/"+in, false)
			var fe *Error
			if !errors.As(err, &fe) || !errors.Is(err, wantErr) {
				t.Errorf("%s: err = %v, want %v", in, err, wantErr)
			}
		}
	})
}

func TestWalkActsOnWhatItFound(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		w, err := resolve(s, base+"/a/b/c/f.txt", false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		// Swap the directory for a link to x after the walk: the walk's directory is still the old one.
		if err := os.Rename(base+"/a/b/c", base+"/a/b/c.orig"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(base+"/x/y", base+"/a/b/c"); err != nil {
			t.Fatal(err)
		}
		f, _, err := w.OpenFile()
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 100)
		n, _ := f.Read(b)
		f.Close()
		if string(b[:n]) != "a/b/c/f.txt" {
			t.Errorf("read %q", b[:n])
		}
		if _, _, err := w.Dir.WriteFile("new.txt", strings.NewReader("n"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(base + "/x/y/new.txt"); err == nil {
			t.Error("the write followed the swapped-in link")
		}
		if _, err := os.Stat(base + "/a/b/c.orig/new.txt"); err != nil {
			t.Error("the write did not land in the walked directory")
		}
	})
}

func TestWriteFileAtomic(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		w, err := resolve(s, base+"/a/new/dir/out.txt", false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		d, created, err := w.MakeParent()
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if created != base+"/a/new" {
			t.Errorf("created = %q", created)
		}
		for i, content := range []string{"one", "two"} {
			c, n, err := d.WriteFile("out.txt", strings.NewReader(content), 0o600)
			if err != nil || n != int64(len(content)) || c != (i == 0) {
				t.Fatalf("write %d: created=%v n=%d err=%v", i, c, n, err)
			}
		}
		if b, _ := os.ReadFile(base + "/a/new/dir/out.txt"); string(b) != "two" {
			t.Errorf("content %q", b)
		}
		if fi, _ := os.Stat(base + "/a/new/dir/out.txt"); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v", fi.Mode())
		}
		ents, _ := os.ReadDir(base + "/a/new/dir")
		if len(ents) != 1 {
			t.Errorf("temp files left: %v", ents)
		}
		// A link at the name is refused, its target untouched.
		if err := os.Symlink(base+"/x/y/g.txt", base+"/a/new/dir/l"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.WriteFile("l", strings.NewReader("pwned"), 0); !errors.Is(err, ErrChanged) {
			t.Errorf("write over a link: %v", err)
		}
		if b, _ := os.ReadFile(base + "/x/y/g.txt"); string(b) != "x/y/g.txt" {
			t.Error("link target changed")
		}
	})
}

func TestRemoveAllNeverFollows(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		if err := os.MkdirAll(base+"/del/sub", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(base+"/x", base+"/del/sub/tox"); err != nil {
			t.Fatal(err)
		}
		w, err := resolve(s, base+"/del", true)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := w.Dir.RemoveAll(w.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(base + "/x/y/g.txt"); err != nil {
			t.Error("RemoveAll followed a link")
		}
		if _, err := os.Lstat(base + "/del"); !errors.Is(err, fs.ErrNotExist) {
			t.Error("not removed")
		}
	})
}

func TestMkdirAllRefusesLinks(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		w, err := resolve(s, base+"/a/m1/m2/f", false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		// Someone plants a link where the walk found nothing.
		if err := os.Symlink(base+"/x", base+"/a/m1"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.MakeParent(); !errors.Is(err, ErrChanged) {
			t.Errorf("MakeParent through a planted link: %v", err)
		}
		if _, err := os.Lstat(base + "/x/m2"); err == nil {
			t.Error("created through the link")
		}
	})
}

// BenchmarkResolve: per strategy, a plain path (the fast path), a path through a link (the
// component walk), and a walk plus opening the file it found.
func BenchmarkResolve(b *testing.B) {
	base, _ := filepath.EvalSymlinks(b.TempDir())
	p := filepath.Join(base, "a", "b", "c")
	if err := os.MkdirAll(p, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p+"/f", nil, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink("b", base+"/a/l"); err != nil {
		b.Fatal(err)
	}
	for _, st := range strategies() {
		for _, c := range []struct {
			name, path string
			open       bool
		}{
			{"plain", p + "/f", false},
			{"link", base + "/a/l/c/f", false},
			{"open", p + "/f", true},
		} {
			b.Run(st.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					w, err := resolve(st.f, c.path, false)
					if err != nil {
						b.Fatal(err)
					}
					if c.open {
						f, _, err := w.OpenFile()
						if err != nil {
							b.Fatal(err)
						}
						f.Close()
					}
					w.Close()
				}
			})
		}
	}
}
