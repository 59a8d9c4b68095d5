package session

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/massgen-go/massgen/snapshots"
)

// workDir is the folder of a turn holding every agent's kept work, one folder per anonymous id.
const workDir = "agents"

// anonName is what an anonymous id must look like to name a folder.
var anonName = regexp.MustCompile(`^agent[0-9]+$`)

// copyWork copies each agent's snapshot into the turn folder being built (dir/agents/<anon>/)
// and returns the work as metadata.json lists it (snapshots relative to the turn folder).
func (ses *Session) copyWork(dir string, n int, work []AgentWork) ([]AgentWork, error) {
	var out []AgentWork
	for _, w := range work {
		if !anonName.MatchString(w.Anon) {
			return nil, fmt.Errorf("session: turn %d: agent %q has no usable anonymous id (%q)", n, w.Agent, w.Anon)
		}
		if w.Snapshot != "" {
			rel := filepath.Join(workDir, w.Anon)
			if err := snapshots.CopyTree(context.Background(), w.Snapshot, filepath.Join(dir, rel), ses.logger); err != nil {
				return nil, fmt.Errorf("session: copying %s's work into turn %d: %w", w.Agent, n, err)
			}
			w.Snapshot = rel
		}
		out = append(out, w)
	}
	return out, nil
}

// loadWork is a turn's work with its snapshots as paths inside the turn folder dir.
func loadWork(dir string, work []AgentWork) []AgentWork {
	out := make([]AgentWork, 0, len(work))
	for _, w := range work {
		if w.Snapshot != "" {
			if !filepath.IsLocal(w.Snapshot) { // metadata.json is the session's; still, stay inside
				w.Snapshot = ""
			} else {
				w.Snapshot = filepath.Join(dir, w.Snapshot)
			}
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
