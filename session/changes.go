package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
)

// What a turn changed in context paths (turn_N/changes.json, from changes.Journal), whether
// it was undone (turn_N/undone.json), and what a resumed session runs with.

const (
	changesFile = "changes.json"
	undoneFile  = "undone.json"
)

// writeChanges writes cs into the turn folder being built; it returns the file's name ("" when
// the turn changed nothing).
func writeChanges(dir string, cs *changes.ChangeSet) (string, error) {
	if cs == nil || (len(cs.Records) == 0 && cs.Incomplete == "") {
		return "", nil
	}
	raw, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, changesFile), append(raw, '\n')); err != nil {
		return "", err
	}
	return changesFile, nil
}

// loadChanges fills a loaded turn's ChangesFile and Undone.
func loadChanges(dir string, md metadata, t *Turn) {
	if md.Changes != "" {
		t.ChangesFile = filepath.Join(dir, changesFile)
	}
	raw, err := os.ReadFile(filepath.Join(dir, undoneFile))
	if err != nil {
		return
	}
	var u struct {
		At time.Time `json:"undone_at"`
	}
	if json.Unmarshal(raw, &u) == nil {
		t.Undone = u.At
	}
}

// Turn returns turn n (1-based), or the last one when n is 0.
func (ses *Session) Turn(n int) (Turn, int, error) {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if len(ses.turns) == 0 {
		return Turn{}, 0, fmt.Errorf("session %s has no turns", ses.ID)
	}
	if n == 0 {
		n = len(ses.turns)
	}
	if n < 1 || n > len(ses.turns) {
		return Turn{}, 0, fmt.Errorf("session %s has turns 1 to %d, not %d", ses.ID, len(ses.turns), n)
	}
	return ses.turns[n-1], n, nil
}

// Changes loads what turn n (0: the last) changed in context paths; nil when it changed
// nothing.
func (ses *Session) Changes(n int) (*changes.ChangeSet, int, error) {
	t, n, err := ses.Turn(n)
	if err != nil {
		return nil, 0, err
	}
	if t.ChangesFile == "" {
		return nil, n, nil
	}
	cs, err := changes.LoadChangeSet(t.ChangesFile)
	if err != nil {
		return nil, n, fmt.Errorf("session: %w", err)
	}
	return cs, n, nil
}

// MarkUndone records that turn n's changes were put back, with undo's report.
func (ses *Session) MarkUndone(n int, at time.Time, report any) error {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if n < 1 || n > len(ses.turns) {
		return fmt.Errorf("session %s: no turn %d", ses.ID, n)
	}
	raw, err := json.MarshalIndent(map[string]any{"undone_at": at, "report": report}, "", "  ")
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	dir := filepath.Join(ses.Dir, fmt.Sprintf("turn_%d", n))
	if err := writeFileAtomic(filepath.Join(dir, undoneFile), append(raw, '\n')); err != nil {
		return err
	}
	ses.turns[n-1].Undone = at
	return nil
}

// ErrNoResumeInfo is returned by Resume for a session saved before turns recorded their config.
var ErrNoResumeInfo = errors.New("the session does not record its config (saved by an older massgen)")

// Resume is what the session's last turn ran with: the config and the context paths (a copy).
func (ses *Session) Resume() (config string, contextPaths []configs.ContextPath, err error) {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if len(ses.turns) == 0 {
		return "", nil, fmt.Errorf("session %s has no turns", ses.ID)
	}
	last := ses.turns[len(ses.turns)-1]
	if last.Config == "" {
		return "", nil, ErrNoResumeInfo
	}
	cps := make([]configs.ContextPath, len(last.ContextPaths))
	for i, cp := range last.ContextPaths {
		cp.ProtectedPaths = slices.Clone(cp.ProtectedPaths)
		cps[i] = cp
	}
	return last.Config, cps, nil
}

// Exists reports whether the sessions folder root exists (listing commands do not create it).
func Exists(root string) bool {
	fi, err := os.Stat(root)
	return err == nil && fi.IsDir() || err != nil && !errors.Is(err, fs.ErrNotExist)
}

// ErrNoChanges is returned by LatestChange when no turn changed anything in context paths.
var ErrNoChanges = errors.New("no turn changed files in context paths")

// ErrAllUndone is returned by LatestChange with pending when every turn that changed files in
// context paths is undone; the session and turn returned with it are the latest of those.
var ErrAllUndone = errors.New("every turn that changed files in context paths is undone")

// LatestChange finds the latest turn that changed files in context paths (it has a
// changes.json; interrupted or not): of the session id, or of every session of the store when id
// is "". With pending, only a turn not undone counts (undo steps back turn by turn); when every
// one is undone it returns the latest with ErrAllUndone. Latest is by the turn's end (its start
// when it has none), so a turn recovered later into an older session is still found by when it
// happened.
func (s *Store) LatestChange(id string, pending bool) (*Session, int, error) {
	ids := []string{id}
	if id == "" {
		var err error
		if ids, err = s.ids(); err != nil {
			return nil, 0, err
		}
	}
	type found struct {
		ses *Session
		n   int
		at  time.Time
	}
	var best, bestPending found
	for _, sid := range ids {
		ses, err := s.Get(sid)
		if err != nil {
			if id != "" {
				return nil, 0, err
			}
			s.logger.Warn("skipping an unreadable session", zap.String("session", sid), zap.Error(err))
			continue
		}
		for i, t := range ses.Turns() {
			if t.ChangesFile == "" {
				continue
			}
			at := t.Ended
			if at.IsZero() {
				at = t.Started
			}
			if best.ses == nil || !at.Before(best.at) {
				best = found{ses, i + 1, at}
			}
			if t.Undone.IsZero() && (bestPending.ses == nil || !at.Before(bestPending.at)) {
				bestPending = found{ses, i + 1, at}
			}
		}
	}
	switch {
	case best.ses == nil:
		return nil, 0, ErrNoChanges
	case !pending:
		return best.ses, best.n, nil
	case bestPending.ses == nil:
		return best.ses, best.n, ErrAllUndone
	}
	return bestPending.ses, bestPending.n, nil
}
