package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	tests := []struct {
		name string
		env  map[string]string
		home string
		want string
		err  bool
	}{
		{"xdg", map[string]string{"XDG_CONFIG_HOME": "/x/conf"}, "/home/me", "/x/conf/massgen/trust.json", false},
		{"relative xdg is ignored", map[string]string{"XDG_CONFIG_HOME": "conf"}, "/home/me", "/home/me/.config/massgen/trust.json", false},
		{"home", nil, "/home/me", "/home/me/.config/massgen/trust.json", false},
		{"nothing", nil, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultPath(env(tt.env), tt.home)
			if got != tt.want || (err != nil) != tt.err {
				t.Errorf("DefaultPath = %q, %v; want %q (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestCheckAndApprove(t *testing.T) {
	dir := t.TempDir()
	st := New(filepath.Join(dir, "conf", "massgen", FileName))
	file := filepath.Join(dir, "project", ".massgen", "permissions.yaml")
	v1, v2 := []byte("mode: default\n"), []byte("mode: bypassPermissions\n")

	var ue *UntrustedError
	err := st.Check(file, v1, "sets rules")
	if !errors.As(err, &ue) || ue.Changed || !strings.Contains(err.Error(), "is new") ||
		!strings.Contains(err.Error(), "massgen permissions trust "+file) || !strings.Contains(err.Error(), "sets rules") {
		t.Fatalf("new file: %v", err)
	}
	if err := st.Approve(file, v1, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := st.Check(file, v1, "sets rules"); err != nil {
		t.Errorf("approved content refused: %v", err)
	}
	if err := st.Check(file, v2, "sets rules"); !errors.As(err, &ue) || !ue.Changed || !strings.Contains(err.Error(), "changed since you approved it") {
		t.Errorf("changed content: %v", err)
	}
	// Another file with the approved content is not approved: approvals are per file.
	if err := st.Check(filepath.Join(dir, "other", "permissions.yaml"), v1, "sets rules"); !errors.As(err, &ue) {
		t.Errorf("other file: %v", err)
	}
	// The store is its owner's alone.
	for p, want := range map[string]os.FileMode{st.Path(): 0o600, st.Dir(): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	// A project reached through a symlink is the same project.
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "project"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := st.Check(filepath.Join(dir, "link", ".massgen", "permissions.yaml"), v1, "sets rules"); err != nil {
		t.Errorf("through a link: %v", err)
	}
	// Re-approving replaces the approval.
	if err := st.Approve(file, v2, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if st.Check(file, v1, "") == nil || st.Check(file, v2, "") != nil {
		t.Error("re-approval did not replace the old one")
	}
}

// A store that cannot be read refuses everything and changes nothing.
func TestBrokenStoreFailsClosed(t *testing.T) {
	dir := t.TempDir()
	st := New(filepath.Join(dir, FileName))
	if err := os.WriteFile(st.Path(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "permissions.yaml")
	var ue *UntrustedError
	if err := st.Check(file, []byte("x"), ""); err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), st.Path()) {
		t.Errorf("check with a broken store: %v", err)
	}
	if err := st.Approve(file, []byte("x"), nil, time.Now()); err == nil || !strings.Contains(err.Error(), st.Path()) {
		t.Errorf("approve with a broken store: %v", err)
	}
	if data, _ := os.ReadFile(st.Path()); string(data) != "{not json" {
		t.Errorf("the broken store was changed: %q", data)
	}
	if err := (Store{}).Check(file, nil, ""); err == nil {
		t.Error("a store without a path approved something")
	}
}

// TestConcurrentApprovalsAllKept: approvals made at once (each through its own Store value, as
// separate processes do) are all in the store afterwards.
func TestConcurrentApprovalsAllKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf", "massgen", FileName)
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() {
			file := filepath.Join(dir, "projects", strconv.Itoa(i), "permissions.yaml")
			errs <- New(path).Approve(file, []byte(strconv.Itoa(i)), nil, time.Now())
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := New(path)
	for i := range n {
		file := filepath.Join(dir, "projects", strconv.Itoa(i), "permissions.yaml")
		if err := st.Check(file, []byte(strconv.Itoa(i)), "sets rules"); err != nil {
			t.Errorf("approval %d lost: %v", i, err)
		}
	}
}
