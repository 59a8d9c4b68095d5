package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/massgen-go/massgen/permissions"
)

// Limits that keep results model-sized.
const (
	maxReadBytes  = 10 << 20 // text tools refuse larger files
	maxDiffBytes  = 5 << 20
	maxTreeItems  = 5000
	maxListItems  = 5000
	maxSearchHits = 1000
	maxDiffs      = 50
)

// excludedIn returns the first default-excluded component of rel, or "". They are never deleted
// (spec 001's undeletable names + spec 000's defaults), wherever they are; the list and its
// case rule are the permission layer's.
func excludedIn(rel string) string {
	return permissions.ExcludedComponent(filepath.ToSlash(rel))
}

// pathErr turns OS errors into short messages naming the path.
func pathErr(p string, err error) error {
	switch {
	case errors.Is(err, errChanged):
		return fmt.Errorf("%s: %w", p, errChanged)
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

func typeOf(m fs.FileMode) string {
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

// openDirLoc opens the directory at l (refusing links), returning the root to close and the dir.
func (t *Toolset) openDirLoc(l loc) (*os.Root, *os.Root, error) {
	if l.rootDir != l.managed { // a single-file context path
		return nil, nil, fmt.Errorf("%s is a file, not a directory", l.abs)
	}
	r, err := t.openRoot(l)
	if err != nil {
		return nil, nil, err
	}
	d, err := openDirNoFollow(r, l.rel)
	if err != nil {
		r.Close()
		return nil, nil, pathErr(l.abs, err)
	}
	return r, d, nil
}

// openDirAt locates p (for writing or reading) and opens it as a directory like openDirLoc.
func (t *Toolset) openDirAt(p string, write bool) (l loc, r, d *os.Root, err error) {
	if l, err = t.locate(p, write); err != nil {
		return loc{}, nil, nil, err
	}
	if r, d, err = t.openDirLoc(l); err != nil {
		return loc{}, nil, nil, err
	}
	return l, r, d, nil
}

func closeDirs(r, d *os.Root) {
	if d != nil && d != r {
		d.Close()
	}
	if r != nil {
		r.Close()
	}
}

// matchAny matches a slash path relative to a base against globs: the whole relative path, the
// base name for patterns without a slash (so "*.py" finds files at any depth, like MassGen's
// fnmatch), and a directory pattern covers everything under it.
func matchAny(patterns []string, rel string) bool {
	for _, p := range patterns {
		p = strings.TrimPrefix(filepath.ToSlash(p), "./")
		if p == "" {
			continue
		}
		if ok, _ := doublestar.Match(p, rel); ok {
			return true
		}
		if !strings.Contains(strings.TrimSuffix(p, "/"), "/") {
			if ok, _ := doublestar.Match(strings.TrimSuffix(p, "/"), path.Base(rel)); ok {
				return true
			}
		}
		if ok, _ := doublestar.Match(strings.TrimSuffix(p, "/")+"/**", rel); ok {
			return true
		}
	}
	return false
}

// hasGlob reports whether s has glob syntax.
func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[{") }

// walkFiles lists the regular files and links under the directory d, relative slash paths, not
// descending into links; skip (may be nil) leaves entries out (directories with their content).
func walkFiles(d *os.Root, skip func(rel string) bool) (files []string, links []string, err error) {
	err = fs.WalkDir(d.FS(), ".", func(rel string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if skip != nil && skip(rel) {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case de.IsDir():
		case de.Type()&fs.ModeSymlink != 0:
			links = append(links, rel)
		case de.Type().IsRegular():
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files, links, err
}
