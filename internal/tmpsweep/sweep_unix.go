//go:build unix

package tmpsweep

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

type fileID struct{ dev, ino uint64 }

func statID(p string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fileID{}, err
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil // Dev is int32 on darwin
}

// notOurs says why the file at c is not a temp file massgen could have left ("" when it could):
// massgen's temp files are regular files with one link, owned by the user massgen runs as.
func notOurs(c candidate) string {
	var st unix.Stat_t
	if err := unix.Lstat(c.path, &st); err != nil {
		return err.Error()
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "not a regular file"
	case st.Nlink != 1:
		return "it has other links"
	case int(st.Uid) != os.Geteuid():
		return "another user owns it"
	}
	return ""
}

// removeIfSame removes c's file if the name still leads to the file that was checked.
func removeIfSame(c candidate) error {
	dir, err := os.Open(filepath.Dir(c.path))
	if err != nil {
		return err
	}
	defer dir.Close()
	var st unix.Stat_t
	name := filepath.Base(c.path)
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if uint64(st.Dev) != c.id.dev || st.Ino != c.id.ino { // Dev is int32 on darwin
		return errors.New("it changed while being checked")
	}
	return unix.Unlinkat(int(dir.Fd()), name, 0)
}
