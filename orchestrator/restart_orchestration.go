package orchestrator

import (
	_ "embed"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// ToolRestartOrchestration is the post-evaluation tool that restarts coordination with guidance.
const ToolRestartOrchestration = "restart_orchestration"

//go:embed restart_orchestration.md
var restartDescription string

type restartParams struct {
	Reason       string `json:"reason" required:"true" description:"Clear explanation of why the answer is insufficient (e.g. 'The task asked for two Beatles, but only John Lennon was described')."`
	Instructions string `json:"instructions" required:"true" description:"Detailed, actionable guidance for the agents' next attempt."`
}

var restartTool = tooldecl.New(tooldecl.Def[restartParams]{
	Name:        ToolRestartOrchestration,
	Description: restartDescription,
	Open:        true,
	Lenient:     true,
})

func restartSpec() backends.ToolSpec { return toolSpec(restartTool) }

// restartFeedback is what a restart_orchestration call tells the next attempt. MassGen takes
// what it can: arguments that do not bind are defaulted.
func restartFeedback(tc backends.ToolCall) *feedback {
	p, _ := restartTool.BindJSON(tc.Arguments)
	return &feedback{
		reason:       orDefault(shorten(p.Reason, maxReasonRunes), "No reason provided"),
		instructions: orDefault(shorten(p.Instructions, maxAnswerBytes), "No instructions provided"),
	}
}
