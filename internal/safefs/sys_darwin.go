//go:build darwin

package safefs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// native is what macOS offers: O_NOFOLLOW_ANY for the fast path (macOS 11; Go 1.25 and later
// need macOS 12, so every kernel running this binary has it). No O_PATH: directories are held
// open for reading, other entries are reopened by name and checked against the walk's lstat. No
// O_TMPFILE: writes go through a named temp file. Listings through readdir.
const native = featFast

// oPath: there is no O_PATH (featPath is never set here).
const oPath = 0

// openNoLinks opens path (absolute, several components) refusing every symbolic link on the way
// and on the last component: O_NOFOLLOW_ANY makes any link an ELOOP.
func openNoLinks(path string, flags int) (int, error) {
	return openRetry(unix.AT_FDCWD, path, flags|unix.O_NOFOLLOW_ANY)
}

// openBeneath opens rel (several names, none "..") below dirfd, refusing every link on the way
// and at the end (O_NOFOLLOW_ANY).
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	return openRetry(dirfd, rel, flags|unix.O_NOFOLLOW_ANY)
}

// openPath is not available (no O_PATH); the native strategy never asks for it.
func openPath(dirfd int, name string) (int, error) { return -1, unix.ENOTSUP }

// openDirAt opens the directory name in dirfd with flags (which hold O_NOFOLLOW and O_RDONLY).
// A directory that may be searched but not read (mode --x) is opened for searching only
// (O_SEARCH, on kernels that have it; elsewhere the retry fails like the first open): enough to walk through it; listing it then fails, as it should.
func openDirAt(dirfd int, name string, flags int) (int, error) {
	fd, err := openRetry(dirfd, name, flags)
	if errors.Is(err, unix.EACCES) {
		if fd2, err2 := openRetry(dirfd, name, flags|unix.O_SEARCH); err2 == nil {
			return fd2, nil
		}
	}
	return fd, err
}

// readlinkFd is not available (no O_PATH handles on links).
func readlinkFd(fd int) (string, error) { return "", unix.ENOTSUP }

// openTmpfile is not available (no O_TMPFILE).
func openTmpfile(dirfd int) (int, error) { return -1, unix.ENOTSUP }

// linkTmp is not available (no unnamed files to link).
func linkTmp(fd, dirfd int, name string) error { return unix.ENOTSUP }

// renameNoReplace renames without replacing an existing entry (renameatx_np RENAME_EXCL);
// ENOTSUP or EINVAL: the filesystem cannot.
func renameNoReplace(fromfd int, from string, tofd int, to string) error {
	return unix.RenameatxNp(fromfd, from, tofd, to, unix.RENAME_EXCL)
}

// getdentsTyped is not available (featGetdents is off).
func getdentsTyped(fd int) ([]Entry, []bool, error) { return nil, nil, unix.ENOTSUP }

// getdents is not available; listings go through readdir (featGetdents is off).
func getdents(fd int) ([]string, error) { return nil, unix.ENOTSUP }
