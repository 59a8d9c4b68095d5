package filesystem

import (
	"context"
	_ "embed"

	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed list_allowed_directories.md
var listAllowedDirectoriesDescription string

type listAllowedDirectoriesParams struct{}

func init() {
	register(tooldecl.Def[listAllowedDirectoriesParams]{
		Name:        "list_allowed_directories",
		Description: listAllowedDirectoriesDescription,
		Order:       110,
	}, (*Toolset).listAllowed)
}

func (t *Toolset) listAllowed(ctx context.Context, c *call, _ listAllowedDirectoriesParams) (any, error) {
	roots := t.pol.Roots()
	var all, w, ro []string
	for _, r := range roots {
		all = append(all, r.Path)
		if r.Write {
			w = append(w, r.Path)
		} else {
			ro = append(ro, r.Path)
		}
	}
	return map[string]any{"directories": nonNil(all), "writable": nonNil(w), "read_only": nonNil(ro),
		"roots": roots, "workspace": t.pol.Spec().Workspace, "description": t.pol.DescribeRoots()}, nil
}
