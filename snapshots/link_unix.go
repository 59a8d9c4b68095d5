//go:build unix

package snapshots

import (
	"errors"
	"syscall"
)

// linkUnsupported reports whether a hard link failed because this filesystem or this pair of
// directories cannot have one (then the file is copied), not because of a real error.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EMLINK) || errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) ||
		errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP)
}
