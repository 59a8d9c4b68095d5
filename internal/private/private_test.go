//go:build unix

package private

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestMkdirAllIsPrivateWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	base := t.TempDir()
	tests := []struct {
		name     string
		existing os.FileMode // 0: the folder is new
		want     os.FileMode
	}{
		{"new", 0, 0o700},
		{"made 0755 by an older version", 0o755, 0o700},
		{"made 0750", 0o750, 0o700},
		{"already 0700", 0o700, 0o700},
		{"owner-only bits kept", 0o500, 0o500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(base, tt.name, "records")
			if tt.existing != 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tt.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := MkdirAll(dir); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(dir)
			if err != nil || fi.Mode().Perm() != tt.want {
				t.Fatalf("mode %v, %v; want %v", fi.Mode().Perm(), err, tt.want)
			}
			if tt.existing == 0 {
				if fi, _ := os.Stat(filepath.Dir(dir)); fi.Mode().Perm() != 0o700 {
					t.Errorf("a parent made with %v", fi.Mode().Perm())
				}
			}
		})
	}
}
