//go:build linux || darwin

package sandbox

import (
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec marks every descriptor massgen inherited (3 and up) close-on-exec. Go
// opens its own that way, but one a parent left open (a shell's, an editor's) would otherwise
// reach every command, and no sandbox (Landlock, Seatbelt) governs a descriptor already open: a
// writable one would be a way out of it.
func closeInheritedOnExec() {
	if closeRangeCloexec() {
		return
	}
	dir := "/proc/self/fd"
	if runtime.GOOS == "darwin" {
		dir = "/dev/fd"
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
