package permissions

import (
	"testing"

	"github.com/massgen-go/massgen/internal/testing/deps"
)

// TestEngineImports: the engine decides from a Spec and stat/readlink only. Building the Spec
// from the config (internal/agentenv/permconfig), the side effects around a decision (asks,
// hooks, the audit log: permissions/guard) and the tools (filesystem) live outside it, and it
// imports none of them, on any system massgen builds for.
func TestEngineImports(t *testing.T) {
	deps.Forbid(t, "permissions", []string{"configs", "filesystem", "internal/agentenv", "permissions/guard", "permissions/hooks",
		"permissions/audit", "permissions/trust"})
}
