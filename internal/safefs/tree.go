package safefs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// MaxTreeDepth is how deep a tree walk (and a tree copy) goes below its root.
const MaxTreeDepth = 256

// ErrStopWalk ends a tree walk early without an error.
var ErrStopWalk = errors.New("stop")

// TreeVisit is called for each entry below the walked directory: dir holds it (dir.Path is
// canonical), rel is its slash path below the walk's root. For a directory, descend says whether
// to walk into it.
type TreeVisit func(dir *Dir, rel string, e Entry) (descend bool, err error)

// WalkTree visits everything below d, sorted, depth first, through directory descriptors: each
// subdirectory is opened in the one holding it, never following a link (a link swapped in for a
// directory mid-walk is not entered). Unreadable subdirectories are left out. It is
// Dir.WalkEntries with those left out in silence.
func WalkTree(ctx context.Context, d *Dir, visit TreeVisit) error {
	err := d.WalkEntries(func(rel string, dir *Dir, e Entry, err error) error {
		if err != nil {
			return nil // gone, swapped or unreadable: not entered
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		descend, err := visit(dir, rel, e)
		if err != nil {
			return err
		}
		if e.Info.IsDir() && !descend {
			return fs.SkipDir
		}
		return nil
	})
	if errors.Is(err, ErrStopWalk) {
		return nil
	}
	return err
}

// PathError words err, met on the way to or at the path p, for a message that names p.
func PathError(p string, err error) error {
	switch {
	case errors.Is(err, ErrChanged):
		return fmt.Errorf("%s: %w", p, ErrChanged)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s already exists", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s: %v", p, pe.Op, pe.Err)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// TypeName names what a mode describes: directory, symlink, file or other.
func TypeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}
