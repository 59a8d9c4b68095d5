package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
)

// Interrupted turns. A run gives each turn's change journal a JournalMeta (the journal's
// meta.json) before the turn changes anything, and marks the journal recorded once the turn is
// saved. A journal left unmarked (the run was killed, or its session could not be written) is
// recovered by the next massgen start in the project, or by `massgen undo`: Recover saves it as
// an interrupted turn of the session the run was writing (a new one when it had none yet).

// JournalMeta is what a run says about a turn in its change journal.
type JournalMeta struct {
	Sessions     string                `json:"sessions"`          // the sessions folder (absolute)
	Session      string                `json:"session,omitempty"` // the session the turn continues ("": a new one)
	Run          string                `json:"run"`               // the run's log folder
	Turn         int                   `json:"turn"`              // the turn's number in the run
	Task         string                `json:"task"`
	Agents       []string              `json:"agents"`
	Config       string                `json:"config,omitempty"`
	ContextPaths []configs.ContextPath `json:"context_paths"`
	Started      time.Time             `json:"started"`
}

// Recorded is what a journal's recorded.json says: the session and turn keeping its changes.
type Recorded struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
}

// MarkRecorded says in the journal of cs that turn n of ses keeps its change set (no-op when the
// turn changed nothing: no journal folder is left).
func MarkRecorded(cs *changes.ChangeSet, ses *Session, n int) error {
	if cs == nil || cs.Dir == "" {
		return nil
	}
	if _, err := os.Stat(cs.Dir); err != nil {
		return nil
	}
	return changes.MarkRecorded(cs.Dir, Recorded{Session: ses.ID, Turn: n})
}

// RecoveredTurn is an interrupted turn Recover saved.
type RecoveredTurn struct {
	Session string
	Turn    int
	Run     string
	Started time.Time
	Files   int    // files it changed
	Journal string // its journal's folder
}

// Recover saves, as interrupted turns, the turns whose journals under trashRoot no session keeps
// yet, oldest first. A journal without a meta.json (written by an older massgen) is left alone.
// Failures are joined in the error; the turns recovered before are returned all the same.
func Recover(ctx context.Context, trashRoot string, logger *zap.Logger) ([]RecoveredTurn, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	pending, err := changes.PendingJournals(trashRoot)
	if err != nil {
		return nil, err
	}
	var out []RecoveredTurn
	var errs []error
	for _, p := range pending {
		if p.Meta == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r, err := recoverOne(ctx, p, logger)
		if err != nil {
			logger.Error("recovering an interrupted turn", zap.String("journal", p.Dir), zap.Error(err))
			errs = append(errs, fmt.Errorf("recovering the turn of %s: %w", p.Dir, err))
			continue
		}
		if r != nil {
			logger.Info("recovered an interrupted turn", zap.String("journal", p.Dir), zap.String("session", r.Session), zap.Int("turn", r.Turn))
			out = append(out, *r)
		}
	}
	return out, errors.Join(errs...)
}

func recoverOne(ctx context.Context, p changes.PendingJournal, logger *zap.Logger) (*RecoveredTurn, error) {
	var m JournalMeta
	if err := json.Unmarshal(p.Meta, &m); err != nil {
		return nil, fmt.Errorf("meta.json: %w", err)
	}
	if !filepath.IsAbs(m.Sessions) {
		return nil, fmt.Errorf("meta.json: sessions folder %q is not absolute", m.Sessions)
	}
	store, err := OpenWithLogger(m.Sessions, logger)
	if err != nil {
		return nil, err
	}
	// A run killed between saving the turn and marking the journal: the turn is there already.
	if ses, n := store.keeping(p.Dir, m); ses != nil {
		return nil, changes.MarkRecorded(p.Dir, Recorded{Session: ses.ID, Turn: n})
	}
	cs, err := changes.RecoverJournal(ctx, p.Dir, logger)
	if err != nil {
		return nil, err
	}
	if len(cs.Records) == 0 && cs.Incomplete == "" {
		return nil, nil // nothing changed in the end (and the journal is gone)
	}
	var ses *Session
	if m.Session != "" {
		ses, err = store.Get(m.Session)
		if err != nil {
			logger.Warn("the interrupted turn's session is gone: a new one keeps it", zap.String("session", m.Session), zap.Error(err))
		}
	}
	if ses == nil {
		if ses, err = store.New(m.Started.Local()); err != nil {
			return nil, err
		}
	}
	t := Turn{Task: m.Task, Agents: m.Agents, Started: m.Started, Ended: p.LastChange,
		Config: m.Config, ContextPaths: m.ContextPaths, Changes: cs, Status: StatusInterrupted, Run: m.Run}
	if _, err := ses.SaveTurn(t); err != nil {
		return nil, err
	}
	n := len(ses.Turns())
	if err := MarkRecorded(cs, ses, n); err != nil {
		logger.Warn("marking the journal recorded", zap.Error(err)) // found by keeping() next time
	}
	return &RecoveredTurn{Session: ses.ID, Turn: n, Run: m.Run, Started: m.Started, Files: len(cs.Files()), Journal: p.Dir}, nil
}

// keeping finds the session turn whose changes.json is the journal dir's: among the session
// the run continued and those started since the turn began.
func (s *Store) keeping(dir string, m JournalMeta) (*Session, int) {
	ids, err := s.ids()
	if err != nil {
		return nil, 0
	}
	since := "session_" + m.Started.Local().Format(idLayout)
	for _, id := range ids {
		if id != m.Session && id < since {
			continue
		}
		ses, err := s.Get(id)
		if err != nil {
			continue
		}
		for i, t := range ses.Turns() {
			if t.ChangesFile == "" {
				continue
			}
			raw, err := os.ReadFile(t.ChangesFile)
			if err != nil {
				continue
			}
			var cs struct {
				Dir string `json:"dir"`
			}
			if json.Unmarshal(raw, &cs) == nil && cs.Dir == dir {
				return ses, i + 1
			}
		}
	}
	return nil, 0
}

// Describe is the line that tells the user about the recovered turn.
func (r RecoveredTurn) Describe() string {
	return fmt.Sprintf("Recovered turn %d of session %s: run %s (%s) ended before saving it; it changed %d file(s) in context paths (review with `massgen diff --session %s --turn %d`, take back with `massgen undo`).",
		r.Turn, r.Session, r.Run, r.Started.Local().Format("2006-01-02 15:04:05"), r.Files, r.Session, r.Turn)
}
