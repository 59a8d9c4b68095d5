package changes

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/textdiff"
)

// Change review and undo. A Journal records, for one turn, what every entry of a writable
// context path was before the first change a tool made to it, and keeps the original: the tools
// call it before they replace, move or remove the entry, with the directory descriptor their
// walk holds (so what is kept is what the decision judged), and deletions are recorded with the
// trash slot they went to. Finish then records what each entry became. The journal lives under
// .massgen/trash/, which agents can neither read nor write.

// EntryType is what stands at a path.
type EntryType string

// The entry types a journal records.
const (
	EntryAbsent  EntryType = "absent"
	EntryFile    EntryType = "file"
	EntryDir     EntryType = "dir"
	EntrySymlink EntryType = "symlink"
)

// EntryState is what stood at a path at one moment.
type EntryState struct {
	Type   EntryType   `json:"type"`
	Size   int64       `json:"size,omitempty"`
	Mode   fs.FileMode `json:"mode,omitempty"` // permission bits
	SHA256 string      `json:"sha256,omitempty"`
	Target string      `json:"target,omitempty"` // a symlink's target
	// Kept is the absolute path of a copy of the file's content, under the trash ("" when none
	// was kept: too large to keep after the turn, or not a file).
	Kept string `json:"kept,omitempty"`
}

// same reports whether two states describe the same content (the copies kept do not matter).
func (s EntryState) same(o EntryState) bool {
	if s.Type != o.Type {
		return false
	}
	switch s.Type {
	case EntryFile:
		return s.SHA256 == o.SHA256 && s.Mode == o.Mode
	case EntrySymlink:
		return s.Target == o.Target
	case EntryDir:
		return s.Mode == 0 || o.Mode == 0 || s.Mode == o.Mode // 0: not recorded (older records)
	}
	return true
}

// unknown reports whether the state is a file whose content was not recorded (the journal could
// not read it as the turn left it): it cannot tell a later change.
func (s EntryState) unknown() bool { return s.Type == EntryFile && s.SHA256 == "" }

// ChangeRecord is one path a turn changed: before its first change and after the turn.
type ChangeRecord struct {
	Path   string     `json:"path"`
	Before EntryState `json:"before"`
	After  EntryState `json:"after"`
	// Added and Removed count lines (text files); Binary says they could not be counted.
	Added   int  `json:"added,omitempty"`
	Removed int  `json:"removed,omitempty"`
	Binary  bool `json:"binary,omitempty"`
}

// Op is what the turn did to the path, as the summary and --output json name it.
func (r ChangeRecord) Op() ChangeOp {
	switch {
	case r.Before.Type == EntryAbsent:
		return Created
	case r.After.Type == EntryAbsent:
		return Deleted
	}
	return Modified
}

// Journal records the changes of one turn to context paths. It is safe for concurrent use.
//
// It is durable: the journal's folder holds meta.json (what the caller says about the turn,
// SetMeta), journal.jsonl (one line per path, each synced before the change it describes lands)
// and the copies of the originals (synced before their line is written). A run killed at any
// point leaves a record RecoverJournal turns into the turn's change set; Finish writes that
// change set (changes.json) at the end of the turn, and MarkRecorded says a session keeps it.
type Journal struct {
	dir string
	log *zap.Logger

	mu      sync.Mutex
	meta    []byte // meta.json, written with the folder
	records []*ChangeRecord
	byPath  map[string]*ChangeRecord
	intents []journalLine // entries about to go to the trash (only a recovery reads them)
	// inventories are the indexes of command inventories named in the lines (recovery only).
	inventories []string
	copies      int
	// replaying: a recovery rebuilds the journal from its lines, which it does not write again;
	// recovered marks the change set so.
	replaying, recovered bool
	lines                *os.File // journal.jsonl (nil until the first change)
	batch                []string // copies to sync at endBatch (nil: not in a batch)
	broken               error    // a change that could not be recorded after it happened
	done                 *ChangeSet
}

// journalLine is one line of journal.jsonl: a path's state before its first change or, with
// Trash, an entry about to be moved to that trash slot's data (its original is kept there).
type journalLine struct {
	Path   string     `json:"path,omitempty"`
	Before EntryState `json:"before"`
	Trash  string     `json:"trash,omitempty"`
	// Inventory names the index of a command's inventory, kept until the command's changes
	// are journaled (journal_command.go).
	Inventory string `json:"inventory,omitempty"`
}

// Files of a journal's folder.
const (
	journalLines = "journal.jsonl"
	journalMeta  = "meta.json"
	recordedFile = "recorded.json"
)

// NewJournal returns a journal keeping its copies in dir (absolute, normally
// <.massgen>/trash/<session>_turn_<N>); dir is created on the first change only.
func NewJournal(dir string, log *zap.Logger) (*Journal, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("journal: %q is not an absolute path", dir)
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Journal{dir: filepath.Clean(dir), log: log, byPath: map[string]*ChangeRecord{}}, nil
}

// Dir is the journal's folder.
func (j *Journal) Dir() string { return j.dir }

// SetMeta is what the journal says about its turn (meta.json, for a recovery): the caller's
// own description, as JSON. Call it before the turn changes anything.
func (j *Journal) SetMeta(meta any) error {
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.meta = append(b, '\n')
	return nil
}

// newCopyPath returns a fresh path for a kept copy under sub ("originals" or "after").
func (j *Journal) newCopyPath(sub string) (string, error) {
	d := filepath.Join(j.dir, sub)
	if _, err := os.Lstat(d); err != nil {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("journal: %w", err)
		}
		if err := syncDir(j.dir); err != nil {
			return "", fmt.Errorf("journal: %w", err)
		}
	}
	j.copies++
	return filepath.Join(d, strconv.Itoa(j.copies)), nil
}

// open makes the journal's folder on its first change: meta.json, then journal.jsonl, both
// synced with the folder (caller holds mu).
func (j *Journal) open() error {
	if j.lines != nil {
		return nil
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if j.meta != nil {
		if err := writeSynced(filepath.Join(j.dir, journalMeta), j.meta); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	f, err := os.OpenFile(filepath.Join(j.dir, journalLines), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := syncDir(j.dir); err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	if err := syncDir(filepath.Dir(j.dir)); err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	j.lines = f
	return nil
}

// writeLine appends one line to journal.jsonl and syncs it: once it returns, a recovery knows
// the change it describes (caller holds mu).
func (j *Journal) writeLine(l journalLine) error {
	if err := j.open(); err != nil {
		return err
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := j.lines.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if j.batch != nil {
		return nil // synced by endBatch, before the change lands
	}
	if err := j.lines.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// beginBatch starts recording many paths at once (a directory tree, what a command changed):
// their copies and lines are synced together by endBatch, which the caller calls before the
// change they describe lands (caller holds mu).
func (j *Journal) beginBatch() { j.batch = []string{} }

// endBatch syncs the copies and lines written since beginBatch (caller holds mu).
func (j *Journal) endBatch() error {
	copies := j.batch
	j.batch = nil
	dirs := map[string]bool{}
	for _, c := range copies {
		f, err := os.Open(c)
		if err == nil {
			err = f.Sync()
			f.Close()
		}
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		dirs[filepath.Dir(c)] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	if j.lines != nil {
		if err := j.lines.Sync(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	return nil
}

// keepCopy copies src to the new kept copy dst: synced at once, or by endBatch in a batch
// (caller holds mu).
func (j *Journal) keepCopy(src io.Reader, dst string) (string, int64, error) {
	if j.batch == nil {
		return copyHashed(src, dst)
	}
	sum, n, err := copyTo(src, dst, false)
	if err == nil {
		j.batch = append(j.batch, dst)
	}
	return sum, n, err
}

// add records path's state before its first change (caller holds mu).
func (j *Journal) add(path string, before EntryState) error {
	if j.replaying {
		j.remember(path, before)
		return nil
	}
	if err := j.writeLine(journalLine{Path: path, Before: before}); err != nil {
		return err
	}
	j.remember(path, before)
	return nil
}

// remember adds a record already in journal.jsonl.
func (j *Journal) remember(path string, before EntryState) {
	r := &ChangeRecord{Path: path, Before: before}
	j.records = append(j.records, r)
	j.byPath[path] = r
}

// knownBefore reports whether path's state before the turn is already known: it was recorded,
// or an ancestor was recorded as absent (everything below a created directory was absent too).
func (j *Journal) knownBefore(path string) (known, absent bool) {
	if _, ok := j.byPath[path]; ok {
		return true, false
	}
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		if r, ok := j.byPath[p]; ok && r.Before.Type == EntryAbsent {
			return false, true
		}
		if p == filepath.Dir(p) {
			return false, false
		}
	}
}

// KeepOriginal records what the entry name of dir (canonical path p) is before a tool changes
// it, and keeps a copy of it: a file's content, a link's target, a directory's whole tree
// (walked through descriptors). An entry whose original cannot be kept must not be changed: the
// caller fails the call.
func (j *Journal) KeepOriginal(ctx context.Context, dir *safefs.Dir, name, p string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	known, absent := j.knownBefore(p)
	if known {
		return nil
	}
	if absent {
		return j.add(p, EntryState{Type: EntryAbsent})
	}
	info, err := dir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return j.add(p, EntryState{Type: EntryAbsent})
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		st, err := j.keepEntry(dir, name, p, info)
		if err != nil {
			return err
		}
		return j.add(p, st)
	}
	// A directory (moved away): the directory and everything below it, each as it is now, all
	// synced before the move.
	j.beginBatch()
	err = j.keepTree(ctx, dir, name, p, info)
	if serr := j.endBatch(); err == nil {
		err = serr
	}
	return err
}

// keepTree records the directory name of dir (canonical path p) and everything below it
// (caller holds mu, in a batch).
func (j *Journal) keepTree(ctx context.Context, dir *safefs.Dir, name, p string, info safefs.Info) error {
	if err := j.add(p, EntryState{Type: EntryDir, Mode: info.Mode.Perm()}); err != nil {
		return err
	}
	sub, err := dir.SubSame(name, info)
	if err != nil {
		return err
	}
	defer sub.Close()
	return safefs.WalkTree(ctx, sub, func(d *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		ep := safefs.JoinRel(p, rel)
		if _, ok := j.byPath[ep]; ok {
			return e.Info.IsDir(), nil
		}
		if e.Info.IsDir() {
			return true, j.add(ep, EntryState{Type: EntryDir, Mode: e.Info.Mode.Perm()})
		}
		st, err := j.keepEntry(d, e.Name, ep, e.Info)
		if err != nil {
			return false, err
		}
		return false, j.add(ep, st)
	})
}

// keepEntry keeps a file's content (read through the held directory, and only if it is still
// the entry described by info) or a link's target.
func (j *Journal) keepEntry(dir *safefs.Dir, name, p string, info safefs.Info) (EntryState, error) {
	switch {
	case info.IsLink():
		target, err := dir.Readlink(name)
		if err != nil {
			return EntryState{}, err
		}
		return EntryState{Type: EntrySymlink, Target: target}, nil
	case info.IsRegular():
		f, fi, err := dir.OpenFileSame(name, info)
		if err != nil {
			return EntryState{}, err
		}
		defer f.Close()
		dst, err := j.newCopyPath("originals")
		if err != nil {
			return EntryState{}, err
		}
		sum, n, err := j.keepCopy(f, dst)
		if err != nil {
			return EntryState{}, fmt.Errorf("keeping the original of %s: %w", p, err)
		}
		return EntryState{Type: EntryFile, Size: n, Mode: fi.Mode.Perm(), SHA256: sum, Kept: dst}, nil
	}
	return EntryState{}, fmt.Errorf("%s is a special file (%s): massgen cannot keep its original, so it does not change it", p, safefs.TypeName(info.Mode))
}

// copyHashed copies src to the new file dst (0600: the trash is massgen's), synced with its
// folder before it returns (an original must be on disk before the line naming it), and returns
// the content's SHA-256 and size.
func copyHashed(src io.Reader, dst string) (string, int64, error) {
	return copyTo(src, dst, true)
}

// copyTo is copyHashed; sync false leaves the copy to the page cache (the "after" copies: a
// killed run never loses them, a power cut could, and they only serve the diff).
func copyTo(src io.Reader, dst string, sync bool) (string, int64, error) {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), src)
	if err == nil && sync {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && sync {
		err = syncDir(filepath.Dir(dst))
	}
	if err != nil {
		os.Remove(dst)
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// writeSynced writes data to path through a temp file in its folder, synced and renamed over
// it, and syncs the folder.
func writeSynced(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes the entries just made in dir durable (a no-op where folders cannot be synced).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// Created records that a tool made the directory p, which did not exist.
func (j *Journal) Created(p string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if known, _ := j.knownBefore(p); known {
		return
	}
	j.note(j.add(p, EntryState{Type: EntryAbsent}))
}

// AboutToTrash records, before the move, that the entry p goes to the trash slot whose data is
// data: a run killed after the move still has the record (a recovery reads the slot). A
// deletion that cannot be recorded must not happen: the caller fails the call.
func (j *Journal) AboutToTrash(p, data string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if known, absent := j.knownBefore(p); known || absent {
		return nil
	}
	l := journalLine{Path: p, Trash: data}
	if err := j.writeLine(l); err != nil {
		return err
	}
	j.intents = append(j.intents, l)
	return nil
}

// Trashed records the entry p a tool moved to the trash: data is its copy there (a file, a link
// or a whole tree), which is the original undo puts back. The trash is massgen's own folder,
// which agents cannot reach, so it is walked by path.
func (j *Journal) Trashed(p, data string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.beginBatch()
	err := j.fromTrash(p, data)
	if serr := j.endBatch(); err == nil {
		err = serr
	}
	j.note(err)
}

// fromTrash records every entry of the trashed copy data as what stood at p before (caller
// holds mu).
func (j *Journal) fromTrash(p, data string) error {
	return filepath.WalkDir(data, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ep := p
		if q != data {
			rel, _ := filepath.Rel(data, q)
			ep = p + string(filepath.Separator) + rel
		}
		known, absent := j.knownBefore(ep)
		switch {
		case known:
			return nil
		case absent: // below a directory the turn made: it did not exist before either
			return j.add(ep, EntryState{Type: EntryAbsent})
		}
		fi, err := os.Lstat(q)
		if err != nil {
			return err
		}
		st := EntryState{Mode: fi.Mode().Perm()}
		switch {
		case fi.IsDir():
			st.Type = EntryDir
		case fi.Mode()&fs.ModeSymlink != 0:
			st = EntryState{Type: EntrySymlink}
			if st.Target, err = os.Readlink(q); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			sum, err := hashFile(q)
			if err != nil {
				return err
			}
			st.Type, st.Size, st.SHA256, st.Kept = EntryFile, fi.Size(), sum, q
		default:
			return nil
		}
		return j.add(ep, st)
	})
}

// note keeps the first failure to record a change that already happened: Finish reports it.
func (j *Journal) note(err error) {
	if err != nil && j.broken == nil {
		j.broken = err
		j.log.Error("change journal incomplete", zap.Error(err))
	}
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// changesFile is the journal's result, written by Finish.
const changesFile = "changes.json"

// Finish records what every journaled path is now, adds what was created below new directories,
// drops paths that ended as they began, counts lines, and writes the change set to
// <dir>/changes.json. A journal that recorded nothing returns an empty set and leaves nothing.
// Every failure to keep the record (an "after" copy, a file that cannot be read) makes the set
// Incomplete, with what was kept still usable; an error means changes.json was not written.
func (j *Journal) Finish(ctx context.Context) (*ChangeSet, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.done != nil {
		return j.done, nil
	}
	cs, err := j.finish(ctx)
	if err == nil {
		j.done = cs
	}
	return cs, err
}

func (j *Journal) finish(ctx context.Context) (*ChangeSet, error) {
	if j.lines != nil {
		j.lines.Close()
		j.lines = nil
	}
	cs := &ChangeSet{Version: 1, Dir: j.dir, TrashRoot: filepath.Dir(j.dir), Recovered: j.recovered}
	for i := 0; i < len(j.records); i++ {
		r := j.records[i]
		var after []byte
		r.After, after = j.stateNow(r.Path)
		if r.Before.Type == EntryAbsent && r.After.Type == EntryDir {
			j.addCreatedBelow(ctx, r.Path)
		}
		if !r.Before.same(r.After) {
			countLines(r, after)
		}
	}
	for _, r := range j.records {
		if !r.Before.same(r.After) {
			cs.Records = append(cs.Records, *r)
		}
	}
	if j.broken != nil { // only now: the "after" states above may have failed to be kept too
		cs.Incomplete = j.broken.Error()
	}
	if len(cs.Records) == 0 && cs.Incomplete == "" {
		// Nothing changed in the end: the originals kept are no one's record.
		if err := os.RemoveAll(j.dir); err != nil {
			j.log.Warn("removing an empty change journal", zap.String("dir", j.dir), zap.Error(err))
		}
		return cs, nil
	}
	b, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return cs, fmt.Errorf("journal: %w", err)
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return cs, fmt.Errorf("journal: %w", err)
	}
	if err := writeSynced(filepath.Join(j.dir, changesFile), append(b, '\n')); err != nil {
		return cs, fmt.Errorf("journal: writing %s: %w", filepath.Join(j.dir, changesFile), err)
	}
	return cs, nil
}

// addCreatedBelow records every entry below the new directory p (moved or copied in whole) as
// created, through descriptors.
func (j *Journal) addCreatedBelow(ctx context.Context, p string) {
	w, err := safefs.Resolve(p, false)
	if err != nil {
		return
	}
	defer w.Close()
	if w.Path != p || !w.Exists || !w.Info.IsDir() {
		return
	}
	d, err := w.OpenDir()
	if err != nil {
		return
	}
	defer d.Close()
	_ = safefs.WalkTree(ctx, d, func(_ *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		ep := safefs.JoinRel(p, rel)
		if _, ok := j.byPath[ep]; !ok {
			j.remember(ep, EntryState{Type: EntryAbsent}) // in changes.json: the journal's lines are closed
		}
		return e.Info.IsDir(), nil
	})
}

// stateNow is what stands at path now (without following a link at the end, and absent when
// the path now leads elsewhere through a link); a file's content is hashed, and kept under
// after/ when it is small enough to diff. For such a file it also returns the content (for the
// line counts, even when the copy could not be kept). A file that cannot be read is recorded
// without its hash (unknown: undo cannot tell later changes to it) and the set is incomplete.
func (j *Journal) stateNow(path string) (EntryState, []byte) {
	st, f := entryState(path)
	if f == nil {
		return st, nil
	}
	defer f.Close()
	h := sha256.New()
	if st.Size > textdiff.MaxBytes { // too large to diff: its hash is enough to tell later changes
		if _, err := io.Copy(h, f); err != nil {
			j.note(fmt.Errorf("reading %s as the turn left it: %w", path, err))
			return st, nil
		}
		st.SHA256 = hex.EncodeToString(h.Sum(nil))
		return st, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, textdiff.MaxBytes+1))
	if err != nil {
		j.note(fmt.Errorf("reading %s as the turn left it: %w", path, err))
		return st, nil
	}
	h.Write(data)
	st.SHA256, st.Size = hex.EncodeToString(h.Sum(nil)), int64(len(data))
	dst, err := j.newCopyPath("after")
	if err == nil {
		_, _, err = copyTo(bytes.NewReader(data), dst, false)
	}
	if err != nil {
		j.note(fmt.Errorf("keeping %s as the turn left it: %w", path, err))
		return st, data
	}
	st.Kept = dst
	return st, data
}

// entryState describes what stands at path now; for a regular file it also returns it opened
// (through the walk: a file swapped in meanwhile is not read), and the caller hashes it.
func entryState(path string) (EntryState, *os.File) {
	w, err := safefs.Resolve(path, true)
	if err != nil {
		return EntryState{Type: EntryAbsent}, nil
	}
	defer w.Close()
	if w.Path != path || !w.Exists {
		return EntryState{Type: EntryAbsent}, nil
	}
	switch {
	case w.Info.IsDir():
		return EntryState{Type: EntryDir, Mode: w.Info.Mode.Perm()}, nil
	case w.Info.IsLink():
		target, err := w.Dir.Readlink(w.Name)
		if err != nil {
			return EntryState{Type: EntryAbsent}, nil
		}
		return EntryState{Type: EntrySymlink, Target: target}, nil
	case w.Info.IsRegular():
		f, fi, err := w.OpenFile()
		if err != nil {
			return EntryState{Type: EntryAbsent}, nil
		}
		return EntryState{Type: EntryFile, Size: fi.Size, Mode: fi.Mode.Perm()}, f
	}
	return EntryState{Type: EntryAbsent}, nil
}

// countLines fills Added/Removed (or Binary) from the copy kept before and the content after
// (read at the end of the turn; nil: from the copy kept after).
func countLines(r *ChangeRecord, afterData []byte) {
	if r.Before.Type == EntryDir || r.After.Type == EntryDir {
		return
	}
	before, okB := textOf(r.Before)
	after, okA := textOf(r.After)
	if afterData != nil && r.After.Type == EntryFile {
		after, okA = string(afterData), !textdiff.Binary(afterData)
	}
	if !okB || !okA {
		r.Binary = true
		return
	}
	_, r.Added, r.Removed = textdiff.Unified("a", "b", before, after, 0)
}

// textOf is a state's text for diffs: "" for absent entries and links, the kept copy of a text
// file; ok is false for binary files and files not kept.
func textOf(s EntryState) (string, bool) {
	switch s.Type {
	case EntryAbsent, EntryDir:
		return "", true
	case EntrySymlink:
		return "", true
	}
	if s.Kept == "" || s.Size > textdiff.MaxBytes {
		return "", false
	}
	b, err := os.ReadFile(s.Kept)
	if err != nil {
		return "", false
	}
	if textdiff.Binary(b) {
		return "", false
	}
	return string(b), true
}

// within reports whether a kept copy lies in the change set's trash (a change set names its
// copies; a tampered one must not make undo read or restore anything else).
func (cs *ChangeSet) within(p string) bool {
	return cs.TrashRoot != "" && filepath.IsAbs(p) && filepath.Clean(p) == p && pathx.Within(p, cs.TrashRoot) && p != cs.TrashRoot
}
