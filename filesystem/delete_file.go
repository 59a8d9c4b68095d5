package filesystem

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed delete_file.md
var deleteFileDescription string

type deleteFileParams struct {
	Path      string `json:"path" access:"delete" required:"true"`
	Recursive bool   `json:"recursive" description:"Required to delete a directory."`
}

func init() {
	register(tooldecl.Def[deleteFileParams]{
		Name:        "delete_file",
		Description: deleteFileDescription,
		Order:       140,
		Summary:     func(p deleteFileParams) string { return tooldecl.Notes(tooldecl.If(p.Recursive, "recursive")) },
		Preview:     func(_ deleteFileParams, paths []string) string { return describeChange("delete", paths) },
	}, (*Toolset).deleteFile)
}

func (t *Toolset) deleteFile(ctx context.Context, c *call, p deleteFileParams) (any, error) {
	recursive := p.Recursive
	w, err := c.existing("path")
	if err != nil {
		return nil, err
	}
	if root, ok := t.containsRoot(w.Path); ok {
		return nil, fmt.Errorf("cannot delete %s: it is (or contains) the managed directory %s, which is never deleted", w.Path, root)
	}
	if x := t.excludedBelowRoot(w.Path); x != "" {
		return nil, fmt.Errorf("cannot delete %s: %s is a system path that is never deleted", w.Path, x)
	}
	kind := typeOf(w.Info.Mode)
	if w.Info.IsDir() {
		if !recursive {
			return nil, fmt.Errorf("%s is a directory: set recursive=true to delete it with everything in it", w.Path)
		}
		if err := t.checkTreeOf(ctx, c.name, w); err != nil {
			return nil, err
		}
		if t.o.EnforceReadBeforeDelete {
			unread, err := t.unreadUnder(ctx, w)
			if err != nil {
				return nil, pathErr(w.Path, err)
			}
			if len(unread) > 0 {
				return map[string]any{"unread": unread}, fmt.Errorf("cannot delete %s: it contains %d file(s) you have not read or created in this run (read them first): %s",
					w.Path, len(unread), listSome(unread, 20))
			}
		}
	} else if t.o.EnforceReadBeforeDelete && !t.tracker.Known(w.Path) && !t.linkTargetKnown(w) {
		return map[string]any{"unread": []string{w.Path}}, fmt.Errorf("cannot delete %s: you have not read or created it in this run (read it first with read_file)", w.Path)
	}
	if err := sameEntry(w); err != nil {
		return nil, err
	}
	out := map[string]any{"deleted": w.Path, "type": kind}
	if t.inWorkspace(w.Path) {
		if err := w.Dir.RemoveAll(w.Name); err != nil {
			return nil, pathErr(w.Path, err)
		}
	} else {
		e, err := t.trash(w.Dir, w.Name, w.Path, w.Info)
		if err != nil {
			return nil, err
		}
		t.noteTrashed(w.Path, e)
		out["trash_id"] = e.ID
		out["note"] = "moved to the trash; the user can restore it with `massgen trash restore " + e.ID + "`"
	}
	t.tracker.forget(w.Path)
	c.changed(w.Path, changes.Deleted)
	return out, nil
}
