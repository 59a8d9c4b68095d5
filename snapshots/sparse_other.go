//go:build !linux && !darwin

package snapshots

import (
	"errors"
	"io"
	"os"
)

// copyData copies the first size bytes of in to the empty file out. Without SEEK_DATA (Windows)
// holes are written as zeros: the apparent-size cap (MaxWorkspaceBytes) bounds what that costs.
func copyData(out, in *os.File, size int64) error {
	if _, err := io.CopyN(out, in, size); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return out.Truncate(size)
}
