//go:build linux

package filesystem

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/permissions"
)

// FuzzWalkDecide drives the walk and the decision made on it with arbitrary paths while a
// background swapper flips a file and a directory of the workspace with links to a protected
// file, a protected directory and a directory outside. Oracles: for paths that do not touch a
// swapped entry, the walk reaches what filepath.EvalSymlinks (the kernel) reaches; and for every
// allowed write or delete, where the operation would land, read back from the kernel through the
// held descriptor (/proc/self/fd), is writable by the policy. No write decision may land outside
// the writable roots or on a protected path, whatever the interleaving.
func FuzzWalkDecide(f *testing.F) {
	e := newEnv(f, permissions.Final)
	write(f, filepath.Join(e.ws, "d", "f"), "mine")
	write(f, filepath.Join(e.ws, "d", "sub", "g"), "mine")
	write(f, filepath.Join(e.proj, "golden", "f"), "golden")
	mkdir(f, filepath.Join(e.ws, "stable", "deep"))
	if err := os.Symlink(filepath.Join(e.proj, "golden"), filepath.Join(e.ws, "to_golden")); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("stable/deep/../..", filepath.Join(e.ws, "up")); err != nil {
		f.Fatal(err)
	}
	a, b, fix := flipFile(f, e.ws, "x", "mine", filepath.Join(e.proj, "golden", "expected.txt"))
	fileSwap := startSwapper(f, a, b, fix)
	da, db := filepath.Join(e.ws, "d"), filepath.Join(e.ws, "d.alt")
	if err := os.Symlink(filepath.Join(e.proj, "golden"), db); err != nil {
		f.Fatal(err)
	}
	dirSwap := startSwapper(f, da, db, nil)
	outSwapA, outSwapB := filepath.Join(e.ws, "o"), filepath.Join(e.ws, "o.alt")
	mkdir(f, outSwapA)
	if err := os.Symlink(e.out, outSwapB); err != nil {
		f.Fatal(err)
	}
	outSwap := startSwapper(f, outSwapA, outSwapB, nil)
	f.Cleanup(func() { fileSwap.halt(); dirSwap.halt(); outSwap.halt() })

	table := Table()
	for _, s := range []string{"x", "d/f", "d/sub/g", "d/../x", "d/sub/../../x", "x/", "d/", "d/.", "o/secret.txt", "o/new",
		"to_golden/f", "up/x", "up/d/f", "stable/deep/../../d/f", "../project/golden/expected.txt", "d/new/dir/file",
		e.proj + "/index.html", e.proj + "/golden/../index.html", e.ws + "/d/../d/../o/../x", "~/x", "/"} {
		f.Add(s, byte(0))
		f.Add(s, byte(1))
	}
	f.Fuzz(func(t *testing.T, p string, op byte) {
		if len(p) > 256 || strings.ContainsRune(p, 0) {
			return
		}
		tool, access := "write_file", permissions.Write
		if op%2 == 1 {
			tool, access = "delete_file", permissions.Delete
		}
		decl := table[tool]
		ws := newWalks()
		defer ws.close()
		d := e.pol.Decide(permissions.Request{Tool: tool, Args: map[string]any{"path": p, "content": ""}, Decl: &decl, Resolver: ws})
		if !d.Allow {
			return
		}
		w := ws.m[walkKey{"path", access == permissions.Delete}]
		if w == nil {
			t.Fatalf("%s %q allowed without a walk", tool, p)
		}
		// Where the operation lands: the held directory, wherever it is now, and the name.
		real := heldPath(t, w.Dir)
		if real == "" {
			return // the directory was removed meanwhile: nothing can land anywhere
		}
		landing := safefs.Join(real, w.Name)
		if len(w.Missing) > 0 {
			landing = safefs.Join(real, strings.Join(append(append([]string{}, w.Missing...), w.Name), "/"))
		}
		if !pathx.WithinAny(landing, e.pol.WritableRoots()) {
			t.Fatalf("%s %q allowed (%s) but lands at %s, outside the writable roots", tool, p, d.Path, landing)
		}
		if dd := e.pol.CheckCanonical(landing, access); !dd.Allow {
			t.Fatalf("%s %q allowed (%s) but lands at %s: %s", tool, p, d.Path, landing, dd.Reason)
		}
		// Resolution oracle: away from the swapped entries, the walk reaches what the kernel does.
		abs, err := e.pol.Absolute(p)
		if err != nil || touchesSwapped(abs, e.ws) || !w.Exists || access == permissions.Delete {
			return
		}
		if k, err := filepath.EvalSymlinks(abs); err == nil && k != w.Path {
			t.Fatalf("walk of %q reached %s, the kernel %s", p, w.Path, k)
		}
	})
}

// heldPath is where the kernel says a held directory is now ("" when it was removed).
func heldPath(t *testing.T, d *safefs.Dir) string {
	f, err := d.File()
	if err != nil {
		return ""
	}
	defer f.Close()
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || strings.HasSuffix(p, " (deleted)") {
		return ""
	}
	return p
}

// touchesSwapped reports whether the resolution of abs may pass a swapped entry of ws.
func touchesSwapped(abs, ws string) bool {
	for _, n := range []string{"x", "x.alt", "d", "d.alt", "o", "o.alt", "up"} {
		if strings.Contains(abs+"/", ws+"/"+n+"/") || strings.Contains(abs, "..") || strings.Contains(abs, "/up") {
			return true
		}
	}
	return false
}
