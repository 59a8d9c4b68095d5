package filesystem

import (
	"context"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/textdiff"
	"github.com/massgen-go/massgen/permissions"
)

// Limits that keep results model-sized.
const (
	maxReadBytes  = 10 << 20 // text tools refuse larger files
	maxDiffBytes  = textdiff.MaxBytes
	maxTreeItems  = 5000
	maxListItems  = 5000
	maxSearchHits = 1000
	maxDiffs      = 50
	maxTreeDepth  = safefs.MaxTreeDepth
)

// Budgets of the tools that gather: what one call may cost massgen (memory for the result, and
// the model's context), whatever its arguments name. What a budget leaves out is counted and
// named in the result ("truncated: N more"). Documented in docs/tools.md.
const (
	// maxReadTotal bounds read_multiple_files: the content of every file it returns, counted as
	// the JSON that carries it, plus the paths and messages, per call.
	maxReadTotal = 16 << 20
	// maxTreeBytes and maxSearchBytes bound the names directory_tree returns and the paths
	// search_files returns, per call (besides maxTreeItems and maxSearchHits).
	maxTreeBytes   = 1 << 20
	maxSearchBytes = 1 << 20
	// maxCountMore bounds how many entries a walk counts past its budget for "N more": beyond,
	// the note says "more than N more" and the walk stops.
	maxCountMore = 100_000
	// maxNotRead bounds the paths read_multiple_files lists as not read.
	maxNotRead = 100
)

// budgets are the limits above as one Toolset applies them (tests lower them).
type budgets struct {
	readTotal               int64
	treeItems, treeBytes    int
	searchHits, searchBytes int
	countMore               int
}

func defaultBudgets() budgets {
	return budgets{readTotal: maxReadTotal, treeItems: maxTreeItems, treeBytes: maxTreeBytes,
		searchHits: maxSearchHits, searchBytes: maxSearchBytes, countMore: maxCountMore}
}

// jsonLen is how many bytes s takes as a JSON string's content (encoding/json's escapes, HTML
// characters not escaped: Call encodes with SetEscapeHTML(false)).
func jsonLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// excludedIn returns the first default-excluded component of rel, or "". They are never deleted
// (spec 001's undeletable names + spec 000's defaults), wherever they are; the list and its
// case rule are the permission layer's.
func excludedIn(rel string) string {
	return permissions.ExcludedComponent(filepath.ToSlash(rel))
}

func typeOf(m fs.FileMode) string { return safefs.TypeName(m) }

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

// The tree walk is safefs's; these are its names here.
var errStop = safefs.ErrStopWalk

type treeVisit = safefs.TreeVisit

func walkTree(ctx context.Context, d *safefs.Dir, visit treeVisit) error {
	return safefs.WalkTree(ctx, d, visit)
}

// dirRel opens the directory holding rel below d (creating missing ones with create) and
// returns it with rel's last name. The caller closes the directory.
func dirRel(d *safefs.Dir, rel string, create bool) (*safefs.Dir, string, error) {
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
func dirRelMade(d *safefs.Dir, rel string) (dir *safefs.Dir, name, made string, err error) {
	parts := strings.Split(rel, "/")
	dir, made, err = d.MkdirAll(parts[:len(parts)-1])
	return dir, parts[len(parts)-1], made, err
}
