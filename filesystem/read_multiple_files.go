package filesystem

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed read_multiple_files.md
var readMultipleFilesDescription string

type readMultipleFilesParams struct {
	Paths []string `json:"paths" access:"read" required:"true" description:"Paths to read."`
}

func init() {
	register(tooldecl.Def[readMultipleFilesParams]{
		Name:        "read_multiple_files",
		Description: tooldecl.Render(readMultipleFilesDescription, map[string]string{"MaxTotal": sizeText(maxReadTotal)}),
		Order:       20,
	}, (*Toolset).readMultipleFiles)
}

// readMultipleFiles reads each file once: a path naming, canonically, one returned above is left
// out (counted in duplicates), and another name of a file returned (a hard link) gets a same_as
// entry instead of a second copy. What is returned is bounded by the call's budget (maxReadTotal:
// content as JSON, paths and messages): the first file that does not fit ends the reading, and
// the rest are counted in a "truncated: N more" note, so a call naming 4,096 large files costs
// massgen one budget, not 4,096 files.
func (t *Toolset) readMultipleFiles(ctx context.Context, c *call, p readMultipleFilesParams) (any, error) {
	paths := p.Paths
	type fileKey struct{ dev, ino uint64 }
	res := multiResult{all: true, Files: []fileContent{}}
	seen := map[fileKey]string{} // file -> the path its content was returned under
	given := map[string]bool{}   // canonical paths returned (content or error)
	left := t.budget.readTotal
	for i, p := range paths {
		arg := fmt.Sprintf("paths[%d]", i)
		w, err := c.walk(arg)
		if err == nil && given[w.Path] {
			res.Duplicates++
			continue
		}
		var fc fileContent
		var data string
		if err == nil && w.Exists && w.Info.IsRegular() {
			if first, ok := seen[fileKey{w.Info.Dev, w.Info.Ino}]; ok {
				fc = fileContent{Path: w.Path, SameAs: first} // another name of a file returned
				err = errSameFile
			}
		}
		if err == nil {
			// What is left, less this entry's path and the JSON around it.
			data, err = t.readWalkUpTo(c.name, w, left-int64(jsonLen(w.Path)+32))
		}
		if errors.Is(err, errOverBudget) {
			res.truncate(paths[i:], i, t.budget.readTotal)
			break
		}
		switch {
		case errors.Is(err, errSameFile):
			t.tracker.Mark(w.Path)
		case err != nil:
			fc.Path = p
			if w != nil {
				fc.Path = w.Path
			}
			fc.Error = err.Error()
		default:
			fc = fileContent{Path: w.Path, Content: data}
			t.tracker.Mark(w.Path)
			seen[fileKey{w.Info.Dev, w.Info.Ino}] = w.Path
			res.all = false
		}
		cost := int64(jsonLen(fc.Path) + jsonLen(fc.Content) + jsonLen(fc.Error) + jsonLen(fc.SameAs) + 32)
		if cost > left {
			res.truncate(paths[i:], i, t.budget.readTotal)
			break
		}
		left -= cost
		res.Files = append(res.Files, fc)
		if w != nil {
			given[w.Path] = true
		}
	}
	res.size = int(t.budget.readTotal - left)
	return res, nil
}
