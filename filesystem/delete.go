package filesystem

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/permissions"
)

// unreadUnder lists the regular files and links below the walked directory that the agent has
// not read or created in this run.
func (t *Toolset) unreadUnder(ctx context.Context, w *safefs.Walk) ([]string, error) {
	d, err := w.Dir.SubSame(w.Name, w.Info)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var unread []string
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		p := safefs.Join(dir.Path, e.Name)
		if !e.Info.IsDir() && !t.tracker.Known(p) {
			unread = append(unread, p)
		}
		return true, nil
	})
	sort.Strings(unread)
	return unread, err
}

// linkTargetKnown: a link whose target the agent read (through it) counts as read: deleting
// the link never touches the target.
func (t *Toolset) linkTargetKnown(w *safefs.Walk) bool {
	if !w.Info.IsLink() {
		return false
	}
	target, err := safefs.Resolve(w.Path, false)
	if err != nil {
		return false
	}
	defer target.Close()
	return t.tracker.Known(target.Path)
}

func listSome(ps []string, n int) string {
	if len(ps) > n {
		return strings.Join(ps[:n], ", ") + fmt.Sprintf(" ... and %d more", len(ps)-n)
	}
	return strings.Join(ps, ", ")
}

func (t *Toolset) deleteFile(ctx context.Context, c *call) (any, error) {
	if _, err := c.str("path", true); err != nil {
		return nil, err
	}
	recursive, err := c.boolean("recursive")
	if err != nil {
		return nil, err
	}
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
	c.changed(w.Path, Deleted)
	return out, nil
}

type batchDelete struct {
	BasePath    string    `json:"base_path"`
	DryRun      bool      `json:"dry_run"`
	Deleted     []string  `json:"deleted"`
	WouldDelete []string  `json:"would_delete,omitempty"`
	Skipped     []skipped `json:"skipped"`
	Unread      []string  `json:"unread,omitempty"`
	Errors      []failure `json:"errors"`
	TrashIDs    []string  `json:"trash_ids,omitempty"`
}

func (t *Toolset) deleteFilesBatch(ctx context.Context, c *call) (any, error) {
	if _, err := c.str("base_path", true); err != nil {
		return nil, err
	}
	include, exclude, err := c.patterns()
	if err != nil {
		return nil, err
	}
	dry, err := c.boolean("dry_run")
	if err != nil {
		return nil, err
	}
	w, d, err := c.dirOf("base_path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	res := batchDelete{BasePath: w.Path, DryRun: dry, Deleted: []string{}, Skipped: []skipped{}, Errors: []failure{}}
	var targets []treeFile
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		p := safefs.Join(dir.Path, e.Name)
		if matchAny(exclude, rel) || !t.readable(p) {
			return false, nil
		}
		if e.Info.IsDir() {
			if x := t.excludedBelowRoot(p); x != "" {
				res.Skipped = append(res.Skipped, skipped{p, "system path (" + x + ") is never deleted"})
				return false, nil
			}
			return true, nil
		}
		if matchAny(include, rel) {
			targets = append(targets, treeFile{rel, e.Info})
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		abs := safefs.JoinRel(w.Path, f.rel)
		if x := t.excludedBelowRoot(abs); x != "" {
			res.Skipped = append(res.Skipped, skipped{abs, "system path (" + x + ") is never deleted"})
			continue
		}
		if err := t.checkEntry(ctx, c.name, abs, permissions.Delete); err != nil {
			res.Skipped = append(res.Skipped, skipped{abs, err.Error()})
			continue
		}
		if t.o.EnforceReadBeforeDelete && !t.tracker.Known(abs) {
			res.Skipped = append(res.Skipped, skipped{abs, "not read or created in this run (read it first)"})
			res.Unread = append(res.Unread, abs)
			continue
		}
		if dry {
			res.WouldDelete = append(res.WouldDelete, abs)
			continue
		}
		if err := t.deleteIn(c, d, f, abs, &res); err != nil {
			res.Errors = append(res.Errors, failure{abs, err.Error()})
			continue
		}
		res.Deleted = append(res.Deleted, abs)
		t.tracker.forget(abs)
	}
	return res, nil
}

// deleteIn deletes the file f below the base directory d (trash outside the workspace),
// reaching it through descriptors; it must still be the entry listed.
func (t *Toolset) deleteIn(c *call, d *safefs.Dir, f treeFile, abs string, res *batchDelete) error {
	dir, name, err := dirRel(d, f.rel, false)
	if err != nil {
		return pathErr(abs, err)
	}
	defer dir.Close()
	cur, err := dir.Lstat(name)
	if err != nil {
		return pathErr(abs, err)
	}
	if !cur.Same(f.info) || cur.IsDir() {
		return pathErr(abs, errChanged)
	}
	if t.inWorkspace(abs) {
		if err := dir.Remove(name); err != nil {
			return pathErr(abs, err)
		}
	} else {
		e, err := t.trash(dir, name, abs, cur)
		if err != nil {
			return err
		}
		t.noteTrashed(abs, e)
		res.TrashIDs = append(res.TrashIDs, e.ID)
	}
	c.changed(abs, Deleted)
	return nil
}

var errNoTrash = errors.New("no trash directory is configured, so files in context paths cannot be deleted")
