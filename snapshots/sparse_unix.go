//go:build linux || darwin

package snapshots

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copyData copies the first size bytes of in to the empty file out keeping holes: only the data
// regions SEEK_DATA/SEEK_HOLE report are copied (copy_file_range on Linux), and out is then
// extended to size, so a sparse file costs its blocks, not its apparent size. A filesystem
// without hole reporting shows the whole file as data, which is then copied whole.
func copyData(out, in *os.File, size int64) error {
	fd := int(in.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // nothing but a hole from off on (or the file shrank)
		}
		if err != nil {
			if off == 0 && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)) {
				return plainCopy(out, in, size) // no SEEK_DATA here
			}
			return err
		}
		if data >= size {
			break
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			return err
		}
		hole = min(hole, size)
		if _, err := in.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := out.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.CopyN(out, in, hole-data); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		off = hole
	}
	return out.Truncate(size)
}

func plainCopy(out, in *os.File, size int64) error {
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.CopyN(out, in, size); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return out.Truncate(size)
}
