package orchestrator

import (
	"context"
	_ "embed"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// ToolNewAnswer is the workflow tool an agent posts its answer with.
const ToolNewAnswer = "new_answer"

//go:embed new_answer.md
var newAnswerDescription string

type newAnswerParams struct {
	Content *string `json:"content" required:"true" description:"Your complete answer."`
}

var newAnswerTool = tooldecl.New(tooldecl.Def[newAnswerParams]{
	Name:        ToolNewAnswer,
	Description: newAnswerDescription,
	Lenient:     true,
})

func newAnswerSpec() backends.ToolSpec { return toolSpec(newAnswerTool) }

// newAnswer validates and commits a new_answer call: the problem to tell the model ("" when
// accepted), or errFinished.
func (r *run) newAnswer(o *owner, a *agent, p newAnswerParams, bindErr error) (string, error) {
	if bindErr != nil || p.Content == nil {
		return `new_answer takes {"content": "<your complete answer>"}.`, nil
	}
	// The snapshot is taken before the answer counts, so every agent shown the answer also sees
	// its files; a first cheap check avoids snapshotting answers that will be refused.
	if problem, err := workflowProblem(o.ask(answerCheck{agent: a.index, text: *p.Content})); problem != "" || err != nil {
		return problem, err
	}
	if a.workspace != "" {
		if _, err := r.store.Save(context.Background(), a.id, a.workspace, "answer"); err != nil {
			r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Phase: PhaseCoordination, Text: "saving the answer snapshot: " + err.Error()})
		}
	}
	return workflowProblem(o.ask(answerPosted{agent: a.index, text: *p.Content, at: time.Now()}))
}
