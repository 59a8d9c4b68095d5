//go:build linux

package safefs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// native is what Linux offers: openat2 for the fast path, O_PATH handles on every entry,
// O_TMPFILE for writes and getdents for listings.
const native = featFast | featPath | featTmpfile | featGetdents

const oPath = unix.O_PATH

// openNoLinks opens path (absolute, several components) refusing every symbolic link on the way
// and on the last component: openat2 with RESOLVE_NO_SYMLINKS. ENOSYS means "walk instead".
func openNoLinks(path string, flags int) (int, error) {
	return openat2(unix.AT_FDCWD, path, flags, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

// openBeneath opens rel (several names, none "..") below dirfd, refusing every link on the way
// and at the end and any way out of dirfd. ENOSYS means "walk instead".
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	return openat2(dirfd, rel, flags, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

// openPath opens one name in dirfd as an O_PATH handle, never following it.
func openPath(dirfd int, name string) (int, error) {
	return openat2(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

// openDirAt opens the directory name in dirfd with flags (which hold O_NOFOLLOW).
func openDirAt(dirfd int, name string, flags int) (int, error) {
	return openRetry(dirfd, name, flags)
}

// openat2 falls back to openat on kernels before 5.6 (ENOSYS) and under seccomp profiles that
// refuse it (EPERM), for one component only: flags then hold O_NOFOLLOW, and a multi-component
// open, which would follow links, is refused so that the caller walks step by step.
func openat2(dirfd int, name string, flags int, resolve uint64) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, name, &unix.OpenHow{Flags: uint64(flags), Resolve: resolve})
		switch {
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			if strings.Contains(name, "/") {
				return -1, unix.ENOSYS
			}
			return openRetry(dirfd, name, flags)
		}
		return fd, err
	}
}

// readlinkFd reads the target of the link held by an O_PATH descriptor.
func readlinkFd(fd int) (string, error) { return readlinkAt(fd, "") }

// openTmpfile opens an unnamed file in dirfd (O_TMPFILE), created with mode 0.
func openTmpfile(dirfd int) (int, error) {
	return openRetry(dirfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC)
}

// linkTmp gives the unnamed file fd the name name in dirfd: through /proc/self/fd (any user),
// else AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).
func linkTmp(fd, dirfd int, name string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dirfd, name, unix.AT_SYMLINK_FOLLOW)
	if err == nil || errors.Is(err, unix.EEXIST) {
		return err
	}
	return unix.Linkat(fd, "", dirfd, name, unix.AT_EMPTY_PATH)
}

// renameNoReplace renames without replacing an existing entry (renameat2 RENAME_NOREPLACE);
// EINVAL or ENOSYS: the filesystem or kernel cannot.
func renameNoReplace(fromfd int, from string, tofd int, to string) error {
	return unix.Renameat2(fromfd, from, tofd, to, unix.RENAME_NOREPLACE)
}

// getdentsTyped lists the entries of the directory fd with their types from d_type (known is
// false for DT_UNKNOWN: the caller stats those).
func getdentsTyped(fd int) (ents []Entry, known []bool, err error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if n <= 0 {
			return ents, known, nil
		}
		for off := 0; off < n; {
			// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
			rec := buf[off:n]
			if len(rec) < 19 {
				break
			}
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				break
			}
			name := rec[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if s := string(name); s != "." && s != ".." {
				mode, ok := direntMode(rec[18])
				ents = append(ents, Entry{Name: s, Info: Info{Mode: mode}})
				known = append(known, ok)
			}
		}
	}
}

func direntMode(t byte) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// getdents lists the names in the directory fd (read from its current offset).
func getdents(fd int) ([]string, error) {
	ents, _, err := getdentsTyped(fd)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name
	}
	return names, nil
}
