//go:build linux || darwin || windows

package safefs

// The Dir operations built only on the per-system ones.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

func (d *Dir) pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: Join(d.Path, name), Err: err}
}

// SubSame is Sub that also checks the directory opened is the one described by want.
func (d *Dir) SubSame(name string, want Info) (*Dir, error) {
	s, err := d.Sub(name)
	if err != nil {
		return nil, err
	}
	if got, err := s.Stat(); err != nil || !got.Same(want) {
		s.Close()
		return nil, fmt.Errorf("%s: %w", s.Path, ErrChanged)
	}
	return s, nil
}

// OpenFileSame is OpenFile that also checks the file opened is the one described by want.
func (d *Dir) OpenFileSame(name string, want Info) (*os.File, Info, error) {
	f, info, err := d.OpenFile(name)
	if err != nil {
		return nil, info, err
	}
	if !info.Same(want) {
		f.Close()
		return nil, info, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
	}
	return f, info, nil
}

// RemoveAll removes name in d and, for a directory, everything below it, descending through
// descriptors and never following a link (a link is removed, its target stays).
func (d *Dir) RemoveAll(name string) error { return d.removeAll(name, 0) }

// RemoveContents removes everything in d (d itself stays).
func (d *Dir) RemoveContents(depth int) error {
	for {
		ents, _, err := d.Entries(1024)
		if err != nil {
			return err
		}
		if len(ents) == 0 {
			return nil
		}
		for _, e := range ents {
			if err := d.removeAll(e.Name, depth); err != nil {
				return err
			}
		}
	}
}

// OpenFile opens the walked entry (a regular file) for reading; a swap since the walk is
// refused with ErrChanged.
func (w *Walk) OpenFile() (*os.File, Info, error) {
	if !w.Exists {
		return nil, Info{}, &fs.PathError{Op: "open", Path: w.Path, Err: fs.ErrNotExist}
	}
	if w.Info.IsDir() {
		return nil, w.Info, fmt.Errorf("%s is a directory", w.Path)
	}
	if !w.Info.IsRegular() {
		return nil, w.Info, fmt.Errorf("%s is not a regular file", w.Path)
	}
	return w.Dir.OpenFileSame(w.Name, w.Info)
}

// MkdirAll creates names below d one after the other (existing directories are used, links are
// refused) and returns the innermost directory; with no names it returns a new handle on d.
// created is the first directory it made ("" when all existed).
func (d *Dir) MkdirAll(names []string) (innermost *Dir, created string, err error) {
	cur, err := d.reopen()
	if err != nil {
		return nil, "", err
	}
	for _, n := range names {
		merr := cur.Mkdir(n, 0o755)
		if merr != nil && !errors.Is(merr, fs.ErrExist) {
			cur.Close()
			return nil, created, merr
		}
		if merr == nil && created == "" {
			created = Join(cur.Path, n)
		}
		next, err := cur.Sub(n)
		cur.Close()
		if err != nil {
			return nil, created, err
		}
		cur = next
	}
	return cur, created, nil
}

// TempName is a hidden name beside name for an entry being built (".<name>.massgen-tmp-<hex>",
// the pattern internal/tmpsweep recognises).
func TempName(name string) string { return tempName(name) }
