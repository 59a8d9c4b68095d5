//go:build linux || darwin || windows

package safefs

// The Dir operations built only on the per-system ones.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
		// Listed as a directory, not one when opened: swapped (for a link or a file) since.
		if want.IsDir() && (errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)) {
			return nil, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
		}
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

// OpenDirPath resolves p once (see Resolve; a link as its last component is followed) and
// opens the directory it leads to. As with os.Open, a relative p starts from the working
// directory and an empty one does not exist.
func OpenDirPath(p string) (*Dir, error) {
	if p == "" {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	w, err := Resolve(abs, false)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if w.Exists && !w.Info.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: syscall.ENOTDIR}
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

// WalkEntries calls fn for everything below d, parents before children, in name order, and
// reports to fn each directory it could not enter (WalkTree, built on it, leaves those out). It
// descends through descriptors: each directory is opened in its parent by name, never through a
// link, and only if it is still the directory listed (SubSame), so a directory swapped for a
// link while the walk runs is reported to fn, never followed out of d. It goes MaxTreeDepth
// levels deep at most (a deeper directory is reported as ELOOP).
func (d *Dir) WalkEntries(fn WalkFunc) error {
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
	if depth > MaxTreeDepth {
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

// OpenFileAt opens the regular file rel below d (names joined with '/') for reading, never
// through a link: on the way or at the end, a link is refused (ErrChanged), as is a name that is
// not a plain one ("", ".", "..").
func (d *Dir) OpenFileAt(rel string) (*os.File, Info, error) {
	dir, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i], rel[i+1:]
	}
	if dir == "" {
		return d.OpenFile(name)
	}
	for _, n := range append(strings.Split(dir, "/"), name) {
		if !ValidName(n) {
			return nil, Info{}, d.pathErr("open", rel, syscall.EINVAL)
		}
	}
	if f, info, ok, err := d.openFileBeneath(rel); ok {
		return f, info, err
	}
	sub, err := d.SubPath(dir)
	if err != nil {
		return nil, Info{}, err
	}
	defer sub.Close()
	return sub.OpenFile(name)
}

// ErrEscapes is returned by StatBeneath for a path that leads out of the directory.
var ErrEscapes = errors.New("the path leads outside the directory")

// StatBeneath describes what rel (relative, names separated by '/' or, on Windows, '\') leads to
// below d, following links as the system would but never out of d, with os.Root's rules: a
// link with an absolute target, or a ".." above d, is refused (ErrEscapes). Each directory on
// the way is opened by descriptor from d, never through a link.
func (d *Dir) StatBeneath(rel string) (Info, error) {
	if isAbsTarget(rel) {
		return Info{}, d.pathErr("stat", rel, ErrEscapes)
	}
	parts, slash := splitBeneath(rel)
	links := 0
	for {
		if lexicalDotDot {
			var ok bool
			if parts, ok = cleanParts(parts); !ok {
				return Info{}, d.pathErr("stat", rel, ErrEscapes)
			}
		}
		info, at, target, err := d.walkBeneath(parts)
		switch {
		case err != nil:
			return Info{}, d.pathErr("stat", rel, err)
		case at < 0:
			if slash && !info.IsDir() {
				return Info{}, d.pathErr("stat", rel, syscall.ENOTDIR)
			}
			return info, nil
		case parts[at] == "..":
			// The names before it are directories reached: drop the last one and walk again.
			if at == 0 {
				return Info{}, d.pathErr("stat", rel, ErrEscapes)
			}
			parts = append(append([]string(nil), parts[:at-1]...), parts[at+1:]...)
			continue
		}
		if links++; links > MaxLinks {
			return Info{}, d.pathErr("stat", rel, syscall.ELOOP)
		}
		if isAbsTarget(target) {
			return Info{}, d.pathErr("stat", rel, ErrEscapes)
		}
		tparts, tslash := splitBeneath(target)
		if at == len(parts)-1 && tslash {
			slash = true
		}
		parts = append(append(append([]string(nil), parts[:at]...), tparts...), parts[at+1:]...)
	}
}

// walkBeneath walks parts from d to the end (at = -1: info describes what it reached), a link
// (at is its index, target what it holds) or a ".." (at is its index).
func (d *Dir) walkBeneath(parts []string) (info Info, at int, target string, err error) {
	cur, err := d.reopen()
	if err != nil {
		return Info{}, 0, "", err
	}
	defer func() { cur.Close() }()
	for i, n := range parts {
		switch n {
		case ".":
			continue
		case "..":
			return Info{}, i, "", nil
		}
		info, err := cur.Lstat(n)
		if err != nil {
			return Info{}, 0, "", err
		}
		if info.IsLink() {
			target, err := cur.Readlink(n)
			return info, i, target, err
		}
		if i == len(parts)-1 {
			return info, -1, "", nil
		}
		if !info.IsDir() {
			return Info{}, 0, "", syscall.ENOTDIR
		}
		next, err := cur.SubSame(n, info)
		if err != nil {
			return Info{}, 0, "", err
		}
		cur.Close()
		cur = next
	}
	info, err = cur.Stat()
	return info, -1, "", err
}

// splitBeneath splits a relative path into its names, empty ones and "." dropped (so that a ".."
// always follows the name it undoes), and says whether it must lead to a directory (it ends in a
// separator or ".").
func splitBeneath(p string) (parts []string, slash bool) {
	all := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == rune(os.PathSeparator) })
	slash = len(p) > 0 && (p[len(p)-1] == '/' || p[len(p)-1] == os.PathSeparator) || len(all) > 0 && all[len(all)-1] == "."
	for _, n := range all {
		if n != "." {
			parts = append(parts, n)
		}
	}
	return parts, slash
}

// isAbsTarget: an absolute path, or on Windows one with a volume or a leading separator.
func isAbsTarget(p string) bool {
	return filepath.IsAbs(p) || filepath.VolumeName(p) != "" || (len(p) > 0 && (p[0] == '/' || p[0] == os.PathSeparator))
}

// cleanParts applies every ".." to the name before it (lexically); false when one goes above
// the start.
func cleanParts(parts []string) ([]string, bool) {
	out := make([]string, 0, len(parts))
	for _, n := range parts {
		switch n {
		case ".":
		case "..":
			if len(out) == 0 {
				return nil, false
			}
			out = out[:len(out)-1]
		default:
			out = append(out, n)
		}
	}
	return out, true
}

// WalkTypes is WalkEntries for walks that need the lstat of directories only: a file, link or other
// entry carries its type alone (Info.Mode's type bits, from the listing where the system gives
// them: one stat less per entry), a directory the stat of the directory opened (fn is called
// for it once it is open, and once only, with the error, when it cannot be opened).
func (d *Dir) WalkTypes(fn WalkFunc) error {
	ents, err := d.typedEntries()
	if err != nil {
		return err
	}
	return d.walkTyped("", ents, fn, 0)
}

func (d *Dir) walkTyped(prefix string, ents []Entry, fn WalkFunc, depth int) error {
	for _, e := range ents {
		rel := e.Name
		if prefix != "" {
			rel = prefix + "/" + e.Name
		}
		if !e.Info.IsDir() {
			err := fn(rel, d, e, nil)
			if errors.Is(err, fs.SkipDir) {
				return nil
			}
			if err != nil {
				return err
			}
			continue
		}
		if err := d.walkTypedSub(rel, e, fn, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (d *Dir) walkTypedSub(rel string, e Entry, fn WalkFunc, depth int) error {
	if depth > MaxTreeDepth {
		return skipErr(fn(rel, d, e, d.pathErr("open", e.Name, syscall.ELOOP)))
	}
	sub, err := d.Sub(e.Name)
	if err != nil {
		return skipErr(fn(rel, d, e, err))
	}
	defer sub.Close()
	if e.Info, err = sub.Stat(); err != nil {
		return skipErr(fn(rel, d, e, err))
	}
	if err := fn(rel, d, e, nil); err != nil {
		return skipErr(err)
	}
	ents, err := sub.typedEntries()
	if err != nil {
		return skipErr(fn(rel, d, e, err))
	}
	return sub.walkTyped(rel, ents, fn, depth)
}

// skipErr is err, fs.SkipDir aside.
func skipErr(err error) error {
	if errors.Is(err, fs.SkipDir) {
		return nil
	}
	return err
}
