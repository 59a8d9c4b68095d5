//go:build darwin

package sandbox

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec marks every descriptor massgen inherited (3 and up) close-on-exec: one a
// parent left open would otherwise reach every command, and Seatbelt does not govern a
// descriptor already open.
func closeInheritedOnExec() {
	ents, err := os.ReadDir("/dev/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
