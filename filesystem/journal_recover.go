package filesystem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/pathx"
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
