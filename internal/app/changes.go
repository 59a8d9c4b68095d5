package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/termtext"
)

// Change review: each turn's changes to context paths are journaled (filesystem.Journal, wired
// through the orchestrator into the final agent's tools), summed up at the end of the turn and
// kept in the session for `massgen diff` and `massgen undo`.

// newJournal starts the journal of turn t; its copies go to
// <.massgen>/trash/changes_<log folder>_turn<N>/ (private to agents).
func newJournal(st *runState, t *Turn) *filesystem.Journal {
	name := "changes_" + filepath.Base(st.runDir) + "_turn" + strconv.Itoa(t.Number)
	j, err := filesystem.NewJournal(filepath.Join(st.cfg.Layout().Trash(), name), st.logger)
	if err != nil { // only for a relative .massgen, which configs never yield
		st.logger.Error("change journal", zap.Error(err))
		return nil
	}
	return j
}

// finishChanges finishes turn t's journal (once) and returns what the turn changed in context
// paths (nil when nothing was journaled).
func finishChanges(ctx context.Context, t *Turn) *filesystem.ChangeSet {
	if t.Changes != nil || t.Journal == nil {
		return t.Changes
	}
	cs, err := t.Journal.Finish(context.WithoutCancel(ctx))
	if err != nil {
		if t.Logger != nil {
			t.Logger.Error("change journal", zap.Error(err))
		}
		if cs != nil && cs.Incomplete == "" {
			cs.Incomplete = err.Error()
		}
	}
	t.Changes = cs
	return cs
}

// changesNote is what a turn that failed tells about the changes it made before it stopped.
func changesNote(cs *filesystem.ChangeSet) string {
	files := cs.Files()
	if len(files) == 0 {
		return ""
	}
	return fmt.Sprintf("The turn changed %d file(s) in context paths before it stopped; their originals are kept in %s:\n%s",
		len(files), termtext.Line(cs.Dir), cs.Summary())
}
