package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
)

type outcomeKind int

const (
	outDone      outcomeKind = iota // answered or voted (or its vote was set aside)
	outRestart                      // a pending restart: at a step, or when its grace ran out
	outStopped                      // gave up; reason says why
	outCancelled                    // ctx ended (restart grace, timeout or Ctrl-C: the caller tells)
)

type outcome struct {
	kind   outcomeKind
	reason string
	budget bool // stopped: its budget was spent
}

// execute runs one coordination execution of agent a, the turn t the owner started: model calls
// and tool calls until a valid workflow call (new_answer or vote), a pending restart, a stop or
// cancellation.
func (r *run) execute(ctx context.Context, o *owner, a *agent, t turn) outcome {
	// The prompt shows the answers when the owner started the execution: every one had its
	// files saved before it counted, so the temp workspace filled next shows them all, with
	// the agent's own latest snapshot.
	answerAnons := anonsOf(t.view.answers)
	prompt, shared := r.coordinationPrompt(a, t.view.answers, t.view.answersLeft)
	if err := r.store.FillTemp(ctx, a.id); err != nil {
		if ctx.Err() != nil {
			return outcome{kind: outCancelled}
		}
		r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Phase: PhaseCoordination, Text: "filling the temp workspace: " + err.Error()})
	}

	single := len(r.agents) == 1
	tools := append([]backends.ToolSpec(nil), a.tools...)
	tools = append(tools, newAnswerSpec())
	if !single && len(answerAnons) > 0 {
		tools = append(tools, voteSpec(answerAnons))
	}
	if r.checklistGated() {
		tools = append(tools, checklistSpec())
	}
	req := backends.Request{
		System:   r.coordinationSystem(a, single),
		Messages: r.history(prompt, shared),
		Tools:    tools,
		Phase:    PhaseCoordination,
		Vars:     r.vars(a, answerAnons),
		CacheKey: r.cacheKey,
	}
	turn := &workflowTurn{r: r, o: o, a: a, ctx: ctx, anons: answerAnons, single: single, own: t.view.ownAnswers}
	err := r.converse(ctx, a, &req, loopRules{
		phase:    PhaseCoordination,
		toolset:  a.toolset,
		maxSteps: r.maxSteps,
		maxCalls: maxToolCallsPerReply,
		leave:    func(name string) bool { return isWorkflowTool(name) || name == ToolSubmitChecklist },
		interrupted: func() bool {
			select {
			case <-t.restart:
				return true
			default:
				return false
			}
		},
		timer: o,
	}, turn.onReply)
	switch {
	case err == nil:
		return turn.out
	case errors.Is(err, errInterrupted):
		return outcome{kind: outRestart}
	case errors.Is(err, errStepLimit):
		return outcome{kind: outStopped, reason: fmt.Sprintf("%d model calls without new_answer or vote", r.maxSteps)}
	case errors.Is(err, errBudget) && r.ledger.turnOver():
		return outcome{kind: outCancelled} // coordination is stopping (addUsage told the owner)
	case errors.Is(err, errBudget):
		return outcome{kind: outStopped, reason: spentText(err), budget: true}
	case ctx.Err() != nil:
		return outcome{kind: outCancelled}
	default:
		return outcome{kind: outStopped, reason: "backend error: " + err.Error()}
	}
}

func isWorkflowTool(name string) bool { return name == ToolNewAnswer || name == ToolVote }

// workflowTurn judges the replies of one coordination execution: a reply with tool calls and
// no workflow call goes on; exactly one valid workflow call ends it; anything else is invalid
// and gets an error saying what to do, up to maxRetries times.
type workflowTurn struct {
	r       *run
	o       *owner
	a       *agent
	ctx     context.Context
	anons   []string // the anonymous ids with an answer when the prompt was built
	single  bool
	invalid int
	out     outcome // set when the turn is over
	cl      checklistTurn
	own     int // the agent's own answers when the prompt was built
}

func (t *workflowTurn) onReply(resp *backends.Response, results []*filesystem.Result) ([]backends.Message, bool) {
	t.r.answerChecklist(t.a, &t.cl, t.own, t.anons, resp.ToolCalls, results)
	var workflow []int
	for i, tc := range resp.ToolCalls {
		if isWorkflowTool(tc.Name) {
			workflow = append(workflow, i)
		}
	}
	var problem string
	switch {
	case len(workflow) == 0 && len(resp.ToolCalls) > 0:
		return toolMessages(resp.ToolCalls, results), false // still working
	case len(workflow) == 0:
		problem = "You must finish by calling a workflow tool: new_answer with your complete answer, or vote for the best existing answer."
		if t.single || len(t.anons) == 0 {
			problem = "You must finish by calling the new_answer tool with your complete answer."
		}
	case len(workflow) > 1:
		problem = workflowComboProblem(resp.ToolCalls, workflow)
	default:
		tc := resp.ToolCalls[workflow[0]]
		var err error
		problem, err = t.r.workflowCall(t.o, t.a, tc, t.anons, t.single)
		switch {
		case errors.Is(err, errFinished):
			t.out = outcome{kind: outCancelled}
			return nil, true
		case errors.Is(err, errVoteSetAside):
			t.out = outcome{kind: outDone}
			return nil, true
		case err == nil && problem == "":
			t.r.saveAfter(t.ctx, t.a, tc.Name)
			t.out = outcome{kind: outDone}
			return nil, true
		}
	}

	t.invalid++
	ev := t.r.agentEvent(t.a, EventInvalid, StatusWorking, PhaseCoordination)
	ev.Text = problem
	t.r.emit(ev)
	if t.invalid > maxRetries {
		t.out = outcome{kind: outStopped, reason: fmt.Sprintf("invalid workflow calls after %d retries: %s", maxRetries, problem)}
		return nil, true
	}
	msg := fmt.Sprintf("Error: %s (attempt %d of %d)", problem, t.invalid, maxRetries+1)
	for _, i := range workflow {
		res := errorResult(msg)
		results[i] = &res
	}
	more := toolMessages(resp.ToolCalls, results)
	if len(resp.ToolCalls) == 0 {
		more = append(more, backends.Message{Role: "user", Content: msg})
	}
	return more, false
}

// workflowCall validates and commits one workflow call (the owner has the last word). It
// returns the problem to tell the model ("" when accepted), or errFinished or errVoteSetAside.
func (r *run) workflowCall(o *owner, a *agent, tc backends.ToolCall, answerAnons []string, single bool) (string, error) {
	switch tc.Name {
	case ToolNewAnswer:
		p, err := newAnswerTool.BindJSON(tc.Arguments)
		return r.newAnswer(o, a, p, err)
	case ToolVote:
		p, err := voteTool.BindJSON(tc.Arguments)
		return r.vote(o, a, p, err, answerAnons, single)
	}
	return "unknown workflow tool", nil
}

// workflowProblem splits the owner's reply: an invalidError is the problem to tell the model.
func workflowProblem(err error) (string, error) {
	var inv invalidError
	if errors.As(err, &inv) {
		return string(inv), nil
	}
	return "", err
}

// saveAfter snapshots the workspace after a vote (an answer is saved before it counts).
func (r *run) saveAfter(ctx context.Context, a *agent, tool string) {
	if tool != ToolVote || a.workspace == "" {
		return
	}
	if _, err := r.store.Save(context.WithoutCancel(ctx), a.id, a.workspace, "vote"); err != nil {
		r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Phase: PhaseCoordination, Text: "saving the vote snapshot: " + err.Error()})
	}
}

// workflowComboProblem explains why several workflow calls in one reply are refused.
func workflowComboProblem(calls []backends.ToolCall, idx []int) string {
	votes, answers := 0, 0
	for _, i := range idx {
		if calls[i].Name == ToolVote {
			votes++
		} else {
			answers++
		}
	}
	switch {
	case votes > 0 && answers > 0:
		return "you called vote and new_answer in the same reply; call exactly one of them: new_answer if you have a better answer, otherwise vote."
	case votes > 1:
		return "you voted more than once in one reply; call vote exactly once, for the single best answer."
	default:
		return "you called new_answer more than once in one reply; call it exactly once with your complete answer."
	}
}
