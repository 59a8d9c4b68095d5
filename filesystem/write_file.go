package filesystem

import (
	"context"
	_ "embed"
	"strings"

	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed write_file.md
var writeFileDescription string

type writeFileParams struct {
	Path    string  `json:"path" access:"write" required:"true"`
	Content *string `json:"content" required:"true" empty:"ok" description:"The full new content."`
}

func init() {
	register(tooldecl.Def[writeFileParams]{
		Name:          "write_file",
		Description:   writeFileDescription,
		Order:         30,
		MassGenAction: true,
		Summary: func(p writeFileParams) string {
			if p.Content == nil {
				return ""
			}
			return tooldecl.Notes(tooldecl.Size(len(*p.Content)))
		},
		Preview: func(p writeFileParams, paths []string) string {
			if len(paths) != 1 {
				return ""
			}
			return previewDiff(paths[0], func(string) (string, error) { return *p.Content, nil })
		},
	}, (*Toolset).writeFile)
}

func (t *Toolset) writeFile(ctx context.Context, c *call, p writeFileParams) (any, error) {
	w, err := c.walk("path")
	if err != nil {
		return nil, err
	}
	created, n, err := t.writeWalk(ctx, c, w, strings.NewReader(*p.Content), 0)
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(w.Path)
	return map[string]any{"path": w.Path, "bytes_written": n, "created": created}, nil
}
