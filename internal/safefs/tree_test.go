//go:build linux || darwin

package safefs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/lane"
)

func openDir(t *testing.T, p string) *Dir {
	t.Helper()
	d, err := OpenDirPath(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// WalkEntries lists everything below the directory, parents first, links as links (never
// followed), and fs.SkipDir leaves a directory out.
func TestWalkEntries(t *testing.T) {
	base := tree(t)
	tests := []struct {
		name string
		skip string
		want []string
	}{
		{"all", "", []string{"a", "a/abs", "a/b", "a/b/c", "a/b/c/f.txt", "a/b/outer", "a/chain", "a/dangle",
			"a/file", "a/loop1", "a/loop2", "a/rel", "a/up", "x", "x/y", "x/y/g.txt"}},
		{"skip a/b", "a/b", []string{"a", "a/abs", "a/b", "a/chain", "a/dangle", "a/file", "a/loop1", "a/loop2",
			"a/rel", "a/up", "x", "x/y", "x/y/g.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := openDir(t, base).WalkEntries(func(rel string, dir *Dir, e Entry, err error) error {
				if err != nil {
					t.Errorf("%s: %v", rel, err)
					return nil
				}
				if want := JoinRel(base, rel); Join(dir.Path, e.Name) != want {
					t.Errorf("%s: reached at %s, want %s", rel, Join(dir.Path, e.Name), want)
				}
				if strings.HasPrefix(rel, "a/abs/") || strings.HasPrefix(rel, "a/rel/") {
					t.Errorf("%s: a link was followed", rel)
				}
				got = append(got, rel)
				if rel == tt.skip {
					return fs.SkipDir
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("walked %v\nwant %v", got, tt.want)
			}
		})
	}
}

// A directory swapped for a link to a folder outside while WalkEntries or WalkTypes runs, thousands
// of times:
// the walk never lists anything outside the walked directory.
func TestWalkEntriesSwapRace(t *testing.T) {
	lane.Long(t)
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "d", "e"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "d", "e", "inside"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d := openDir(t, root)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		dir, aside := filepath.Join(root, "d"), filepath.Join(root, "aside")
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Rename(dir, aside)
			_ = os.Symlink(outside, dir)
			_ = os.Remove(dir)
			_ = os.Rename(aside, dir)
		}
	})
	refused := 0
	for i := range 3000 {
		walk := d.WalkEntries
		if i%2 == 1 {
			walk = d.WalkTypes
		}
		err := walk(func(rel string, _ *Dir, e Entry, err error) error {
			if err != nil {
				refused++
				return nil
			}
			if e.Name == "secret" {
				t.Errorf("walked outside the directory: %s", rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d descents refused", refused)
}

// SubPath opens a directory below d by descriptor and refuses a link on the way.
func TestSubPath(t *testing.T) {
	base := tree(t)
	d := openDir(t, base)
	tests := []struct {
		rel  string
		want string // error text, "" for success
	}{
		{"", ""},
		{"a/b/c", ""},
		{"a/rel", "changed"},
		{"a/abs/y", "changed"},
		{"a/file", "not a directory"},
		{"a/none", "no such file"},
	}
	for _, tt := range tests {
		sub, err := d.SubPath(tt.rel)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.rel, err)
				continue
			}
			if want := JoinRel(base, tt.rel); tt.rel != "" && sub.Path != want {
				t.Errorf("%q: path %s, want %s", tt.rel, sub.Path, want)
			}
			sub.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.rel, err, tt.want)
			sub.Close()
		}
	}
}

// RemoveSame removes only the entry that was checked: another file (or a link) put at the name
// since stays, and a directory is refused.
func TestRemoveSame(t *testing.T) {
	tests := []struct {
		name  string
		swap  func(t *testing.T, p string)
		want  error
		stays bool
	}{
		{"unchanged", func(*testing.T, string) {}, nil, false},
		{"replaced by another file", func(t *testing.T, p string) {
			must(t, os.Remove(p))
			must(t, os.WriteFile(p, nil, 0o644))
		}, ErrChanged, true},
		{"replaced by a link", func(t *testing.T, p string) {
			must(t, os.Remove(p))
			must(t, os.Symlink("elsewhere", p))
		}, ErrChanged, true},
		{"removed", func(t *testing.T, p string) { must(t, os.Remove(p)) }, fs.ErrNotExist, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			p := filepath.Join(base, "f")
			must(t, os.WriteFile(p, []byte("x"), 0o644))
			d := openDir(t, base)
			info, err := d.Lstat("f")
			must(t, err)
			// A second file keeps the inode of f in use so that a new file cannot reuse it.
			keep, err := os.Open(p)
			must(t, err)
			defer keep.Close()
			tt.swap(t, p)
			err = d.RemoveSame("f", info)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("RemoveSame: %v, want %v", err, tt.want)
			}
			if _, err := os.Lstat(p); (err == nil) != tt.stays {
				t.Errorf("after RemoveSame: lstat %v, want it to stay: %v", err, tt.stays)
			}
		})
	}
	base := t.TempDir()
	must(t, os.Mkdir(filepath.Join(base, "sub"), 0o755))
	d := openDir(t, base)
	info, err := d.Lstat("sub")
	must(t, err)
	if err := d.RemoveSame("sub", info); err == nil {
		t.Error("a directory was removed")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func openDirWith(t *testing.T, f feat, p string) *Dir {
	t.Helper()
	w, err := resolve(f, p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	d, err := w.OpenDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// OpenFileAt opens a file below the directory and refuses a link anywhere on the way, with
// every strategy (one openat2 / O_NOFOLLOW_ANY call, or a walk).
func TestOpenFileAt(t *testing.T) {
	each(t, func(t *testing.T, f feat) {
		base := tree(t)
		d := openDirWith(t, f, base)
		tests := []struct {
			rel  string
			want string // content, or "!" and the error text
		}{
			{"a/b/c/f.txt", "a/b/c/f.txt"},
			{"a/file", "a/file"},
			{"a/rel/f.txt", "!changed"},
			{"a/abs/y/g.txt", "!changed"},
			{"a/up", "!changed"},
			{"a/b", "!directory"},
			{"a/b/none", "!no such file"},
			{"a/../x/y/g.txt", "!invalid argument"},
			{"a/b/c/..", "!"},
		}
		for _, tt := range tests {
			file, _, err := d.OpenFileAt(tt.rel)
			if strings.HasPrefix(tt.want, "!") {
				if err == nil || !strings.Contains(err.Error(), tt.want[1:]) {
					t.Errorf("%s: error %v, want %q", tt.rel, err, tt.want[1:])
				}
				if err == nil {
					file.Close()
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", tt.rel, err)
				continue
			}
			got, _ := io.ReadAll(file)
			file.Close()
			if string(got) != tt.want {
				t.Errorf("%s: read %q, want %q", tt.rel, got, tt.want)
			}
		}
	})
}

// StatBeneath reaches what os.Root reaches (the oracle) and refuses what it refuses.
func TestStatBeneathMatchesRoot(t *testing.T) {
	base := tree(t)
	must(t, os.Symlink("../../..", filepath.Join(base, "a", "b", "c", "top")))
	must(t, os.Symlink("../..", filepath.Join(base, "a", "b", "c", "base")))
	must(t, os.Symlink("c/base/x/", filepath.Join(base, "a", "b", "slash")))
	must(t, os.Symlink("f.txt/", filepath.Join(base, "a", "b", "c", "fslash")))
	must(t, os.Symlink("./..", filepath.Join(base, "a", "b", "c", "dotup"))) // ".." after "."
	must(t, os.Symlink("dotup/c/f.txt", filepath.Join(base, "a", "b", "c", "viadot")))
	must(t, os.Symlink("dotup/dotup", filepath.Join(base, "a", "b", "c", "viadot2")))
	must(t, os.Symlink("f.txt/.", filepath.Join(base, "a", "b", "c", "fdot")))
	root, err := os.OpenRoot(base)
	must(t, err)
	defer root.Close()
	d := openDir(t, base)
	for _, rel := range []string{"a", "a/b/c/f.txt", "a/abs", "a/rel", "a/rel/f.txt", "a/up", "a/chain",
		"a/dangle", "a/loop1", "a/b/outer", "a/b/c/top", "a/b/c/base", "a/b/c/base/x/y/g.txt", "a/b/slash",
		"a/b/c/fslash", "a/b/..", "a/b/../..", "..", "a/../..", "x/y/../../a/file", "a/rel/../../x", "a/file/",
		"a/rel/", ".", "x/./y", "a/b/c/dotup", "a/b/c/viadot", "a/b/c/viadot2", "a/b/c/fdot", "a/file/.",
		"a/./../x", "./a/b/c/dotup/../../file", "a/b/./../b/c/f.txt"} {
		matchesRoot(t, root, d, base, rel)
	}
}

// matchesRoot checks that StatBeneath of rel succeeds where os.Root's Stat does, and reaches the
// same file.
func matchesRoot(t *testing.T, root *os.Root, d *Dir, base, rel string) {
	t.Helper()
	want, werr := root.Stat(rel)
	got, gerr := d.StatBeneath(rel)
	if (werr == nil) != (gerr == nil) {
		t.Errorf("%s: StatBeneath %v, os.Root %v", rel, gerr, werr)
		return
	}
	if werr == nil && !os.SameFile(want, fileInfo(t, base, rel, got)) {
		t.Errorf("%s: reached another file than os.Root", rel)
	}
}

// fileInfo finds the file got describes among the oracle's view (by device and inode).
func fileInfo(t *testing.T, base, rel string, got Info) os.FileInfo {
	t.Helper()
	var found os.FileInfo
	_ = filepath.WalkDir(base, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Dev) == got.Dev && st.Ino == got.Ino {
			found = fi
			return filepath.SkipAll
		}
		return nil
	})
	if found == nil {
		t.Fatalf("%s: StatBeneath reached a file outside %s", rel, base)
	}
	return found
}

// OpenNoFollow refuses a link as the last component; CreateNew refuses any existing entry, a
// link (even a dangling one) included, and never writes through it.
func TestPathHelpers(t *testing.T) {
	base := t.TempDir()
	file, link, dangling := filepath.Join(base, "f"), filepath.Join(base, "l"), filepath.Join(base, "d")
	must(t, os.WriteFile(file, []byte("x"), 0o644))
	must(t, os.Symlink(file, link))
	must(t, os.Symlink(filepath.Join(base, "new"), dangling))
	if f, err := OpenNoFollow(file); err != nil {
		t.Errorf("OpenNoFollow(file): %v", err)
	} else {
		f.Close()
	}
	if f, err := OpenNoFollow(link); err == nil {
		f.Close()
		t.Error("OpenNoFollow followed a link")
	}
	for _, p := range []string{file, link, dangling} {
		if f, err := CreateNew(p, 0o600); !errors.Is(err, fs.ErrExist) {
			if f != nil {
				f.Close()
			}
			t.Errorf("CreateNew(%s): %v, want it to exist", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(base, "new")); err == nil {
		t.Error("CreateNew wrote through a dangling link")
	}
	f, err := CreateNew(filepath.Join(base, "made"), 0o600)
	must(t, err)
	f.Close()
}

// WalkTypes lists what WalkEntries lists, with the same types, and directories with their full
// stat, with every strategy; it starts from a Dir made from a descriptor (FromFD).
func TestWalkTypes(t *testing.T) {
	each(t, func(t *testing.T, f feat) {
		base := tree(t)
		d := openDirWith(t, f, base)
		type seen struct {
			rel  string
			mode fs.FileMode
		}
		var want []seen
		must(t, d.WalkEntries(func(rel string, _ *Dir, e Entry, err error) error {
			must(t, err)
			want = append(want, seen{rel, e.Info.Mode.Type()})
			return nil
		}))
		file, err := os.Open(base)
		must(t, err)
		defer file.Close()
		fd, err := FromFD(file.Fd(), base)
		must(t, err)
		defer fd.Close()
		for _, start := range []*Dir{d, fd} {
			var got []seen
			must(t, start.WalkTypes(func(rel string, dir *Dir, e Entry, err error) error {
				must(t, err)
				if e.Info.IsDir() {
					li, err := dir.Lstat(e.Name)
					must(t, err)
					if !li.Same(e.Info) || e.Info.Ino == 0 {
						t.Errorf("%s: directory stat %+v, lstat %+v", rel, e.Info, li)
					}
				}
				got = append(got, seen{rel, e.Info.Mode.Type()})
				return nil
			}))
			if !slices.Equal(got, want) {
				t.Errorf("WalkTypes %v\nWalkEntries %v", got, want)
			}
		}
	})
}

// OpenDirPath takes a relative path from the working directory, says an empty one does not
// exist and refuses a file.
func TestOpenDirPath(t *testing.T) {
	base := tree(t)
	t.Chdir(base)
	tests := []struct {
		p    string
		want error // nil: opened
	}{
		{"a/b", nil},
		{filepath.Join(base, "x"), nil},
		{"a/rel", nil}, // a link as the last component is followed
		{"", fs.ErrNotExist},
		{"none", fs.ErrNotExist},
		{"a/file", syscall.ENOTDIR},
	}
	for _, tt := range tests {
		d, err := OpenDirPath(tt.p)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("OpenDirPath(%q): %v, want %v", tt.p, err, tt.want)
		}
		if err == nil {
			d.Close()
		}
	}
}

// FuzzStatBeneathMatchesRoot builds trees of links whose targets are made of ".", "..",
// directory, file and link names (and the odd absolute path) and checks that StatBeneath
// reaches what os.Root reaches, for every link and a few paths through them.
func FuzzStatBeneathMatchesRoot(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte("2ay1107Y1y11102y"))
	f.Add([]byte{5, 2, 1, 1, 6, 3, 0, 1, 7, 1, 1, 1, 1})
	parts := []string{".", "..", "d", "d/e", "l0", "l1", "l2", "f", "/", "l3", ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(base, "d", "e"), 0o755))
		must(t, os.WriteFile(filepath.Join(base, "f"), []byte("f"), 0o644))
		var links []string
		for n := 0; len(data) >= 2 && n < 4; n++ {
			loc, l := int(data[0])%3, int(data[1])%5+1
			data = data[2:]
			var tgt []string
			for i := 0; i < l && len(data) > 0; i++ {
				tgt = append(tgt, parts[int(data[0])%len(parts)])
				data = data[1:]
			}
			target := strings.Join(tgt, "/")
			if target == "" {
				continue
			}
			dir := []string{"", "d", "d/e"}[loc]
			name := path.Join(dir, "l"+string(rune('0'+n)))
			if os.Symlink(target, filepath.Join(base, name)) == nil {
				links = append(links, name)
			}
		}
		root, err := os.OpenRoot(base)
		must(t, err)
		defer root.Close()
		d := openDir(t, base)
		for _, l := range links {
			for _, rel := range []string{l, l + "/", l + "/.", l + "/f", l + "/..", l + "/e", "d/../" + l} {
				matchesRoot(t, root, d, base, rel)
			}
		}
	})
}

// A directory listed by a walk and replaced before it is opened is reported as changed
// (ErrChanged), whatever took its place: the walks leave such a folder out rather than fail.
func TestSubSameReplacedDirectory(t *testing.T) {
	tests := []struct {
		name string
		swap func(t *testing.T, p string)
		want error
	}{
		{"unchanged", func(*testing.T, string) {}, nil},
		{"replaced by a file", func(t *testing.T, p string) {
			must(t, os.Rename(p, p+".aside"))
			must(t, os.WriteFile(p, nil, 0o644))
		}, ErrChanged},
		{"replaced by a link", func(t *testing.T, p string) {
			must(t, os.Rename(p, p+".aside"))
			must(t, os.Symlink(p+".aside", p))
		}, ErrChanged},
		{"replaced by another directory", func(t *testing.T, p string) {
			must(t, os.Rename(p, p+".aside"))
			must(t, os.Mkdir(p, 0o755))
		}, ErrChanged},
		{"removed", func(t *testing.T, p string) { must(t, os.Remove(p)) }, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			p := filepath.Join(base, "d")
			must(t, os.Mkdir(p, 0o755))
			d := openDir(t, base)
			info, err := d.Lstat("d")
			must(t, err)
			tt.swap(t, p)
			sub, err := d.SubSame("d", info)
			if sub != nil {
				sub.Close()
			}
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("SubSame = %v; want %v", err, tt.want)
			}
		})
	}
}
