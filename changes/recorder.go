// Package changes is what the final agent changed in context paths: the journal that keeps the
// original of every entry before a tool changes it (for `massgen diff` and `massgen undo`), the
// trash that deletions go to, and the change set a turn ends with. The tool runner
// (filesystem.Toolset) tells it of each change through Recorder; this package knows nothing of
// tools or permissions.
package changes

import (
	"context"

	"github.com/massgen-go/massgen/internal/safefs"
)

// Recorder is what the tool runner calls, before and after it changes an entry of a writable
// context path. Every path is canonical (the walk's); dir and name are the descriptors the
// tool's walk holds, so what is kept is what the permission decision judged. *Journal is the
// recorder of a turn.
type Recorder interface {
	// KeepOriginal keeps what the entry name of dir (canonical path p) is, before a tool writes,
	// replaces, moves or removes it. An error means the original could not be kept: the tool
	// must not change the entry.
	KeepOriginal(ctx context.Context, dir *safefs.Dir, name, p string) error
	// Created records a directory a tool made (it did not exist).
	Created(p string)
	// AboutToTrash records, before the move, that the entry p goes to the trash slot whose data
	// is data. An error means the deletion must not happen.
	AboutToTrash(p, data string) error
	// Trashed records the entry p a tool moved to the trash, whose copy there is data.
	Trashed(p, data string)
	// BeforeCommand takes the inventory of the writable part of roots (context paths' roots)
	// before a command, walked by walk. An error says why it could not (too much to copy, a
	// failure); the command must then not write under roots.
	BeforeCommand(ctx context.Context, roots []string, walk WalkWritable) (*Inventory, error)
	// AfterCommand records what the command changed under the inventory's roots (inv may be
	// nil: nothing to do).
	AfterCommand(ctx context.Context, inv *Inventory, walk WalkWritable)
}

// WalkWritable visits every entry a command may change under roots (the tool runner knows which:
// not read-only or private paths, nor other managed roots nested inside); skipped (may be nil)
// hears of each folder it does not enter.
type WalkWritable func(ctx context.Context, roots []string, skipped func(p string), visit func(dir *safefs.Dir, name, p string, info safefs.Info) error) error

var _ Recorder = (*Journal)(nil)

// ChangeOp is what a call did to a path.
type ChangeOp string

// The operations a call or a turn does to a path.
const (
	Created  ChangeOp = "created"
	Modified ChangeOp = "modified"
	Deleted  ChangeOp = "deleted"
)

// Change is one path a call changed (absolute, resolved: the path the decision was made on).
type Change struct {
	Path string
	Op   ChangeOp
}
