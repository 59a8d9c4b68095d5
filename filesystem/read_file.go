package filesystem

import (
	"context"
	_ "embed"
	"errors"
	"strings"

	"github.com/massgen-go/massgen/internal/textdiff"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed read_file.md
var readFileDescription string

type readFileParams struct {
	Path string `json:"path" access:"read" required:"true"`
	Head int    `json:"head" description:"Only the first N lines."`
	Tail int    `json:"tail" description:"Only the last N lines."`
}

func init() {
	register(tooldecl.Def[readFileParams]{
		Name:          "read_file",
		Description:   readFileDescription,
		Order:         10,
		MassGenAction: true,
		Summary: func(p readFileParams) string {
			return tooldecl.Notes(tooldecl.If(p.Head != 0, "first "+tooldecl.Count(p.Head, "line")),
				tooldecl.If(p.Tail != 0, "last "+tooldecl.Count(p.Tail, "line")))
		},
	}, (*Toolset).readFile)
}

func (t *Toolset) readFile(ctx context.Context, c *call, p readFileParams) (any, error) {
	if p.Head > 0 && p.Tail > 0 {
		return nil, errors.New("give head or tail, not both")
	}
	abs, content, err := t.readText(c, "path")
	if err != nil {
		return nil, err
	}
	if p.Head > 0 || p.Tail > 0 {
		lines := textdiff.SplitLines(content)
		if p.Head > 0 && p.Head < len(lines) {
			lines = lines[:p.Head]
		}
		if p.Tail > 0 && p.Tail < len(lines) {
			lines = lines[len(lines)-p.Tail:]
		}
		content = strings.Join(lines, "")
	}
	return map[string]any{"path": abs, "content": content}, nil
}
