//go:build linux || darwin

package safefs

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/lane"
	"golang.org/x/sys/unix"
)

// TestStrategyHolds: with O_PATH the walk holds every entry; without, only directories (files and
// links are reopened by name later).
func TestStrategyHolds(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		for _, tt := range []struct {
			in    string
			entry bool
			held  bool
		}{
			{"a/b/c/f.txt", false, s&featPath != 0},
			{"a/b/c", false, true},
			{"a/abs", true, s&featPath != 0}, // the link itself
			{"a/rel", false, true},           // followed to a directory
			{"a/up", false, s&featPath != 0}, // followed to a file
			{"", false, true},                // "/" reached from base/..
		} {
			p := base + "/" + tt.in
			if tt.in == "" {
				p = base + strings.Repeat("/..", strings.Count(base, "/"))
			}
			w, err := resolve(s, p, tt.entry)
			if err != nil {
				t.Fatal(err)
			}
			if held := w.entry >= 0; held != tt.held || !w.Exists {
				t.Errorf("%s: held = %v, want %v (exists %v)", tt.in, held, tt.held, w.Exists)
			}
			if w.Info.IsDir() {
				d, err := w.OpenDir()
				if err != nil {
					t.Errorf("%s: OpenDir: %v", tt.in, err)
				} else {
					d.Close()
				}
			}
			w.Close()
		}
	})
}

// TestOpenFileRefusesSwap: a file, link or FIFO put at the walked name after the walk is refused,
// and a FIFO never blocks the call.
func TestOpenFileRefusesSwap(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		f := base + "/a/b/c/f.txt"
		swaps := []struct {
			name string
			swap func() error
		}{
			{"file", func() error {
				if err := os.WriteFile(f+".new", []byte("other"), 0o644); err != nil {
					return err
				}
				return os.Rename(f+".new", f)
			}},
			{"link", func() error {
				if err := os.Remove(f); err != nil {
					return err
				}
				return os.Symlink(base+"/x/y/g.txt", f)
			}},
			{"fifo", func() error {
				if err := os.Remove(f); err != nil {
					return err
				}
				return unix.Mkfifo(f, 0o644)
			}},
		}
		for _, sw := range swaps {
			if err := os.RemoveAll(f); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := resolve(s, f, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := sw.swap(); err != nil {
				t.Fatal(err)
			}
			file, _, err := w.OpenFile()
			switch {
			case err == nil:
				b, _ := io.ReadAll(file)
				file.Close()
				t.Errorf("%s swapped in: opened, read %q", sw.name, b)
			case sw.name == "fifo" && !strings.Contains(err.Error(), "not a regular file"):
				t.Errorf("fifo swapped in: %v", err)
			case sw.name != "fifo" && !errors.Is(err, ErrChanged):
				t.Errorf("%s swapped in: %v, want ErrChanged", sw.name, err)
			}
			w.Close()
		}
	})
}

// TestResolveSpecial: a FIFO is described, never opened (which would block), and is no
// directory to walk through.
func TestResolveSpecial(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		if err := unix.Mkfifo(base+"/a/fifo", 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := resolve(s, base+"/a/fifo", false)
		if err != nil {
			t.Fatal(err)
		}
		if !w.Exists || w.Info.Mode.Type() != os.ModeNamedPipe {
			t.Errorf("fifo: exists %v mode %v", w.Exists, w.Info.Mode)
		}
		if _, _, err := w.OpenFile(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("OpenFile on a fifo: %v", err)
		}
		w.Close()
		if _, err := resolve(s, base+"/a/fifo/x", false); !errors.Is(err, unix.ENOTDIR) {
			t.Errorf("through a fifo: %v, want ENOTDIR", err)
		}
	})
}

// TestReadLinkChecksIdentity: the walk reads a link by name only when it is still the link it
// described (without O_PATH there is no handle on the link itself).
func TestReadLinkChecksIdentity(t *testing.T) {
	base := tree(t)
	dfd, err := unix.Open(base+"/a", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	_, was, err := step(0, dfd, "rel")
	if err != nil || !was.IsLink() {
		t.Fatalf("step: %v %v", was.Mode, err)
	}
	if target, err := readLink(dfd, -1, "rel", was); err != nil || target != "b/c" {
		t.Fatalf("unchanged link: %q %v", target, err)
	}
	for _, swap := range []func() error{
		func() error { // another link renamed over it (a new inode: the old one is still in use)
			if err := os.Symlink(base+"/x", base+"/a/rel.new"); err != nil {
				return err
			}
			return os.Rename(base+"/a/rel.new", base+"/a/rel")
		},
		func() error { // a file
			if err := os.Remove(base + "/a/rel"); err != nil {
				return err
			}
			return os.WriteFile(base+"/a/rel", nil, 0o644)
		},
	} {
		if err := swap(); err != nil {
			t.Fatal(err)
		}
		if target, err := readLink(dfd, -1, "rel", was); !errors.Is(err, ErrChanged) {
			t.Errorf("swapped link: %q %v, want ErrChanged", target, err)
		}
	}
}

func TestEntriesAndRename(t *testing.T) {
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		w, err := resolve(s, base+"/a", false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		d, err := w.OpenDir()
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		ents, more, err := d.Entries(0)
		if err != nil || more {
			t.Fatal(err, more)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name)
		}
		want := "abs b chain dangle file loop1 loop2 rel up"
		if got := strings.Join(names, " "); got != want {
			t.Errorf("entries %q, want %q", got, want)
		}
		if !ents[0].Info.IsLink() || !ents[1].Info.IsDir() || !ents[4].Info.IsRegular() {
			t.Errorf("infos: %v %v %v", ents[0].Info.Mode, ents[1].Info.Mode, ents[4].Info.Mode)
		}
		if ents, more, err := d.Entries(3); err != nil || !more || len(ents) != 3 {
			t.Errorf("Entries(3): %d more=%v %v", len(ents), more, err)
		}
		// Rename never replaces; it moves links as links.
		if err := Rename(d, "file", d, "up"); !errors.Is(err, unix.EEXIST) {
			t.Errorf("rename over an entry: %v, want EEXIST", err)
		}
		if err := Rename(d, "abs", d, "abs2"); err != nil {
			t.Fatal(err)
		}
		if target, err := d.Readlink("abs2"); err != nil || target != base+"/x" {
			t.Errorf("moved link: %q %v", target, err)
		}
		if err := d.Symlink("b", "abs2"); !errors.Is(err, unix.EEXIST) {
			t.Errorf("symlink over an entry: %v", err)
		}
	})
}

// TestRaceSwapDirForLink is the attack the walk exists for: a goroutine swaps a directory and a
// link to a directory outside (atomically, thousands of times) while walks read, list, create
// directories and write through the name. A walk that ends inside is what a permission check
// would allow; whatever it does must land in the directory it reached, never outside.
func TestRaceSwapDirForLink(t *testing.T) {
	lane.Long(t)
	each(t, func(t *testing.T, s feat) {
		base := tree(t)
		ws, out := base+"/ws", base+"/outside"
		for _, d := range []string{ws + "/d", out} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for p, c := range map[string]string{ws + "/d/f.txt": "inside", out + "/f.txt": "secret", out + "/secret.txt": "secret"} {
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(out, ws+"/l"); err != nil {
			t.Fatal(err)
		}
		// Once there and back first: a filesystem without atomic exchange cannot run the attack.
		for range 2 {
			if err := exchange(ws+"/d", ws+"/l"); errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.ENOSYS) {
				t.Skipf("RACE TEST SKIPPED: this filesystem cannot exchange a directory and a link atomically: %v", err)
			} else if err != nil {
				t.Fatal(err)
			}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var swapErr error
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := exchange(ws+"/d", ws+"/l"); err != nil {
					swapErr = err
					return
				}
			}
		})
		inside, outside, changed := 0, 0, 0
		const iterations = 2000
		for i := range iterations {
			p := ws + "/d/f.txt"
			switch i % 4 {
			case 1:
				p = ws + "/d"
			case 2:
				p = ws + "/d/sub/new.txt"
			}
			w, err := resolve(s, p, false)
			if errors.Is(err, ErrChanged) {
				changed++
				continue
			}
			if err != nil {
				t.Fatalf("resolve %s: %v", p, err)
			}
			if !strings.HasPrefix(w.Path, ws+"/") {
				outside++ // a permission check refuses this one
				w.Close()
				continue
			}
			inside++
			switch i % 4 {
			case 0:
				f, _, err := w.OpenFile()
				if err != nil {
					t.Fatalf("open %s: %v", w.Path, err)
				}
				b, _ := io.ReadAll(f)
				f.Close()
				if string(b) != "inside" {
					t.Fatalf("read %q through %s", b, w.Path)
				}
			case 1:
				d, err := w.OpenDir()
				if err != nil {
					t.Fatalf("opendir %s: %v", w.Path, err)
				}
				ents, _, err := d.Entries(0)
				d.Close()
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ents {
					if e.Name == "secret.txt" {
						t.Fatalf("listed the outside directory through %s", w.Path)
					}
				}
			case 2:
				d, _, err := w.MakeParent()
				if err != nil {
					t.Fatalf("mkdir for %s: %v", w.Path, err)
				}
				_, _, err = d.WriteFile(w.Name, strings.NewReader("new"), 0)
				d.Close()
				if err != nil {
					t.Fatalf("write %s: %v", w.Path, err)
				}
			case 3:
				if _, _, err := w.Dir.WriteFile(w.Name, strings.NewReader("inside"), 0); err != nil {
					t.Fatalf("write %s: %v", w.Path, err)
				}
			}
			w.Close()
		}
		close(stop)
		wg.Wait()
		if swapErr != nil {
			t.Fatal(swapErr)
		}
		t.Logf("%d walks inside, %d outside, %d refused as changed", inside, outside, changed)
		if inside == 0 || outside == 0 {
			t.Errorf("the race did not happen: %d inside, %d outside", inside, outside)
		}
		ents, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 2 {
			t.Errorf("outside now holds %v", ents)
		}
		for _, f := range []string{"f.txt", "secret.txt"} {
			if b, err := os.ReadFile(out + "/" + f); err != nil || string(b) != "secret" {
				t.Errorf("outside %s: %q %v", f, b, err)
			}
		}
	})
}
