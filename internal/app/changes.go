package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/session"
)

// Change review: each turn's changes to context paths are journaled (changes.Journal, wired
// through the orchestrator into the final agent's tools), summed up at the end of the turn and
// kept in the session for `massgen diff` and `massgen undo`.

// newJournal starts the journal of turn t, started at started; its copies go to
// <.massgen>/trash/changes_<log folder>_turn<N>/ (private to agents). Its meta.json says which
// turn of which session it is, so that a run ending before the turn is saved leaves what the
// next start needs to save it as an interrupted turn (session.Recover).
func newJournal(st *runState, t *Turn, started time.Time) *changes.Journal {
	name := changes.JournalPrefix + filepath.Base(st.runDir) + "_turn" + strconv.Itoa(t.Number)
	j, err := changes.NewJournal(filepath.Join(st.cfg.Layout().Trash(), name), st.logger)
	if err != nil { // only for a relative .massgen, which configs never yield
		st.logger.Error("change journal", zap.Error(err))
		return nil
	}
	meta := session.JournalMeta{Run: filepath.Base(st.runDir), Turn: t.Number, Task: t.Task, Config: st.cfg.Source,
		ContextPaths: st.cfg.Orchestrator.ContextPaths, Started: started}
	for _, a := range st.cfg.Agents {
		meta.Agents = append(meta.Agents, a.ID)
	}
	if s := st.session; s != nil {
		meta.Sessions = s.store.Root()
		if s.cur != nil {
			meta.Session = s.cur.ID
		}
	}
	if err := j.SetMeta(meta); err != nil {
		st.logger.Error("change journal", zap.Error(err))
	}
	return j
}

// finishChanges finishes turn t's journal (once) and returns what the turn changed in context
// paths (nil when nothing was journaled).
func finishChanges(ctx context.Context, t *Turn) *changes.ChangeSet {
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
func changesNote(cs *changes.ChangeSet) string {
	files := cs.Files()
	if len(files) == 0 {
		return ""
	}
	return fmt.Sprintf("The turn changed %d file(s) in context paths before it stopped; their originals are kept in %s:\n%s",
		len(files), termtext.Line(cs.Dir), cs.Summary())
}

// incompleteRecord is the Not saved line of a turn whose record of changes is not whole.
func incompleteRecord(out *Outcome, t *Turn) {
	if cs := t.Changes; cs != nil && cs.Incomplete != "" {
		out.notSaved("the record of what turn %d changed in context paths is incomplete (`massgen undo` restores what it kept): %s", t.Number, cs.Incomplete)
	}
}

// recoverTurns saves as interrupted turns what runs that ended before saving their turn left in
// the project's change journals (session.Recover; the caller holds the project's run lock), and
// says so on w.
func recoverTurns(ctx context.Context, w io.Writer, trash string, logger *zap.Logger) {
	rec, err := session.Recover(ctx, trash, logger)
	for _, r := range rec {
		fmt.Fprintln(w, r.Describe())
	}
	if err != nil {
		fmt.Fprintf(w, "Warning: %s\n", termtext.Line(err.Error()))
	}
}
