//go:build unix

package wsowner

import (
	"os"
	"syscall"

	"github.com/massgen-go/massgen/internal/safefs"
)

// identity is the device and inode of the open folder root.
func identity(root *safefs.Dir) (fileID, error) {
	info, err := root.Stat()
	if err != nil {
		return fileID{}, err
	}
	return fileID{dev: info.Dev, ino: info.Ino}, nil
}

// sameDevice: a and b are on one filesystem (a is no mount point below b).
func sameDevice(a, b string) bool {
	fa, errA := os.Lstat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return false
	}
	sa, okA := fa.Sys().(*syscall.Stat_t)
	sb, okB := fb.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev == sb.Dev
}
