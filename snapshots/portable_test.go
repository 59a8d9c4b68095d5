package snapshots

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/massgen-go/massgen/internal/safefs"
)

// The operations each OS implements its own way (stat_*.go, open_*.go): their contract.

func TestRenameNoReplace(t *testing.T) {
	tests := []struct {
		name     string
		existing func(p string) error // what is at the target already (nil: nothing)
		wantErr  bool
	}{
		{"absent target", nil, false},
		{"existing file", func(p string) error { return os.WriteFile(p, []byte("old"), 0o644) }, true},
		{"existing empty directory", func(p string) error { return os.Mkdir(p, 0o755) }, true},
		{"dangling symlink", func(p string) error { return os.Symlink("nowhere", p) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if err := os.Mkdir(a, 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.existing != nil {
				if err := tt.existing(b); err != nil {
					t.Fatal(err)
				}
			}
			err := renameNoReplace(a, b)
			if !tt.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Lstat(b); err != nil || !fi.IsDir() {
					t.Fatalf("b after the rename: %v %v", fi, err)
				}
				return
			}
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("renameNoReplace onto %s: %v, want an error that is fs.ErrExist", tt.name, err)
			}
			if _, err := os.Lstat(a); err != nil {
				t.Errorf("a is gone after a refused rename: %v", err)
			}
		})
	}
}

func TestExchange(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "name"), []byte(filepath.Base(d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := exchange(a, b); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]string{a: "b", b: "a"} {
		if got, err := os.ReadFile(filepath.Join(d, "name")); err != nil || string(got) != want {
			t.Errorf("%s holds %q, %v; want %q", d, got, err, want)
		}
	}
}

func TestOpenNeverFollows(t *testing.T) {
	dir := t.TempDir()
	file, link := filepath.Join(dir, "file"), filepath.Join(dir, "link")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file", link); err != nil {
		t.Fatal(err)
	}
	root, err := safefs.OpenDirPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for name, open := range map[string]func(string) (*os.File, error){
		"OpenNoFollow": func(n string) (*os.File, error) { return safefs.OpenNoFollow(filepath.Join(dir, n)) },
		"OpenFileAt": func(n string) (*os.File, error) {
			f, _, err := root.OpenFileAt(n)
			return f, err
		},
	} {
		f, err := open("file")
		if err != nil {
			t.Errorf("%s(file): %v", name, err)
		} else {
			f.Close()
		}
		if f, err := open("link"); err == nil {
			f.Close()
			t.Errorf("%s(link) opened the file behind a symlink", name)
		}
	}
	// createCopy creates nothing through a symlink, dangling or not.
	if err := os.Symlink("target", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if f, err := createCopy(filepath.Join(dir, "dangling"), 0o644); err == nil {
		f.Close()
		t.Error("createCopy wrote through a dangling symlink")
	}
	if _, err := os.Lstat(filepath.Join(dir, "target")); err == nil {
		t.Error("createCopy created the symlink's target")
	}
}

func TestLinkUnsupported(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&os.LinkError{Op: "link", Err: syscall.EXDEV}, true},
		{&os.LinkError{Op: "link", Err: syscall.EMLINK}, true},
		{&os.LinkError{Op: "link", Err: syscall.EPERM}, true},
		{&os.LinkError{Op: "link", Err: syscall.EEXIST}, false},
		{&os.LinkError{Op: "link", Err: syscall.ENOSPC}, false},
		{&os.LinkError{Op: "link", Err: syscall.ENOENT}, false},
	} {
		if got := linkUnsupported(tt.err); got != tt.want {
			t.Errorf("linkUnsupported(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// BenchmarkOpenInRoot: the cost of opening a workspace file by descriptor, never through a
// link (safefs: one openat2 on Linux), against os.Root's own open, which follows in-root links,
// for a file at the top and one three directories down.
func BenchmarkOpenInRoot(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, f := range []string{"f", "a/b/c/f"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	d, err := safefs.OpenDirPath(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for _, rel := range []string{"f", "a/b/c/f"} {
		for name, open := range map[string]func() (*os.File, error){
			"safefs.OpenFileAt": func() (*os.File, error) { f, _, err := d.OpenFileAt(rel); return f, err },
			"root.OpenFile":     func() (*os.File, error) { return root.OpenFile(rel, os.O_RDONLY, 0) },
		} {
			b.Run(name+"/"+rel, func(b *testing.B) {
				for b.Loop() {
					f, err := open()
					if err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
			})
		}
	}
}
