package snapshots

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
)

// smallDisk mounts a tmpfs of size bytes in a temporary folder (we run as root in CI).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	must(t, os.Mkdir(dir, 0o755))
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// On a full disk a snapshot save fails with a *WriteError and the previous snapshot stays, whole;
// a file the agent made unreadable is only left out.
func TestSaveOnFullDisk(t *testing.T) {
	disk := smallDisk(t, "1m")
	base := t.TempDir()
	s, err := New(Options{
		SnapshotRoot: filepath.Join(disk, "snapshots"), TempRoot: filepath.Join(disk, "temp"),
		Agents: []string{"a"}, Logger: zaptest.NewLogger(t),
	})
	must(t, err)
	ws := filepath.Join(base, "ws")
	writeFile(t, filepath.Join(ws, "small.txt"), "v1")
	if _, err := s.Save(context.Background(), "a", ws, "answer"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, reason string }{{"delta", "vote"}, {"full", "restart"}} {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, filepath.Join(ws, "small.txt"), "v2")
			writeFile(t, filepath.Join(ws, "big.bin"), strings.Repeat("x", 2<<20))
			if tt.name == "full" {
				s.agents["a"].index = nil // as after an unknown state: the next save rebuilds
			}
			_, err := s.Save(context.Background(), "a", ws, tt.reason)
			var we *WriteError
			if !errors.As(err, &we) || !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("Save on a full disk = %v, want a WriteError (ENOSPC)", err)
			}
			assertTree(t, "snapshot", tree(t, s.SnapshotDir("a")), map[string]string{"small.txt": "f -rw-r--r-- v1"})
			if m, _ := filepath.Glob(filepath.Join(disk, "snapshots", ".staging", "*")); len(m) != 0 {
				t.Errorf("staging left behind: %v", m)
			}
		})
	}
}

func TestCopyTreeOnFullDisk(t *testing.T) {
	disk := smallDisk(t, "1m")
	src := filepath.Join(t.TempDir(), "ws")
	writeFile(t, filepath.Join(src, "a.txt"), "a")
	for _, n := range []string{"b1", "b2", "b3"} {
		writeFile(t, filepath.Join(src, n+".bin"), strings.Repeat("x", 600<<10))
	}
	err := CopyTree(context.Background(), src, filepath.Join(disk, "copy"), zaptest.NewLogger(t))
	var we *WriteError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("CopyTree on a full disk = %v, want a WriteError", err)
	}
	if strings.Count(err.Error(), "no space left") > 1 {
		t.Errorf("the error repeats itself: %v", err)
	}
}
