package filesystem

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/permissions"
)

//go:embed copy_file.md
var copyFileDescription string

type copyFileParams struct {
	SourcePath      string `json:"source_path" access:"read" required:"true"`
	DestinationPath string `json:"destination_path" access:"write" required:"true"`
	Overwrite       bool   `json:"overwrite" description:"Replace an existing destination (default false)."`
}

func init() {
	register(tooldecl.Def[copyFileParams]{
		Name:        "copy_file",
		Description: copyFileDescription,
		Order:       120,
		Summary:     func(p copyFileParams) string { return tooldecl.Notes(tooldecl.If(p.Overwrite, "overwrite")) },
		Preview: func(_ copyFileParams, paths []string) string {
			if len(paths) != 2 {
				return ""
			}
			src, ok := currentText(paths[0])
			if !ok {
				return fmt.Sprintf("copy %s -> %s", paths[0], paths[1])
			}
			return previewDiff(paths[1], func(string) (string, error) { return src, nil })
		},
	}, (*Toolset).copyFile)
}

func (t *Toolset) copyFile(ctx context.Context, c *call, p copyFileParams) (any, error) {
	overwrite := p.Overwrite
	src, dst, err := c.copyEnds("source_path", "destination_path")
	if err != nil {
		return nil, err
	}
	if !src.Info.IsDir() {
		f, info, err := src.OpenFile()
		if err != nil {
			return nil, pathErr(src.Path, err)
		}
		defer f.Close()
		dir, name := (*safefs.Dir)(nil), dst.Name
		if dst.Exists && dst.Info.IsDir() {
			// Copying a file onto a directory puts it inside, under its own name.
			name = src.Name
			if err := t.checkEntry(ctx, c.name, safefs.Join(dst.Path, name), permissions.Write); err != nil {
				return nil, err
			}
			dir, err = dst.OpenDir()
		} else {
			var made string
			dir, made, err = dst.MakeParent()
			if made != "" {
				t.noteCreated(made)
				c.changed(made, changes.Created)
			}
		}
		if err != nil {
			return nil, pathErr(dst.Path, err)
		}
		defer dir.Close()
		if err := t.copyInto(ctx, c, f, info, dir, name, overwrite); err != nil {
			return nil, pathErr(src.Path, err)
		}
		out := safefs.Join(dir.Path, name)
		return map[string]any{"source": src.Path, "destination": out, "copied": []string{out}}, nil
	}
	sd, err := src.OpenDir()
	if err != nil {
		return nil, pathErr(src.Path, err)
	}
	defer sd.Close()
	existed := dst.Exists
	dd, err := t.destDir(c, dst)
	if err != nil {
		return nil, err
	}
	defer dd.Close()
	res, err := t.copyTree(ctx, c, sd, dd, nil, nil, overwrite)
	if err != nil {
		return nil, err
	}
	if len(res.Copied) == 0 && (len(res.Errors) > 0 || len(res.Skipped) > 0) {
		res.fail = true
	}
	if !existed {
		// A directory the copy created is the agent's. An existing one (a context path's root)
		// is not: only the copied files (marked one by one) become deletable.
		t.tracker.MarkTree(dst.Path)
	}
	return res, nil
}
