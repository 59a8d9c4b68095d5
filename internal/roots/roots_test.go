package roots

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir()) // macOS: /var is a link
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Open resolves each root once (links followed as the kernel would, missing components kept),
// holds its walk, and the canonical path does not move when a link on the way is retargeted.
func TestOpenResolvesOnceAndHolds(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := tempDir(t)
	orig, other := filepath.Join(dir, "orig"), filepath.Join(dir, "other")
	for _, d := range []string{orig, other, filepath.Join(dir, "ws")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(orig, "f.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(orig, link); err != nil {
		t.Fatal(err)
	}
	in := Input{
		Workspace: filepath.Join(dir, "ws"),
		Temp:      []string{filepath.Join(dir, "missing", "temp")},
		Context:   []ContextInput{{Path: link, Protected: []string{filepath.Join(link, "f.txt")}}},
		Private:   []string{filepath.Join(dir, "ws", "..", "other")},
	}
	s, err := Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		r         Root
		want      string
		exists    bool
		dir, held bool
	}{
		{"workspace", *s.Workspace, filepath.Join(dir, "ws"), true, true, true},
		{"missing temp", s.Temp[0], filepath.Join(dir, "missing", "temp"), false, false, true},
		{"context link", s.Context[0].Root, orig, true, true, true},
		{"protected through the link", s.Context[0].Protected[0], filepath.Join(orig, "f.txt"), true, false, true},
		{"private with ..", s.Private[0], other, true, true, true},
	} {
		if tt.r.Path != tt.want || tt.r.Exists() != tt.exists || tt.r.IsDir() != tt.dir || tt.r.Held() != tt.held {
			t.Errorf("%s: %+v exists=%v dir=%v held=%v; want %s exists=%v dir=%v held=%v", tt.name, tt.r.Path,
				tt.r.Exists(), tt.r.IsDir(), tt.r.Held(), tt.want, tt.exists, tt.dir, tt.held)
		}
	}
	if err := s.Match(in); err != nil {
		t.Errorf("Match(its own input) = %v", err)
	}
	other2 := in
	other2.Context = []ContextInput{{Path: orig}}
	if err := s.Match(other2); err == nil {
		t.Error("Match accepted another spec's roots")
	}
	// The context root still names what was held; a directory renamed away and replaced does not.
	if !s.Context[0].Same() {
		t.Error("Same: the held context root reported as replaced")
	}
	if err := os.Rename(orig, orig+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(orig, 0o755); err != nil {
		t.Fatal(err)
	}
	if s.Context[0].Same() {
		t.Error("Same: a replaced context root reported as the one held")
	}
}

// Open refuses a root it cannot resolve, naming which; Canonical refuses a missing path.
func TestOpenErrors(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix paths")
	}
	dir := tempDir(t)
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(Input{ReadOnly: []string{filepath.Join(file, "below")}})
	if err == nil {
		t.Fatalf("Open(a file used as a directory) = %v, want an error", err)
	}
	if want := "read-only path: "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("error %q does not name the root", err)
	}
	if _, err := Canonical(filepath.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Canonical(missing) = %v, want ErrNotExist", err)
	}
	if p, err := Canonical(dir + "/./file"); err != nil || p != file {
		t.Errorf("Canonical = %q, %v; want %s", p, err, file)
	}
}
