package filesystem

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/internal/textdiff"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed edit_file.md
var editFileDescription string

type editFileParams struct {
	Path   string   `json:"path" access:"write" readIf:"dryRun" required:"true"`
	Edits  editList `json:"edits" required:"true" description:"Edits applied in order."`
	DryRun bool     `json:"dryRun" description:"Preview the diff without writing."`
}

// edit replaces OldText with NewText (see applyEdits).
type edit struct {
	OldText string `json:"oldText" required:"true" description:"Text to search for (must match exactly, or line by line ignoring indentation)."`
	NewText string `json:"newText" required:"true" description:"Text to replace it with."`
}

// editList reads edits itself: a non-empty list of objects, each with string oldText and newText.
type editList []edit

func (l *editList) BindArg(v any) error {
	raw, ok := v.([]any)
	if !ok || len(raw) == 0 {
		return errors.New(`argument "edits" must be a non-empty list of {oldText, newText}`)
	}
	out := make(editList, 0, len(raw))
	for i, e := range raw {
		m, ok := e.(map[string]any)
		if !ok {
			return fmt.Errorf("edits[%d] must be an object {oldText, newText}", i)
		}
		o, ok1 := m["oldText"].(string)
		n, ok2 := m["newText"].(string)
		if !ok1 || !ok2 {
			return fmt.Errorf("edits[%d] needs string oldText and newText", i)
		}
		if o == "" {
			return fmt.Errorf("edits[%d].oldText is empty", i)
		}
		out = append(out, edit{o, n})
	}
	*l = out
	return nil
}

func init() {
	register(tooldecl.Def[editFileParams]{
		Name:        "edit_file",
		Description: editFileDescription,
		Order:       40,
		Summary: func(p editFileParams) string {
			return tooldecl.Notes(tooldecl.If(p.Edits != nil, tooldecl.Count(len(p.Edits), "edit")), tooldecl.If(p.DryRun, "dry run"))
		},
		Preview: func(p editFileParams, paths []string) string {
			if len(paths) != 1 {
				return ""
			}
			return previewDiff(paths[0], func(cur string) (string, error) { return applyEdits(cur, p.Edits) })
		},
	}, (*Toolset).editFile)
}

func (t *Toolset) editFile(ctx context.Context, c *call, p editFileParams) (any, error) {
	w, err := c.walk("path")
	if err != nil {
		return nil, err
	}
	data, err := t.readWalk(c.name, w)
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(w.Path)
	updated, err := applyEdits(data, p.Edits)
	if err != nil {
		return nil, err
	}
	diff, added, removed := textdiff.Unified(w.Path, w.Path, data, updated, 3)
	if !p.DryRun && updated != data {
		if _, _, err := t.writeWalk(ctx, c, w, strings.NewReader(updated), 0); err != nil {
			return nil, err
		}
	}
	return map[string]any{"path": w.Path, "diff": diff, "added": added, "removed": removed, "dryRun": p.DryRun, "changed": updated != string(data)}, nil
}
