package filesystem

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed search_files.md
var searchFilesDescription string

type searchFilesParams struct {
	Path            string   `json:"path" access:"read" required:"true" empty:"ok"`
	Pattern         string   `json:"pattern" required:"true" description:"Glob or name substring."`
	ExcludePatterns []string `json:"excludePatterns" description:"Globs to exclude."`
}

func init() {
	register(tooldecl.Def[searchFilesParams]{
		Name:        "search_files",
		Description: tooldecl.Render(searchFilesDescription, map[string]any{"MaxHits": maxSearchHits, "MaxBytes": sizeText(maxSearchBytes)}),
		Order:       90,
		Summary: func(p searchFilesParams) string {
			return tooldecl.If(p.Pattern != "", " "+strconv.Quote(tooldecl.Shorten(p.Pattern, 40)))
		},
	}, (*Toolset).searchFiles)
}

func (t *Toolset) searchFiles(ctx context.Context, c *call, p searchFilesParams) (any, error) {
	pattern, excl := p.Pattern, p.ExcludePatterns
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("invalid pattern %q", pattern)
	}
	w, d, err := c.dirOf("path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	hits := []string{}
	size := 0
	over := overBudget{limit: t.budget.countMore}
	lower := strings.ToLower(pattern)
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		if matchAny(excl, rel) || !t.visible(dir.Path, e) {
			return false, nil
		}
		var ok bool
		if hasGlob(pattern) {
			ok = matchAny([]string{pattern}, rel)
		} else {
			ok = strings.Contains(strings.ToLower(e.Name), lower)
		}
		if over.on {
			return true, boolStop(over.visit(ok))
		}
		if ok {
			p := safefs.Join(dir.Path, e.Name)
			cost := jsonLen(p) + 4
			if len(hits) >= t.budget.searchHits || size+cost > t.budget.searchBytes {
				return true, boolStop(over.visit(true))
			}
			size += cost
			hits = append(hits, p)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"path": w.Path, "pattern": pattern, "matches": hits, "truncated": over.on}
	if over.on {
		out["more"] = over.more
		out["note"] = over.note("matches", fmt.Sprintf("%d matches, %s of paths", t.budget.searchHits, sizeText(int64(t.budget.searchBytes))),
			"narrow the pattern or search a subfolder")
	}
	return out, nil
}
