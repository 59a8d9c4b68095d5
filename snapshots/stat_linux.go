package snapshots

import (
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/safefs"
)

// racyWindow is the timestamp granularity to allow for: a file whose ctime is within it of the
// moment its content was read may have changed again without a visible ctime change. Local Linux
// filesystems keep ns timestamps from a clock that ticks at least every 10ms; anything else gets
// the 2s of the coarsest common filesystems (FAT).
func racyWindow(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil {
		switch st.Type {
		case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
			unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC:
			return 100e6
		}
	}
	return 2e9
}

// exchange atomically swaps the directories a and b (both must exist).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// renameNoReplace renames a to b, failing (fs.ErrExist) if b exists, in one step.
func renameNoReplace(a, b string) error {
	return renameErr(a, b, unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_NOREPLACE))
}

// reflink clones src into the new file dst (copy-on-write; fails where unsupported).
func reflink(src, dst string, mode fs.FileMode) error {
	in, err := safefs.OpenNoFollow(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := createCopy(dst, mode)
	if err != nil {
		return err
	}
	err = unix.IoctlFileClone(int(out.Fd()), int(in.Fd()))
	if err == nil {
		err = out.Chmod(mode.Perm())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = removeFile(dst)
	}
	return err
}
