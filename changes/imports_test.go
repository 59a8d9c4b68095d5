package changes

import (
	"testing"

	"github.com/massgen-go/massgen/internal/testing/deps"
)

// TestImports: the change record knows nothing of the tools that change files, nor of the run
// that asks them to: filesystem calls it (Recorder), never the other way round, on any system
// massgen builds for. A move back (a method on the Toolset) closes the cycle this test guards.
func TestImports(t *testing.T) {
	deps.Forbid(t, "changes", []string{"filesystem", "orchestrator", "permissions", "internal/agentenv", "internal/app", "session", "display", "cmd"})
}
