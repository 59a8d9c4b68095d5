package tmpsweep

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// openFiles is every file some process has open, from /proc/<pid>/fd (all processes when
// massgen runs as root; otherwise those of its user, which are the only ones that could write
// the user's temp files).
func openFiles() (map[fileID]bool, error) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	open := map[fileID]bool{}
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // gone, or another user's
		}
		for _, fd := range fds {
			var st unix.Stat_t
			if unix.Stat(filepath.Join(fdDir, fd.Name()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
				open[fileID{dev: st.Dev, ino: st.Ino}] = true
			}
		}
	}
	return open, nil
}
