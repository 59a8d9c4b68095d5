package changes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/internal/safefs"
)

// Commands and the change journal. A command changes files by itself, inside the sandbox, so
// no tool sees each change. Before a command that may write into a context path, massgen takes
// an inventory of the writable part of those paths (what the sandbox lets the command change:
// Keep paths stay read-only, private paths are hidden) and keeps a copy of every file not yet
// journaled; after it, a second inventory tells which entries the command created, changed
// (inode, size, times or mode differ) or removed, and those are journaled with the copies as
// their originals. The copies of unchanged files are dropped. When the writable part is too
// large to copy (limits below), BeforeCommand fails and the tool runner runs the command with
// those context paths read-only. Which entries a command may change is the tool runner's to say
// (WalkWritable).
//
// The inventory is durable before the command starts: the copies (one blob) and an index of
// the entries (originals/<n>.inventory.json, named by a journal line) are synced first, so a
// run killed while the command runs leaves what RecoverJournal needs to tell what it changed.
// Both are removed once the command's changes are journaled.

// Limits of the copies kept before one command.
const (
	MaxKeepFiles = 20000
	MaxKeepBytes = 256 << 20
)

// invEntry is one entry of a pre-command inventory.
type invEntry struct {
	info  safefs.Info
	state EntryState // what undo puts back; a file's content is at off in the blob
	off   int64
	known bool // the journal knew it already: nothing was copied
}

// Inventory is what the writable part of the context paths held before a command. The files'
// contents are copied one after the other into one blob (one file created per command, not one
// per file: creating files is what costs); after the command, only the changed ones are taken
// out of it, and it is removed.
type Inventory struct {
	roots   []string
	entries map[string]invEntry
	skipped []string // folders of the roots the walk did not enter (read-only, private, nested roots)
	blob    *os.File
	index   string // the durable index (see savedInventory); "" until written
}

// savedInventory is an inventory's index as kept for a recovery: the roots, what the walk did
// not enter, every entry with its state and (for a file) where its content is in the blob.
type savedInventory struct {
	Blob    string       `json:"blob"`
	Roots   []string     `json:"roots"`
	Skipped []string     `json:"skipped,omitempty"`
	Entries []savedEntry `json:"entries"`
}

type savedEntry struct {
	Path   string     `json:"path"`
	Before EntryState `json:"before"`
	Off    int64      `json:"off,omitempty"`
	Known  bool       `json:"known,omitempty"`
}

// BeforeCommand takes the inventory of the writable part of roots before a command (see the
// top of this file). When it cannot (too much to copy, or an error), the error says why, in
// words for the command's note.
func (j *Journal) BeforeCommand(ctx context.Context, roots []string, walk WalkWritable) (*Inventory, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	inv := &Inventory{roots: roots, entries: map[string]invEntry{}}
	var files, bytes int64
	blobPath, err := j.newCopyPath("originals")
	if err == nil {
		inv.blob, err = os.OpenFile(blobPath+".command", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	}
	skip := func(p string) { inv.skipped = append(inv.skipped, p) }
	if err == nil {
		err = walk(ctx, roots, skip, func(dir *safefs.Dir, name, p string, info safefs.Info) error {
			if known, absent := j.knownBefore(p); known || absent {
				inv.entries[p] = invEntry{info: info, known: true}
				return nil
			}
			e := invEntry{info: info}
			switch {
			case info.IsDir():
				e.state = EntryState{Type: EntryDir, Mode: info.Mode.Perm()}
			case info.IsLink():
				target, err := dir.Readlink(name)
				if err != nil {
					return err
				}
				e.state = EntryState{Type: EntrySymlink, Target: target}
			case info.IsRegular():
				files, bytes = files+1, bytes+info.Size
				if files > MaxKeepFiles || bytes > MaxKeepBytes {
					return errTooMuch
				}
				f, fi, err := dir.OpenFileSame(name, info)
				if err != nil {
					return err
				}
				if e.off, err = inv.blob.Seek(0, io.SeekCurrent); err == nil {
					e.state.Size, err = io.Copy(inv.blob, f)
				}
				f.Close()
				if err != nil {
					return fmt.Errorf("keeping the original of %s: %w", p, err)
				}
				e.state.Type, e.state.Mode = EntryFile, fi.Mode.Perm()
			default:
				return nil // sockets, FIFOs: nothing a command's change to could be undone
			}
			inv.entries[p] = e
			return nil
		})
	}
	if err == nil {
		err = inv.persist(j, blobPath+".inventory.json")
	}
	if err == nil {
		return inv, nil
	}
	inv.close()
	if errors.Is(err, errTooMuch) {
		err = fmt.Errorf("keeping their originals for `massgen undo` would copy more than %d files or %d MiB", MaxKeepFiles, MaxKeepBytes>>20)
	}
	return nil, err
}

var errTooMuch = errors.New("too much to keep")

// persist makes the inventory durable before the command runs: the blob synced, the index
// written, and a journal line naming it (caller holds the journal's mu).
func (inv *Inventory) persist(j *Journal, index string) error {
	if err := inv.blob.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	si := savedInventory{Blob: inv.blob.Name(), Roots: inv.roots, Skipped: inv.skipped, Entries: make([]savedEntry, 0, len(inv.entries))}
	for p, e := range inv.entries {
		si.Entries = append(si.Entries, savedEntry{Path: p, Before: e.state, Off: e.off, Known: e.known})
	}
	slices.SortFunc(si.Entries, func(a, b savedEntry) int { return strings.Compare(a.Path, b.Path) })
	b, err := json.Marshal(si)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := writeSynced(index, b); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	inv.index = index
	return j.writeLine(journalLine{Inventory: index})
}

// close drops the index and the blob of copies (in that order: an index always has its blob).
func (inv *Inventory) close() {
	if inv.index != "" {
		os.Remove(inv.index)
	}
	if inv.blob != nil {
		inv.blob.Close()
		os.Remove(inv.blob.Name())
	}
}

// keep takes the original of a changed file out of the blob into a kept copy (caller holds
// the journal's mu).
func (inv *Inventory) keep(j *Journal, e invEntry) (EntryState, error) {
	st := e.state
	if st.Type != EntryFile {
		return st, nil
	}
	dst, err := j.newCopyPath("originals")
	if err != nil {
		return st, err
	}
	if st.SHA256, _, err = j.keepCopy(io.NewSectionReader(inv.blob, e.off, st.Size), dst); err != nil {
		return st, err
	}
	st.Kept = dst
	return st, nil
}

// AfterCommand journals what the command created, changed or removed, and drops the copies of
// what it left alone.
func (j *Journal) AfterCommand(ctx context.Context, inv *Inventory, walk WalkWritable) {
	if inv == nil {
		return
	}
	ctx = context.WithoutCancel(ctx) // a cancelled command may still have changed files
	defer inv.close()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.beginBatch() // what the command changed, synced at once before its inventory goes
	defer func() { j.note(j.endBatch()) }()
	now := map[string]safefs.Info{}
	var order []string
	err := walk(ctx, inv.roots, nil, func(_ *safefs.Dir, _, p string, info safefs.Info) error {
		now[p] = info
		order = append(order, p)
		return nil
	})
	if err != nil {
		j.note(fmt.Errorf("listing the context paths after a command: %w", err))
	}
	before := make([]string, 0, len(inv.entries))
	for p := range inv.entries {
		before = append(before, p)
	}
	slices.Sort(before)
	for _, p := range before {
		e := inv.entries[p]
		cur, ok := now[p]
		if e.known {
			continue
		}
		if ok && unchanged(e.info, cur) {
			continue
		}
		st, err := inv.keep(j, e)
		if err != nil {
			j.note(fmt.Errorf("keeping the original of %s, changed by a command: %w", p, err))
			continue
		}
		j.note(j.add(p, st))
	}
	for _, p := range order {
		if _, ok := inv.entries[p]; ok {
			continue
		}
		if known, _ := j.knownBefore(p); !known {
			j.note(j.add(p, EntryState{Type: EntryAbsent}))
		}
	}
}

// unchanged reports whether an entry is the same before and after a command: the same inode
// with the same size, times and mode (any write moves ctime, which a command cannot set). For a
// directory only the inode and mode count: its entries are entries of their own.
func unchanged(a, b safefs.Info) bool {
	if !a.Same(b) || a.Mode != b.Mode {
		return false
	}
	if a.IsDir() {
		return true
	}
	return a.Size == b.Size && a.Mtime.Equal(b.Mtime) && a.Ctime.Equal(b.Ctime)
}
