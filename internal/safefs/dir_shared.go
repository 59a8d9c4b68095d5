//go:build linux || darwin || windows

package safefs

// The Dir operations built only on the per-system ones.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
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

// OpenDirPath resolves abs once (see Resolve; a link as its last component is followed) and
// opens the directory it leads to.
func OpenDirPath(abs string) (*Dir, error) {
	w, err := Resolve(abs, false)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if w.Exists && !w.Info.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: abs, Err: syscall.ENOTDIR}
	}
	return w.OpenDir()
}

// SubPath opens the directory rel below d (names joined with '/'), one Sub at a time: a link
// anywhere on the way is refused (ErrChanged). An empty rel gives a new handle on d.
func (d *Dir) SubPath(rel string) (*Dir, error) {
	cur, err := d.reopen()
	if err != nil {
		return nil, err
	}
	if rel == "" {
		return cur, nil
	}
	for _, n := range strings.Split(rel, "/") {
		next, err := cur.Sub(n)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// WalkTree calls fn for everything below d, parents before children, in name order. It descends
// through descriptors: each directory is opened in its parent by name, never through a link,
// and only if it is still the directory listed (SubSame), so a directory swapped for a link
// while the walk runs is reported to fn, never followed out of d.
func (d *Dir) WalkTree(fn WalkFunc) error {
	ents, _, err := d.Entries(0)
	if err != nil {
		return err
	}
	return d.walkEntries("", ents, fn, 0)
}

func (d *Dir) walkEntries(prefix string, ents []Entry, fn WalkFunc, depth int) error {
	for _, e := range ents {
		rel := e.Name
		if prefix != "" {
			rel = prefix + "/" + e.Name
		}
		err := fn(rel, d, e, nil)
		if errors.Is(err, fs.SkipDir) {
			if e.Info.IsDir() {
				continue
			}
			return nil
		}
		if err != nil {
			return err
		}
		if e.Info.IsDir() {
			if err := d.walkSub(rel, e, fn, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *Dir) walkSub(rel string, e Entry, fn WalkFunc, depth int) error {
	var (
		sub  *Dir
		ents []Entry
		err  error
	)
	if depth > maxDepth {
		err = d.pathErr("open", e.Name, syscall.ELOOP)
	} else if sub, err = d.SubSame(e.Name, e.Info); err == nil {
		defer sub.Close()
		ents, _, err = sub.Entries(0)
	}
	if err != nil {
		if err := fn(rel, d, e, err); err != nil && !errors.Is(err, fs.SkipDir) {
			return err
		}
		return nil
	}
	return sub.walkEntries(rel, ents, fn, depth)
}
