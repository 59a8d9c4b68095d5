package filesystem

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed directory_tree.md
var directoryTreeDescription string

type directoryTreeParams struct {
	Path string `json:"path" access:"read" required:"true" empty:"ok"`
}

func init() {
	register(tooldecl.Def[directoryTreeParams]{
		Name:        "directory_tree",
		Description: tooldecl.Render(directoryTreeDescription, map[string]any{"MaxItems": maxTreeItems, "MaxBytes": sizeText(maxTreeBytes)}),
		Order:       70,
	}, (*Toolset).directoryTree)
}

func (t *Toolset) directoryTree(ctx context.Context, c *call, _ directoryTreeParams) (any, error) {
	w, d, err := c.dirOf("path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	root := &entry{Name: w.Name, Children: []*entry{}}
	nodes := map[string]*entry{"": root}
	count, size := 0, 0
	over := overBudget{limit: t.budget.countMore}
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		if !t.visible(dir.Path, e) {
			return false, nil
		}
		cost := jsonLen(e.Name) + 48 // the name and the JSON of an entry
		if over.on || count >= t.budget.treeItems || size+cost > t.budget.treeBytes {
			if !over.visit(true) {
				return false, errStop
			}
			return true, nil // counted; its subtree too
		}
		count++
		size += cost
		parentRel := ""
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			parentRel = rel[:i]
		}
		n := &entry{Name: e.Name, Type: typeOf(e.Info.Mode)}
		if parent := nodes[parentRel]; parent != nil {
			parent.Children = append(parent.Children, n)
		}
		if e.Info.IsDir() {
			n.Children = []*entry{}
			nodes[rel] = n
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"path": w.Path, "tree": root.Children, "truncated": over.on}
	if over.on {
		out["more"] = over.more
		out["note"] = over.note("entries", fmt.Sprintf("%d entries, %s of names", t.budget.treeItems, sizeText(int64(t.budget.treeBytes))),
			"call directory_tree on a subfolder, or use search_files")
	}
	return out, nil
}
