package filesystem

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/safefs"
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
	c.changed(abs, changes.Deleted)
	return nil
}

var errNoTrash = errors.New("no trash directory is configured, so files in context paths cannot be deleted")
