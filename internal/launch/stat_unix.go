//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package launch

import (
	"fmt"
	"os"
	"syscall"
)

// statKey identifies a file's content cheaply: a write changes its size, mtime or ctime (which
// no program can set back), a replacement its inode.
func statKey(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
	}
	return fmt.Sprintf("%d/%d/%d/%d/%v", st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), ctime(st))
}

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
}
