package snapshots

import (
	"errors"
	"io/fs"
)

// linkUnsupported: hard links fail on FAT and exFAT, across volumes and shares, and past 1023
// links, each with its own error; a copy is always right, so any failure but "exists" copies.
func linkUnsupported(err error) bool {
	return !errors.Is(err, fs.ErrExist) && !errors.Is(err, fs.ErrNotExist)
}
