package filesystem

import (
	"context"
	_ "embed"
	"fmt"
	"slices"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed create_directory.md
var createDirectoryDescription string

type createDirectoryParams struct {
	Path string `json:"path" access:"write" required:"true"`
}

func init() {
	register(tooldecl.Def[createDirectoryParams]{
		Name:        "create_directory",
		Description: createDirectoryDescription,
		Order:       50,
		OnlyAdds:    true,
		Preview: func(_ createDirectoryParams, paths []string) string {
			return describeChange("create_directory", paths)
		},
	}, (*Toolset).createDirectory)
}

func (t *Toolset) createDirectory(ctx context.Context, c *call, _ createDirectoryParams) (any, error) {
	w, err := c.walk("path")
	if err != nil {
		return nil, err
	}
	if w.Exists {
		if !w.Info.IsDir() {
			return nil, fmt.Errorf("%s exists and is not a directory", w.Path)
		}
		return map[string]any{"path": w.Path, "created": false}, nil
	}
	if w.Name == "" {
		return nil, fmt.Errorf("cannot create %s", w.Path)
	}
	d, made, err := w.Dir.MkdirAll(append(slices.Clone(w.Missing), w.Name))
	if err != nil {
		return nil, pathErr(w.Path, err)
	}
	d.Close()
	if made != "" {
		// The first directory that did not exist is the one the agent creates: only that tree
		// counts as its own for read-before-delete (re-creating an existing directory, such
		// as a context path's root, must not make the user's files in it deletable).
		t.tracker.MarkTree(made)
		t.noteCreated(made)
		c.changed(made, changes.Created)
	}
	return map[string]any{"path": w.Path, "created": made != ""}, nil
}
