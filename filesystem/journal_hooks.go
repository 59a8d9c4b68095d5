package filesystem

import (
	"context"
	"fmt"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/safefs"
)

// The tools' side of the change record (ToolsetOptions.Journal, a changes.Recorder): each tool
// that writes, replaces, moves or deletes calls these with the descriptors of its walk, before
// acting. Whether a path is recorded at all is decided here, in journaled.

// journaled reports whether changes to the canonical path p are journaled: a journal is set and
// the deepest managed root holding p is a writable context path (not a workspace or private
// folder nested in it).
func (t *Toolset) journaled(p string) bool {
	if t.o.Journal == nil {
		return false
	}
	root := t.pol.ManagedRoot(p)
	if root == "" {
		return false
	}
	// The context paths as resolved once when the agent's environment was built.
	ctx := t.pol.Managed().Context
	for i, cp := range t.pol.Spec().ContextPaths {
		if cp.Write && ctx[i].Path == root {
			return true
		}
	}
	return false
}

// keepOriginal keeps what the entry name of dir (canonical path p) is, before a tool changes
// it. An original that cannot be kept fails the call: the entry is left as it is.
func (t *Toolset) keepOriginal(ctx context.Context, dir *safefs.Dir, name, p string) error {
	if !t.journaled(p) {
		return nil
	}
	if err := t.o.Journal.KeepOriginal(ctx, dir, name, p); err != nil {
		return fmt.Errorf("not changed: keeping the original of %s for `massgen undo` failed: %w", p, err)
	}
	return nil
}

// noteCreated records a directory a tool created (it did not exist before).
func (t *Toolset) noteCreated(p string) {
	if p != "" && t.journaled(p) {
		t.o.Journal.Created(p)
	}
}

// noteTrashed records an entry a tool moved to the trash (its copy there is the original).
func (t *Toolset) noteTrashed(p string, e changes.TrashEntry) {
	if t.journaled(p) {
		t.o.Journal.Trashed(p, e.Data)
	}
}

// trash moves the entry name of dir (canonical path p, lstat info) into a new slot of the run's
// trash; the change record hears of the deletion before it happens.
func (t *Toolset) trash(dir *safefs.Dir, name, p string, info safefs.Info) (changes.TrashEntry, error) {
	if t.o.TrashDir == "" {
		return changes.TrashEntry{}, errNoTrash
	}
	var journal func(string) error
	if t.journaled(p) {
		journal = func(data string) error {
			if err := t.o.Journal.AboutToTrash(p, data); err != nil {
				return fmt.Errorf("not deleted: recording the deletion of %s for `massgen undo` failed: %w", p, err)
			}
			return nil
		}
	}
	return changes.MoveEntryToTrash(t.o.TrashDir, dir, name, p, info, t.pol.Spec().Agent, journal)
}
