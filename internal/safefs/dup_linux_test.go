//go:build linux

package safefs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDupKeepsOPath: Dup hands over d's own descriptor (an O_PATH handle stays one, so a
// search-only directory is handed over without read permission), and the copy names the same
// directory; File reopens it for reading.
func TestDupKeepsOPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("K=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	d, err := FromFD(uintptr(fd), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tests := []struct {
		name  string
		hand  func() (*os.File, error)
		oPath bool
	}{
		{"Dup", d.Dup, true},
		{"File", d.File, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.hand()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := fl&unix.O_PATH != 0; got != tc.oPath {
				t.Errorf("O_PATH = %v, want %v", got, tc.oPath)
			}
			if f.Name() != dir {
				t.Errorf("name %q", f.Name())
			}
			var st unix.Stat_t
			if err := unix.Fstatat(int(f.Fd()), ".env", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Size != 4 {
				t.Errorf("fstatat .env through the copy: %v (size %d)", err, st.Size)
			}
		})
	}
	if _, err := d.Stat(); err != nil {
		t.Errorf("d closed by handing over: %v", err)
	}
}
