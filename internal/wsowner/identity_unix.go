//go:build unix

package wsowner

import (
	"errors"
	"os"
	"syscall"
)

// identity is the device and inode of the open folder root.
func identity(root *os.Root) (fileID, error) {
	fi, err := root.Stat(".")
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, errors.New("no device and inode for the folder")
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil // int32 on darwin
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
