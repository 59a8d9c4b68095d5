//go:build windows

package safefs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/massgen-go/massgen/internal/winpath"
	"golang.org/x/sys/windows"
)

// tempDir is a canonical (winpath) temporary directory holding a\f.txt and a\sub\.
func tempDir(t *testing.T) string {
	t.Helper()
	// Not t.TempDir: its cleanup (os.RemoveAll) fails under Wine 8, whose NtSetInformationFile
	// lacks the deletion flags Go uses; this package's own RemoveAll removes it instead.
	d, err := os.MkdirTemp("", "safefs-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w, err := Resolve(d, true)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer w.Close()
		if err := w.Dir.RemoveAll(w.Name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	long, err := filepath.EvalSymlinks(d) // the long form: the walk expands 8.3 names
	if err != nil {
		t.Fatal(err)
	}
	c, err := winpath.Clean(long)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(c, "a", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c, "a", "f.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolveWindows(t *testing.T) {
	root := tempDir(t)
	tests := []struct {
		name, path string
		entry      bool
		want       string // canonical path
		exists     bool
		dir        string // Walk.Dir.Path
		missing    []string
		isDir      bool
		err        bool
	}{
		{name: "file", path: root + `\a\f.txt`, want: root + `\a\f.txt`, exists: true, dir: root + `\a`},
		{name: "forward slashes", path: strings.ReplaceAll(root, `\`, "/") + "/a/f.txt", want: root + `\a\f.txt`, exists: true, dir: root + `\a`},
		{name: "dir", path: root + `\a\sub`, want: root + `\a\sub`, exists: true, dir: root + `\a`, isDir: true},
		{name: "dotdot is textual", path: root + `\a\sub\..\f.txt`, want: root + `\a\f.txt`, exists: true, dir: root + `\a`},
		{name: "case-insensitive", path: root + `\A\F.TXT`, want: root + `\A\F.TXT`, exists: true, dir: root + `\A`},
		{name: "missing", path: root + `\a\x\y\z.txt`, want: root + `\a\x\y\z.txt`, dir: root + `\a`, missing: []string{"x", "y"}},
		{name: "missing leaf", path: root + `\a\new.txt`, want: root + `\a\new.txt`, dir: root + `\a`},
		{name: "file as dir", path: root + `\a\f.txt\x`, err: true},
		{name: "reserved name", path: root + `\a\con`, err: true},
		{name: "reserved with extension", path: root + `\a\NUL.txt`, err: true},
		{name: "alternate data stream", path: root + `\a\f.txt:secret`, err: true},
		{name: "trailing dot", path: root + `\a\f.txt.`, err: true},
		{name: "trailing space", path: root + `\a\f.txt `, err: true},
		{name: "relative", path: `a\f.txt`, err: true},
		{name: "drive-relative", path: `\a\f.txt`, err: true},
		{name: "device path", path: `\\.\C:\a`, err: true},
		{name: "short-looking missing name", path: root + `\a\ABCDEF~1.TXT`, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Resolve(tt.path, tt.entry)
			if tt.err {
				if err == nil {
					w.Close()
					t.Fatalf("Resolve(%q) = %q, want an error", tt.path, w.Path)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.path, err)
			}
			defer w.Close()
			if w.Path != tt.want || w.Exists != tt.exists || w.Dir.Path != tt.dir || !slices.Equal(w.Missing, tt.missing) {
				t.Fatalf("Resolve(%q) = {Path %q, Exists %v, Dir %q, Missing %q}, want {%q, %v, %q, %q}",
					tt.path, w.Path, w.Exists, w.Dir.Path, w.Missing, tt.want, tt.exists, tt.dir, tt.missing)
			}
			if tt.exists && w.Info.IsDir() != tt.isDir {
				t.Fatalf("IsDir = %v, want %v", w.Info.IsDir(), tt.isDir)
			}
			// The canonical path is the one the permission layer's Windows flavour produces.
			if c, err := winpath.Clean(tt.path); err != nil || !strings.EqualFold(c, w.Path) {
				t.Fatalf("winpath.Clean(%q) = %q, %v; walk gave %q", tt.path, c, err, w.Path)
			}
		})
	}
}

func TestVolumeRoot(t *testing.T) {
	root := tempDir(t)
	vol := root[:3] // C:\
	w, err := Resolve(vol, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Path != vol || !w.Exists || !w.Info.IsDir() || w.Name != "" {
		t.Fatalf("Resolve(%q) = %+v", vol, w)
	}
	d, err := w.OpenDir()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.Entries(5); err != nil {
		t.Fatal(err)
	}
}

func TestWriteReadListRemove(t *testing.T) {
	root := tempDir(t)
	w, err := Resolve(root+`\a\x\y\z.txt`, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	d, made, err := w.MakeParent()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if made != root+`\a\x` || d.Path != root+`\a\x\y` {
		t.Fatalf("MakeParent = %q, made %q", d.Path, made)
	}
	for i, content := range []string{"one", "two, longer"} {
		created, n, err := d.WriteFile("z.txt", strings.NewReader(content), 0)
		if err != nil {
			t.Fatal(err)
		}
		if created != (i == 0) || n != int64(len(content)) {
			t.Fatalf("WriteFile #%d: created %v, n %d", i, created, n)
		}
		got, err := os.ReadFile(filepath.Join(root, "a", "x", "y", "z.txt"))
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	// Read through a fresh walk.
	r, err := Resolve(root+`\a\x\y\z.txt`, false)
	if err != nil {
		t.Fatal(err)
	}
	f, info, err := r.OpenFile()
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "two, longer" || info.Size != int64(len(b)) {
		t.Fatalf("OpenFile read %q (size %d), %v", b, info.Size, err)
	}
	// No temp file left behind; listing sorted.
	if err := d.Mkdir("b-dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Mkdir("b-dir", 0o755); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Mkdir: %v, want ErrExist", err)
	}
	ents, more, err := d.Entries(0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
	}
	if more || !slices.Equal(names, []string{"b-dir", "z.txt"}) || !ents[0].Info.IsDir() || !ents[1].Info.IsRegular() {
		t.Fatalf("Entries = %q (more %v)", names, more)
	}
	if ents, more, _ := d.Entries(1); len(ents) != 1 || !more {
		t.Fatalf("Entries(1) = %d entries, more %v", len(ents), more)
	}
	// Remove a file, then a tree.
	if err := d.Remove("z.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lstat("z.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after Remove, Lstat: %v", err)
	}
	top, err := Resolve(root+`\a`, false)
	if err != nil {
		t.Fatal(err)
	}
	defer top.Close()
	ad, err := top.OpenDir()
	if err != nil {
		t.Fatal(err)
	}
	defer ad.Close()
	d.Close()
	w.Close()
	if err := ad.RemoveAll("x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "a", "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after RemoveAll: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "a", "f.txt")); err != nil {
		t.Fatalf("RemoveAll took a sibling: %v", err)
	}
}

func TestRenameNoReplace(t *testing.T) {
	root := tempDir(t)
	if err := os.WriteFile(filepath.Join(root, "a", "g.txt"), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Resolve(root+`\a\f.txt`, true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sub, err := w.Dir.Sub("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	tests := []struct {
		name    string
		to      *Dir
		toName  string
		wantErr error
	}{
		{"onto an existing file", w.Dir, "g.txt", fs.ErrExist},
		{"onto an existing directory", w.Dir, "sub", fs.ErrExist},
		{"onto the same name in another case", w.Dir, "G.TXT", fs.ErrExist},
		{"reserved name", w.Dir, "aux", nil},
		{"stream", w.Dir, "f.txt:s", nil},
		{"into a subdirectory", sub, "moved.txt", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Rename(w.Dir, "f.txt", tt.to, tt.toName)
			ok := tt.wantErr == nil && validName(tt.toName)
			switch {
			case ok && err != nil:
				t.Fatalf("Rename: %v", err)
			case !ok && err == nil:
				t.Fatal("Rename succeeded, want a refusal")
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("Rename: %v, want %v", err, tt.wantErr)
			}
			if !ok {
				if b, err := os.ReadFile(filepath.Join(root, "a", "g.txt")); err != nil || string(b) != "other" {
					t.Fatalf("target changed: %q, %v", b, err)
				}
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(root, "a", "sub", "moved.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("moved file: %q, %v", b, err)
	}
}

func TestNamesRefused(t *testing.T) {
	root := tempDir(t)
	w, err := Resolve(root+`\a`, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	d, err := w.OpenDir()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"con", "NUL.txt", "com1", "f.txt:stream", "f.txt::$DATA", "x.", "x ", `x\y`, "x/y", "..", "", "a*b"} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := d.WriteFile(name, strings.NewReader("x"), 0); err == nil {
				t.Errorf("WriteFile(%q) succeeded", name)
			}
			if err := d.Mkdir(name, 0o755); err == nil {
				t.Errorf("Mkdir(%q) succeeded", name)
			}
			if _, _, err := d.OpenFile(name); err == nil {
				t.Errorf("OpenFile(%q) succeeded", name)
			}
			if err := d.Remove(name); err == nil {
				t.Errorf("Remove(%q) succeeded", name)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(root, "a", "f.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("f.txt changed: %q, %v", b, err)
	}
}

// TestHeldDirectoryPinned: a directory the walk holds cannot be renamed under it.
func TestHeldDirectoryPinned(t *testing.T) {
	root := tempDir(t)
	w, err := Resolve(root+`\a\f.txt`, false)
	if err != nil {
		t.Fatal(err)
	}
	err = os.Rename(filepath.Join(root, "a"), filepath.Join(root, "moved"))
	w.Close()
	if err == nil {
		t.Fatal("renamed a directory the walk holds")
	}
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "moved")); err != nil {
		t.Fatalf("rename after Close: %v", err)
	}
}

// makeJunction creates a junction (mount point) at link pointing at the absolute dir target.
func makeJunction(link, target string) error {
	if err := os.Mkdir(link, 0o755); err != nil {
		return err
	}
	u, err := windows.UTF16PtrFromString(link)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(u, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	buf := junctionData(target)
	var n uint32
	return windows.DeviceIoControl(h, windows.FSCTL_SET_REPARSE_POINT, &buf[0], uint32(len(buf)), nil, 0, &n, nil)
}

// junctionData is the REPARSE_DATA_BUFFER of a junction to the absolute path target.
func junctionData(target string) []byte {
	sub := utf16.Encode([]rune(`\??\` + target))
	prt := utf16.Encode([]rune(target))
	const hdr = 16
	buf := make([]byte, hdr+2*len(sub)+2+2*len(prt)+2)
	put16 := func(off int, v uint16) { buf[off], buf[off+1] = byte(v), byte(v>>8) }
	put16(0, uint16(windows.IO_REPARSE_TAG_MOUNT_POINT&0xffff))
	put16(2, uint16(windows.IO_REPARSE_TAG_MOUNT_POINT>>16))
	put16(4, uint16(len(buf)-8))
	put16(8, 0)
	put16(10, uint16(2*len(sub)))
	put16(12, uint16(2*len(sub)+2))
	put16(14, uint16(2*len(prt)))
	for i, c := range sub {
		put16(hdr+2*i, c)
	}
	for i, c := range prt {
		put16(hdr+2*len(sub)+2+2*i, c)
	}
	return buf
}

// TestReparseData reads link targets as os.Readlink (and so the permission layer) writes them.
func TestReparseData(t *testing.T) {
	tests := []struct {
		name string
		buf  []byte
		want string
		err  bool
	}{
		{"absolute symlink", symlinkData(`\??\C:\a\b`, `C:\a\b`, false), `C:\a\b`, false},
		{"UNC symlink", symlinkData(`\??\UNC\srv\share\x`, `\\srv\share\x`, false), `\\srv\share\x`, false},
		{"relative symlink", symlinkData(`..\x\y`, `..\x\y`, true), `..\x\y`, false},
		{"rooted symlink", symlinkData(`\x\y`, `\x\y`, true), `\x\y`, false},
		{"junction", junctionData(`C:\target dir`), `C:\target dir`, false},
		{"volume GUID (kept, winpath refuses it)", symlinkData(`\??\Volume{1234}\x`, `x`, false), `\??\Volume{1234}\x`, false},
		{"other tag", append([]byte{0x1a, 0, 0, 0x80, 0, 0, 0, 0}, make([]byte, 16)...), "", true},
		{"short", []byte{0x0c, 0, 0, 0xa0}, "", true},
		{"length past the end", func() []byte { b := symlinkData(`C:\a`, `C:\a`, true); b[10] = 0xff; return b }(), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReparse(tt.buf)
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("parseReparse = %q, %v; want %q (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

// TestLinkTarget is where a walk goes on after a link: the permission layer's rule
// (permissions.resolveWindows), checked here on the text since Wine 8 cannot make links.
func TestLinkTarget(t *testing.T) {
	p, err := winpath.Parse(`C:\a\link\rest\x.txt`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target, want string
		err          bool
	}{
		{`D:\t`, `D:\t\rest\x.txt`, false},
		{`D:\t\`, `D:\t\rest\x.txt`, false},
		{`\\srv\share\t`, `\\srv\share\t\rest\x.txt`, false},
		{`\t`, `C:\t\rest\x.txt`, false},
		{`t`, `C:\a\t\rest\x.txt`, false},
		{`..\t`, `C:\t\rest\x.txt`, false}, // relative to the link's directory, C:\a
		{`..\..\t`, "", true},              // above the volume's root
		{`t\con`, "", true},
		{`t:ads`, "", true},
		{`\\?\GLOBALROOT\x`, "", true},
		{`\??\Volume{1234}\x`, "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			q, err := (&linkHit{i: 1, at: `C:\a\link`, target: tt.target}).path(p)
			if (err != nil) != tt.err || err == nil && q.String() != tt.want {
				t.Fatalf("target %q: %q, %v; want %q (error %v)", tt.target, q.String(), err, tt.want, tt.err)
			}
		})
	}
}

func TestLinksFollowed(t *testing.T) {
	root := tempDir(t)
	kinds := []struct {
		name string
		make func(link, target string) error
	}{
		{"junction", makeJunction},
		{"directory symlink", func(link, target string) error { return os.Symlink(target, link) }},
		{"relative directory symlink", func(link, target string) error { return os.Symlink(`a`, link) }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			link := filepath.Join(root, "link-"+strings.ReplaceAll(k.name, " ", "-"))
			if err := k.make(link, root+`\a`); err != nil {
				t.Skipf("cannot create a %s here (%v): not tested", k.name, err)
			}
			if _, err := os.Lstat(link); err != nil {
				// Wine 8's CreateSymbolicLinkW reports success and creates nothing.
				t.Skipf("creating a %s reported success but nothing is there (%v): not tested", k.name, err)
			}
			w, err := Resolve(link+`\f.txt`, false)
			if err != nil {
				t.Fatal(err)
			}
			if w.Path != root+`\a\f.txt` || !w.Exists {
				w.Close()
				t.Fatalf("through the %s: Path %q, Exists %v; want %q", k.name, w.Path, w.Exists, root+`\a\f.txt`)
			}
			w.Close()
			// The link itself, for removal.
			e, err := Resolve(link, true)
			if err != nil {
				t.Fatal(err)
			}
			if e.Path != link || !e.Info.IsLink() {
				e.Close()
				t.Fatalf("entry: Path %q, link %v", e.Path, e.Info.IsLink())
			}
			// Sub and OpenFile refuse the link.
			if s, err := e.Dir.Sub(e.Name); err == nil {
				s.Close()
				t.Fatal("Sub followed a link")
			}
			if err := e.Dir.Remove(e.Name); err != nil {
				e.Close()
				t.Fatal(err)
			}
			e.Close()
			if _, err := os.Stat(filepath.Join(root, "a", "f.txt")); err != nil {
				t.Fatalf("removing the link touched its target: %v", err)
			}
		})
	}
	t.Run("loop", func(t *testing.T) {
		l1, l2 := filepath.Join(root, "l1"), filepath.Join(root, "l2")
		if err := os.Symlink(l2, l1); err != nil {
			t.Skipf("cannot create symbolic links here (%v): not tested", err)
		}
		if err := os.Symlink(l1, l2); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(l1); err != nil {
			t.Skipf("creating a symbolic link reported success but nothing is there (%v): not tested", err)
		}
		if w, err := Resolve(l1+`\x`, false); err == nil {
			w.Close()
			t.Fatal("a link loop resolved")
		}
	})
	t.Run("Symlink", func(t *testing.T) {
		w, err := Resolve(root+`\a`, false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		d, err := w.OpenDir()
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.Symlink("f.txt", "flink"); err != nil {
			t.Skipf("cannot create symbolic links through handles here (%v): not tested", err)
		}
		if got, err := d.Readlink("flink"); err != nil || got != "f.txt" {
			t.Fatalf("Readlink = %q, %v", got, err)
		}
		if err := d.Symlink("f.txt", "flink"); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("second Symlink: %v, want ErrExist", err)
		}
		if _, _, err := d.OpenFile("flink"); !errors.Is(err, ErrChanged) {
			t.Fatalf("OpenFile on a link: %v, want ErrChanged", err)
		}
		if _, _, err := d.WriteFile("flink", strings.NewReader("x"), 0); !errors.Is(err, ErrChanged) {
			t.Fatalf("WriteFile on a link: %v, want ErrChanged", err)
		}
		r, err := Resolve(root+`\a\flink`, false)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.Path != root+`\a\f.txt` {
			t.Fatalf("through the file link: %q", r.Path)
		}
	})
}

// TestRenameRace: a goroutine renames the directory back and forth while walks write into it.
// Held, the directory cannot be renamed, so each write lands where the walk's path says.
func TestRenameRace(t *testing.T) {
	root := tempDir(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		moved := 0
		for {
			select {
			case <-stop:
				done <- moved
				return
			default:
			}
			if os.Rename(a, b) == nil {
				moved++
				for os.Rename(b, a) != nil {
				}
			}
		}
	}()
	const n = 1000
	for i := 0; i < n; i++ {
		w, err := Resolve(filepath.Join(a, "f.txt"), false)
		if err != nil {
			continue // renamed away at that moment: nothing judged, nothing done
		}
		if !w.Exists {
			w.Close()
			continue
		}
		_, _, err = w.Dir.WriteFile("w.txt", strings.NewReader("x"), 0)
		if err == nil {
			if _, err := os.Lstat(filepath.Join(w.Dir.Path, "w.txt")); err != nil {
				w.Close()
				close(stop)
				t.Fatalf("iteration %d: the write is not at %s: %v", i, w.Dir.Path, err)
			}
		}
		w.Close()
	}
	close(stop)
	moved := <-done
	if moved == 0 {
		t.Log("the directory was never renamed between walks (the race did not happen)")
	}
	t.Logf("%d renames between %d walks", moved, n)
}
