package project

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/internal/layout"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		t.Helper()
		d := filepath.Join(root, p)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	mk("home/.massgen")       // the user's config folder: never a project from below
	mk("home/plain/deep")     // no project marker above: the current directory
	mk("home/proj/.massgen")  // a project
	mk("home/proj/src/pkg")   // below it
	mk("home/repo/.git")      // a git repository without state
	mk("home/repo/a/b")       // below it
	mk("home/repo2/.massgen") // state above the git root is not looked at
	mk("home/repo2/inner/.git")
	mk("home/repo2/inner/x")
	home := filepath.Join(root, "home")
	for _, tt := range []struct{ wd, want string }{
		{"home/proj/src/pkg", "home/proj"},
		{"home/proj", "home/proj"},
		{"home/plain/deep", "home/plain/deep"},
		{"home/repo/a/b", "home/repo"},
		{"home/repo2/inner/x", "home/repo2/inner"},
		{"home", "home"},
	} {
		if got := Find(filepath.Join(root, tt.wd), home); got != filepath.Join(root, tt.want) {
			t.Errorf("Find(%s) = %s, want %s", tt.wd, got, filepath.Join(root, tt.want))
		}
	}
}

func TestInitWritesGitignoreOnce(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, layout.DirName, ".gitignore"))
	if err != nil || string(b) != gitignore {
		t.Fatalf(".gitignore = %q, %v", b, err)
	}
	// An existing state folder is left alone: the user may have removed the .gitignore.
	os.Remove(filepath.Join(dir, layout.DirName, ".gitignore"))
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, layout.DirName, ".gitignore")); !os.IsNotExist(err) {
		t.Errorf("Init rewrote the .gitignore of an existing state folder: %v", err)
	}
}
