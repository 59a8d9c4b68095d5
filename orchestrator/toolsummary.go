package orchestrator

import (
	"path/filepath"

	"github.com/massgen-go/massgen/internal/pathx"
)

// A tool call's summary for the user is its declaration's (tooldecl.Set.Summary over
// filesystem.Builtins, see run.callTool); shortPath is what the run gives it for paths.

// shortPath shows a path the agent gave relative to its workspace, or to its temp workspace
// (agent2/index.html: another agent's snapshot), when it lies there; other paths as given.
func (a *agent) shortPath(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	c := filepath.Clean(p)
	for _, root := range []string{a.workspace, a.tempDir} {
		if root == "" {
			continue
		}
		if root = filepath.Clean(root); c == root || !pathx.Within(c, root) {
			continue
		}
		if rel, err := filepath.Rel(root, c); err == nil {
			return rel
		}
	}
	return p
}
