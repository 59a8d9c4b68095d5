package snapshots

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// racyWindow: APFS keeps ns timestamps; HFS+ whole seconds, other volumes (FAT, SMB) coarser.
func racyWindow(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil && unix.ByteSliceToString(st.Fstypename[:]) == "apfs" {
		return 100e6
	}
	return 2e9
}

// exchange atomically swaps the directories a and b (both must exist).
func exchange(a, b string) error {
	return unix.RenamexNp(a, b, unix.RENAME_SWAP)
}

// renameNoReplace renames a to b, failing (fs.ErrExist) if b exists, in one step.
func renameNoReplace(a, b string) error {
	return renameErr(a, b, unix.RenamexNp(a, b, unix.RENAME_EXCL))
}

// reflink clones src into the new file dst with clonefile(2): own inode, shared blocks (APFS;
// fails elsewhere).
func reflink(src, dst string, mode fs.FileMode) error {
	if err := unix.Clonefile(src, dst, unix.CLONE_NOFOLLOW); err != nil {
		return err
	}
	if err := unix.Chmod(dst, uint32(mode.Perm())); err != nil {
		_ = removeFile(dst)
		return err
	}
	return nil
}
