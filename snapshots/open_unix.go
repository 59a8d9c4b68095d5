//go:build unix

package snapshots

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

func createExcl(p string, mode fs.FileMode) (*os.File, error) {
	return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode.Perm()|0o200)
}

// linkUnsupported reports whether a hard link failed because this filesystem or this pair of
// directories cannot have one (then the file is copied), not because of a real error.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EMLINK) || errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) ||
		errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP)
}
