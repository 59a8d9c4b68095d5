package orchestrator

import (
	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// The workflow tools (new_answer, vote, submit, restart_orchestration, submit_checklist) are
// declared one file each, with the kit massgen's own file tools use (internal/tooldecl): typed
// parameters, the description embedded from <name>.md, the handler. The orchestrator, not the
// Toolset, runs them: they are offered by phase and left out of the tool loop.

// toolSpec is a declared tool as a backend offers it.
func toolSpec(d tooldecl.Tool) backends.ToolSpec {
	return backends.ToolSpec{Name: d.Name(), Description: d.Description(), Parameters: d.Schema()}
}
