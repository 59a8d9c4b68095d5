package filesystem

import (
	"fmt"
	"io"
	"os"

	"github.com/massgen-go/massgen/internal/safefs"
)

// readForDiff reads a regular file opened through descriptors, bounded.
func readForDiff(f *os.File, info safefs.Info, abs string) ([]byte, bool, error) {
	defer f.Close()
	if info.Size > maxDiffBytes {
		return nil, false, fmt.Errorf("%s is too large to compare (%d bytes, limit %d)", abs, info.Size, maxDiffBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDiffBytes+1))
	if err != nil {
		return nil, false, pathErr(abs, err)
	}
	return data, binaryKind(abs, data) != "", nil
}

// readWalkForDiff reads the file of a path argument for a comparison.
func (c *call) readWalkForDiff(arg string) (string, []byte, bool, error) {
	w, err := c.existing(arg)
	if err != nil {
		return "", nil, false, err
	}
	f, info, err := w.OpenFile()
	if err != nil {
		return "", nil, false, pathErr(w.Path, err)
	}
	data, bin, err := readForDiff(f, info, w.Path)
	return w.Path, data, bin, err
}

// readRelForDiff reads the file rel below d, which must still be the one listed.
func readRelForDiff(d *safefs.Dir, rel string, want safefs.Info) ([]byte, bool, error) {
	abs := safefs.JoinRel(d.Path, rel)
	dir, name, err := dirRel(d, rel, false)
	if err != nil {
		return nil, false, pathErr(abs, err)
	}
	defer dir.Close()
	f, info, err := dir.OpenFileSame(name, want)
	if err != nil {
		return nil, false, pathErr(abs, err)
	}
	return readForDiff(f, info, abs)
}
