//go:build darwin

package safefs

import "golang.org/x/sys/unix"

type strategy struct {
	name string
	f    feat
}

// strategies: macOS's own, and the bare component walk.
func strategies() []strategy {
	return []strategy{{"darwin", native}, {"walk", 0}}
}

// exchange swaps two names atomically.
func exchange(a, b string) error {
	return unix.RenamexNp(a, b, unix.RENAME_SWAP)
}
