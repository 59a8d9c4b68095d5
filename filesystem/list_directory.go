package filesystem

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed list_directory.md
var listDirectoryDescription string

type listDirectoryParams struct {
	Path string `json:"path" access:"read" required:"true" empty:"ok"`
}

func init() {
	register(tooldecl.Def[listDirectoryParams]{
		Name:        "list_directory",
		Description: listDirectoryDescription,
		Order:       60,
	}, (*Toolset).listDirectory)
}

func (t *Toolset) listDirectory(ctx context.Context, c *call, _ listDirectoryParams) (any, error) {
	w, d, err := c.dirOf("path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, _, err := d.Entries(0)
	if err != nil {
		return nil, pathErr(w.Path, err)
	}
	out := []entry{}
	var sb strings.Builder
	truncated := false
	for _, e := range ents {
		if !t.visible(d.Path, e) {
			continue
		}
		if len(out) >= maxListItems {
			truncated = true
			break
		}
		en := entry{Name: e.Name, Type: typeOf(e.Info.Mode)}
		if en.Type == "file" {
			en.Size = e.Info.Size
		}
		out = append(out, en)
		tag := "[FILE]"
		switch en.Type {
		case "directory":
			tag = "[DIR]"
		case "symlink":
			tag = "[LINK]"
		}
		fmt.Fprintf(&sb, "%s %s\n", tag, e.Name)
	}
	return map[string]any{"path": w.Path, "entries": out, "listing": sb.String(), "truncated": truncated}, nil
}
