package filesystem

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"

	"github.com/massgen-go/massgen/internal/textdiff"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed compare_files.md
var compareFilesDescription string

type compareFilesParams struct {
	File1        string `json:"file1" access:"read" required:"true"`
	File2        string `json:"file2" access:"read" required:"true"`
	ContextLines *int   `json:"context_lines" description:"Context lines around changes (default 3)."`
}

func init() {
	register(tooldecl.Def[compareFilesParams]{
		Name:        "compare_files",
		Description: compareFilesDescription,
		Order:       170,
	}, (*Toolset).compareFiles)
}

func (t *Toolset) compareFiles(ctx context.Context, c *call, p compareFilesParams) (any, error) {
	n := 3
	if p.ContextLines != nil {
		n = *p.ContextLines
	}
	if n < 0 || n > 1000 {
		return nil, fmt.Errorf("context_lines must be between 0 and 1000, got %d", n)
	}
	a1, a, bin1, err := c.readWalkForDiff("file1")
	if err != nil {
		return nil, err
	}
	a2, b, bin2, err := c.readWalkForDiff("file2")
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(a1)
	t.tracker.Mark(a2)
	if bin1 || bin2 {
		return map[string]any{"file1": a1, "file2": a2, "identical": bytes.Equal(a, b), "binary": true,
			"diff": "", "message": "binary files are compared by content only, not diffed",
			"stats": map[string]int{"added": 0, "removed": 0}}, nil
	}
	diff, added, removed := textdiff.Unified(a1, a2, string(a), string(b), n)
	return map[string]any{"file1": a1, "file2": a2, "identical": bytes.Equal(a, b), "binary": false,
		"diff": diff, "stats": map[string]int{"added": added, "removed": removed, "changed": min(added, removed)}}, nil
}
