//go:build linux

package safefs

import "golang.org/x/sys/unix"

type strategy struct {
	name string
	f    feat
}

// strategies: Linux's own (openat2, O_PATH, O_TMPFILE, getdents), the one macOS uses (a fast
// open refusing links, here openat2, then directories held open for reading, files reopened by
// name, named temp files, readdir), and the bare component walk.
func strategies() []strategy {
	return []strategy{{"linux", native}, {"darwin", featFast}, {"walk", 0}}
}

// exchange swaps two names atomically.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
