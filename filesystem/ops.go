package filesystem

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/massgen-go/massgen/filesystem/internal/fsx"
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
	maxTreeDepth  = 256
)

// excludedIn returns the first default-excluded component of rel, or "". They are never deleted
// (spec 001's undeletable names + spec 000's defaults), wherever they are; the list and its
// case rule are the permission layer's.
func excludedIn(rel string) string {
	return permissions.ExcludedComponent(filepath.ToSlash(rel))
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

// errStop ends a tree walk early without an error.
var errStop = errors.New("stop")

// treeVisit is called for each entry below the walked directory: dir holds it (dir.Path is
// canonical), rel is its slash path below the walk's root. For a directory, descend says whether
// to walk into it.
type treeVisit func(dir *fsx.Dir, rel string, e fsx.Entry) (descend bool, err error)

// walkTree visits everything below d, sorted, depth first, through directory descriptors: each
// subdirectory is opened in the one holding it, never following a link (a link swapped in for a
// directory mid-walk is not entered). Unreadable subdirectories are left out.
func walkTree(ctx context.Context, d *fsx.Dir, visit treeVisit) error {
	err := walkTreeIn(ctx, d, "", visit, 0)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

func walkTreeIn(ctx context.Context, d *fsx.Dir, prefix string, visit treeVisit, depth int) error {
	ents, _, err := d.Entries(0)
	if err != nil {
		if depth == 0 {
			return err
		}
		return nil
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := e.Name
		if prefix != "" {
			rel = prefix + "/" + e.Name
		}
		descend, err := visit(d, rel, e)
		if err != nil {
			return err
		}
		if !descend || !e.Info.IsDir() || depth >= maxTreeDepth {
			continue
		}
		sub, err := d.SubSame(e.Name, e.Info)
		if err != nil {
			continue // gone, swapped or unreadable: not entered
		}
		err = walkTreeIn(ctx, sub, rel, visit, depth+1)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// openRel opens the regular file rel (slash path) below d, descending through descriptors.
func openRel(d *fsx.Dir, rel string) (*os.File, fsx.Info, error) {
	parent, name, err := dirRel(d, rel, false)
	if err != nil {
		return nil, fsx.Info{}, err
	}
	defer parent.Close()
	return parent.OpenFile(name)
}

// dirRel opens the directory holding rel below d (creating missing ones with create) and
// returns it with rel's last name. The caller closes the directory.
func dirRel(d *fsx.Dir, rel string, create bool) (*fsx.Dir, string, error) {
	parts := strings.Split(rel, "/")
	name := parts[len(parts)-1]
	dirs := parts[:len(parts)-1]
	if create {
		parent, name, _, err := dirRelMade(d, rel)
		return parent, name, err
	}
	cur, _, err := d.MkdirAll(nil)
	if err != nil {
		return nil, "", err
	}
	for _, p := range dirs {
		next, err := cur.Sub(p)
		cur.Close()
		if err != nil {
			return nil, "", err
		}
		cur = next
	}
	return cur, name, nil
}

// dirRelMade is dirRel creating the missing directories; made is the first one it created ("":
// none).
func dirRelMade(d *fsx.Dir, rel string) (dir *fsx.Dir, name, made string, err error) {
	parts := strings.Split(rel, "/")
	dir, made, err = d.MkdirAll(parts[:len(parts)-1])
	return dir, parts[len(parts)-1], made, err
}
