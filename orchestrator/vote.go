package orchestrator

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// ToolVote is the workflow tool an agent votes for the best existing answer with.
const ToolVote = "vote"

//go:embed vote.md
var voteDescription string

type voteParams struct {
	AgentID string `json:"agent_id" required:"true" description:"The anonymous id of the agent whose answer is best."`
	Reason  string `json:"reason" required:"true" description:"Why that answer is best."`
}

var voteTool = tooldecl.New(tooldecl.Def[voteParams]{
	Name:        ToolVote,
	Description: voteDescription,
	Lenient:     true,
})

// voteSpec is vote as offered: agent_id is one of the anonymous ids with an answer.
func voteSpec(anons []string) backends.ToolSpec {
	s := toolSpec(voteTool)
	tooldecl.SetEnum(s.Parameters, "agent_id", anons)
	return s
}

// vote validates and commits a vote call: the problem to tell the model ("" when accepted), or
// errFinished or errVoteSetAside.
func (r *run) vote(o *owner, a *agent, p voteParams, bindErr error, answerAnons []string, single bool) (string, error) {
	if single {
		return "there is no vote with a single agent; call new_answer with your answer.", nil
	}
	if len(answerAnons) == 0 {
		return "there are no answers to vote for yet; call new_answer with your answer.", nil
	}
	if bindErr != nil {
		return fmt.Sprintf(`vote takes {"agent_id": one of %s, "reason": "..."}.`, strings.Join(answerAnons, ", ")), nil
	}
	known := false
	for _, id := range answerAnons {
		known = known || id == p.AgentID
	}
	if !known {
		// The id given is not echoed back: the reply names only valid anonymous ids.
		return fmt.Sprintf("agent_id is not an agent with an answer; vote for one of: %s.", strings.Join(answerAnons, ", ")), nil
	}
	// The reason goes into the final agent's prompt: a long one is cut, not refused.
	return workflowProblem(o.ask(votePosted{agent: a.index, target: p.AgentID, reason: shorten(p.Reason, maxReasonRunes)}))
}
