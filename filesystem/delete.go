package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// inWorkspace reports whether l lives in the agent's own workspace (deletions there are final;
// elsewhere, i.e. in context paths, they go to the trash).
func (t *Toolset) inWorkspace(l loc) bool {
	ws := t.pol.Spec().Workspace
	return ws != "" && l.managed == resolveRoot(ws)
}

// unreadUnder lists the regular files under the directory entry (dir, name) that the agent has
// not read or created in this run.
func (t *Toolset) unreadUnder(dir *os.Root, l loc) ([]string, error) {
	sub, err := openSubdirNoFollow(dir, l.base())
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	files, links, err := walkFiles(sub, nil)
	if err != nil {
		return nil, err
	}
	var unread []string
	for _, f := range append(files, links...) {
		p := filepath.Join(l.abs, filepath.FromSlash(f))
		if !t.tracker.Known(p) {
			unread = append(unread, p)
		}
	}
	sort.Strings(unread)
	return unread, nil
}

func listSome(ps []string, n int) string {
	if len(ps) > n {
		return strings.Join(ps[:n], ", ") + fmt.Sprintf(" ... and %d more", len(ps)-n)
	}
	return strings.Join(ps, ", ")
}

func (t *Toolset) deleteFile(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	recursive, err := c.boolean("recursive")
	if err != nil {
		return nil, err
	}
	l, err := t.locateEntry(p, true)
	if err != nil {
		return nil, err
	}
	if root, ok := t.isRootPath(l.abs); ok {
		return nil, fmt.Errorf("cannot delete %s: it is (or contains) the managed directory %s, which is never deleted", l.abs, root)
	}
	if x := excludedIn(l.rel); x != "" {
		return nil, fmt.Errorf("cannot delete %s: %s is a system path that is never deleted", l.abs, x)
	}
	checked := resolvedOr(t.pol, p)
	if l.abs != checked {
		// A link: the Guard checked its target; the link itself is what goes.
		if err := t.checkPath(ctx, c.name, l.abs, true); err != nil {
			return nil, err
		}
	}
	r, dir, fi, err := t.openEntry(l)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r, dir)
	kind := typeOf(fi.Mode())
	if fi.IsDir() {
		if !recursive {
			return nil, fmt.Errorf("%s is a directory: set recursive=true to delete it with everything in it", l.abs)
		}
		if err := t.checkTree(ctx, c.name, dir, l); err != nil {
			return nil, err
		}
		if t.o.EnforceReadBeforeDelete {
			unread, err := t.unreadUnder(dir, l)
			if err != nil {
				return nil, pathErr(l.abs, err)
			}
			if len(unread) > 0 {
				return map[string]any{"unread": unread}, fmt.Errorf("cannot delete %s: it contains %d file(s) you have not read or created in this run (read them first): %s",
					l.abs, len(unread), listSome(unread, 20))
			}
		}
	} else if t.o.EnforceReadBeforeDelete && !t.tracker.Known(l.abs) && !t.tracker.Known(checked) {
		return map[string]any{"unread": []string{l.abs}}, fmt.Errorf("cannot delete %s: you have not read or created it in this run (read it first with read_file)", l.abs)
	}
	out := map[string]any{"deleted": l.abs, "type": kind}
	if t.inWorkspace(l) {
		if fi.IsDir() {
			err = dir.RemoveAll(l.base())
		} else {
			err = dir.Remove(l.base())
		}
		if err != nil {
			return nil, pathErr(l.abs, err)
		}
	} else {
		e, err := t.trash(dir, l, fi.IsDir())
		if err != nil {
			return nil, err
		}
		out["trash_id"] = e.ID
		out["note"] = "moved to the trash; the user can restore it with `massgen trash restore " + e.ID + "`"
	}
	t.tracker.forget(l.abs)
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
	bp, err := c.str("base_path", true)
	if err != nil {
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
	l, r, d, err := t.openDirAt(bp, true)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r, d)
	res := batchDelete{BasePath: l.abs, DryRun: dry, Deleted: []string{}, Skipped: []skipped{}, Errors: []failure{}}
	var targets []string // relative slash paths
	err = fs.WalkDir(d.FS(), ".", func(rel string, de fs.DirEntry, err error) error {
		if err != nil {
			res.Errors = append(res.Errors, failure{filepath.Join(l.abs, rel), err.Error()})
			if de != nil && de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if rel == "." {
			return nil
		}
		if matchAny(exclude, rel) || t.isPrivate(filepath.Join(l.abs, filepath.FromSlash(rel))) {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if de.IsDir() {
			if x := excludedIn(filepath.Join(l.rel, rel)); x != "" {
				res.Skipped = append(res.Skipped, skipped{filepath.Join(l.abs, rel), "system path (" + x + ") is never deleted"})
				return fs.SkipDir
			}
			return nil
		}
		if matchAny(include, rel) {
			targets = append(targets, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, rel := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		abs := filepath.Join(l.abs, filepath.FromSlash(rel))
		if x := excludedIn(filepath.Join(l.rel, rel)); x != "" {
			res.Skipped = append(res.Skipped, skipped{abs, "system path (" + x + ") is never deleted"})
			continue
		}
		if err := t.checkPath(ctx, c.name, abs, true); err != nil {
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
		if err := t.deleteIn(d, rel, abs, l, &res); err != nil {
			res.Errors = append(res.Errors, failure{abs, err.Error()})
			continue
		}
		res.Deleted = append(res.Deleted, abs)
		t.tracker.forget(abs)
	}
	return res, nil
}

// deleteIn deletes the file rel under the base directory d of l (trash for context paths).
func (t *Toolset) deleteIn(d *os.Root, rel, abs string, base loc, res *batchDelete) error {
	dir, err := openDirNoFollow(d, path.Dir(rel))
	if err != nil {
		return pathErr(abs, err)
	}
	if dir != d {
		defer dir.Close()
	}
	fl := loc{abs: abs, rootDir: base.rootDir, rel: filepath.Join(base.rel, filepath.FromSlash(rel)), managed: base.managed}
	if t.inWorkspace(base) {
		if err := dir.Remove(path.Base(rel)); err != nil {
			return pathErr(abs, err)
		}
		return nil
	}
	e, err := t.trash(dir, fl, false)
	if err != nil {
		return err
	}
	res.TrashIDs = append(res.TrashIDs, e.ID)
	return nil
}

var errNoTrash = errors.New("no trash directory is configured, so files in context paths cannot be deleted")
