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
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/safefs"
)

// Recovering the record of a turn whose run ended before a session kept it (killed, or the
// session could not be saved). Every journal lives in a folder changes_* of the trash; the run
// marks it recorded (MarkRecorded) once a session keeps its change set. A folder without that
// mark is pending: RecoverJournal turns it into the turn's change set, from changes.json when
// the turn got to finish it, otherwise from journal.jsonl (each line synced before its change
// landed) with what stands at each path now as the state after the turn.

// JournalPrefix starts the name of every journal folder in the trash.
const JournalPrefix = "changes_"

// PendingJournal is a journal no session records yet.
type PendingJournal struct {
	Dir string
	// Meta is the turn's description as the run gave it (Journal.SetMeta; nil when none).
	Meta []byte
	// Finished says the turn finished its record (changes.json) before its session failed.
	Finished bool
	// LastChange is when the journal was last written.
	LastChange time.Time
}

// PendingJournals lists the journals under trashRoot that no session records, oldest first.
func PendingJournals(trashRoot string) ([]PendingJournal, error) {
	ents, err := os.ReadDir(trashRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var out []PendingJournal
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), JournalPrefix) {
			continue
		}
		dir := filepath.Join(trashRoot, e.Name())
		if _, err := os.Lstat(filepath.Join(dir, recordedFile)); err == nil {
			continue
		}
		p := PendingJournal{Dir: dir}
		if fi, err := os.Stat(filepath.Join(dir, changesFile)); err == nil {
			p.Finished, p.LastChange = true, fi.ModTime()
		} else if fi, err := os.Stat(filepath.Join(dir, journalLines)); err == nil {
			p.LastChange = fi.ModTime()
		} else {
			continue // a folder made for copies before any line: nothing changed
		}
		if b, err := os.ReadFile(filepath.Join(dir, journalMeta)); err == nil {
			p.Meta = b
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b PendingJournal) int {
		if c := a.LastChange.Compare(b.LastChange); c != 0 {
			return c
		}
		return strings.Compare(a.Dir, b.Dir)
	})
	return out, nil
}

// RecoverJournal returns the change set of the journal in dir: its changes.json when the turn
// finished it, otherwise one built from journal.jsonl (Recovered set), written to changes.json
// so a second recovery reads the same. A set with nothing in it leaves no folder behind.
func RecoverJournal(ctx context.Context, dir string, log *zap.Logger) (*ChangeSet, error) {
	if p := filepath.Join(dir, changesFile); fileExists(p) {
		return LoadChangeSet(p)
	}
	j, err := NewJournal(dir, log)
	if err != nil {
		return nil, err
	}
	j.replaying = true
	if err := j.replay(); err != nil {
		return nil, err
	}
	// A command was running when the run ended: what its inventory holds tells what it changed.
	for _, index := range j.inventories {
		if fileExists(index) {
			j.note(j.recoverInventory(ctx, index))
		}
	}
	for _, l := range j.intents {
		if known, _ := j.knownBefore(l.Path); known {
			continue
		}
		if _, err := os.Lstat(l.Trash); err != nil {
			continue // killed before the move: the entry was not deleted
		}
		j.note(j.fromTrash(l.Path, l.Trash))
	}
	j.recovered = true
	return j.finish(ctx)
}

// replay reads journal.jsonl into the journal. A last line cut short (the run was killed while
// writing it) is dropped: its change had not landed yet.
func (j *Journal) replay() error {
	raw, err := os.ReadFile(filepath.Join(j.dir, journalLines))
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	root := filepath.Dir(j.dir)
	inTrash := func(p string) bool {
		return filepath.IsAbs(p) && filepath.Clean(p) == p && pathx.Within(p, root) && p != root
	}
	lines := bytes.Split(raw, []byte("\n"))
	lines = lines[:len(lines)-1] // the part after the last newline: empty, or a line cut short
	for i, b := range lines {
		n := i + 1
		var l journalLine
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("journal: %s line %d: %w", filepath.Join(j.dir, journalLines), n, err)
		}
		if l.Inventory != "" {
			if !inTrash(l.Inventory) {
				return fmt.Errorf("journal: %s line %d: an inventory outside %s", filepath.Join(j.dir, journalLines), n, root)
			}
			j.inventories = append(j.inventories, l.Inventory)
			continue
		}
		switch {
		case !filepath.IsAbs(l.Path) || filepath.Clean(l.Path) != l.Path:
			return fmt.Errorf("journal: %s line %d: bad path %q", filepath.Join(j.dir, journalLines), n, l.Path)
		case l.Before.Kept != "" && !inTrash(l.Before.Kept), l.Trash != "" && !inTrash(l.Trash):
			return fmt.Errorf("journal: %s line %d: a copy outside %s", filepath.Join(j.dir, journalLines), n, root)
		case l.Trash != "":
			j.intents = append(j.intents, l)
		default:
			if _, ok := j.byPath[l.Path]; !ok {
				j.remember(l.Path, l.Before)
			}
		}
	}
	// New copies (the "after" states) must not reuse a number a copy already has.
	for _, sub := range []string{"originals", "after"} {
		ents, _ := os.ReadDir(filepath.Join(j.dir, sub))
		for _, e := range ents {
			if n, err := strconv.Atoi(strings.SplitN(e.Name(), ".", 2)[0]); err == nil && n > j.copies {
				j.copies = n
			}
		}
	}
	return nil
}

// MarkRecorded records in the journal folder dir that a session keeps its change set (what
// says where, as JSON): the journal is no longer pending.
func MarkRecorded(dir string, what any) error {
	b, err := json.MarshalIndent(what, "", "  ")
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := writeSynced(filepath.Join(dir, recordedFile), append(b, '\n')); err != nil {
		return fmt.Errorf("journal: marking %s recorded: %w", dir, err)
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// recoverInventory records what a command that was running when the run ended changed, from
// its inventory: every entry it held that the journal did not know yet, with its original (out
// of the blob) when the file's content or mode is not what it was; every entry now under the
// roots that it did not hold, as created. Finish then drops what ended as it began.
func (j *Journal) recoverInventory(ctx context.Context, index string) error {
	raw, err := os.ReadFile(index)
	if err != nil {
		return err
	}
	var si savedInventory
	if err := json.Unmarshal(raw, &si); err != nil {
		return fmt.Errorf("%s: %w", index, err)
	}
	root := filepath.Dir(j.dir)
	if !pathx.Within(si.Blob, root) {
		return fmt.Errorf("%s: a blob outside %s", index, root)
	}
	blob, err := os.Open(si.Blob)
	if err != nil {
		return err
	}
	defer blob.Close()
	held := map[string]bool{}
	for _, e := range si.Entries {
		held[e.Path] = true
		if !filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path {
			return fmt.Errorf("%s: bad path %q", index, e.Path)
		}
		if e.Known {
			continue
		}
		if known, absent := j.knownBefore(e.Path); known || absent {
			continue
		}
		st := e.Before
		if st.Type == EntryFile {
			sec := io.NewSectionReader(blob, e.Off, st.Size)
			h := sha256.New()
			if _, err := io.Copy(h, sec); err != nil {
				return err
			}
			st.SHA256 = hex.EncodeToString(h.Sum(nil))
			if cur, f := entryState(e.Path); f != nil {
				same := cur.Mode == st.Mode && cur.Size == st.Size && hashOf(f) == st.SHA256
				f.Close()
				if same {
					continue // untouched
				}
			}
			dst, err := j.newCopyPath("originals")
			if err != nil {
				return err
			}
			if _, _, err := copyHashed(io.NewSectionReader(blob, e.Off, st.Size), dst); err != nil {
				return err
			}
			st.Kept = dst
		}
		j.remember(e.Path, st)
	}
	skipped := func(p string) bool {
		for _, s := range si.Skipped {
			if pathx.Within(p, s) {
				return true
			}
		}
		return false
	}
	for _, r := range si.Roots {
		w, err := safefs.Resolve(r, false)
		if err != nil {
			continue
		}
		if !w.Exists || w.Path != r || !w.Info.IsDir() || skipped(r) {
			w.Close()
			continue
		}
		d, err := w.OpenDir()
		w.Close()
		if err != nil {
			continue
		}
		err = safefs.WalkTree(ctx, d, func(_ *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
			p := safefs.JoinRel(r, rel)
			switch {
			case skipped(p):
				return false, nil
			case held[p]:
				return e.Info.IsDir(), nil
			}
			if known, absent := j.knownBefore(p); !known && !absent {
				j.remember(p, EntryState{Type: EntryAbsent}) // made by the command
			}
			return false, nil // what is below a new directory is added by Finish
		})
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// hashOf is the SHA-256 of what r yields ("" when it cannot be read).
func hashOf(r io.Reader) string {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
