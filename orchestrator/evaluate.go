package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
)

// MassGen's orchestration restart (coordination.max_orchestration_restarts): after the final
// presentation, while restarts are left, the winner evaluates the final answer with two tools,
// submit (the answer stands) and restart_orchestration (reason, instructions). A restart runs the
// whole coordination again, every agent starting afresh with the reason, the instructions and
// the previous winning answer in its prompt. A reply without either tool, an evaluation that
// fails or runs out of time, submits (as in MassGen). The last attempt is not evaluated.

// PhasePostEvaluation is Request.Phase while the winner evaluates the final answer.
const PhasePostEvaluation = "post_evaluation"

// feedback is what a restart tells the next attempt.
type feedback struct {
	reason, instructions string
	previous             string // the previous attempt's winning answer ("" when it had none)
}

func isEvaluationTool(name string) bool {
	return name == ToolSubmit || name == ToolRestartOrchestration
}

// evaluate has the winner judge the final answer of attempt (of attempts). It returns the
// feedback for the next attempt when the winner asks for a restart, nil when the answer stands,
// and an error only when ctx was cancelled.
func (r *run) evaluate(ctx context.Context, w *agent, final string, attempt, attempts int) (*feedback, error) {
	evalCtx, cancel := context.WithTimeout(ctx, r.cfg.OverallTimeout())
	defer cancel()
	if d := agentTimeout(r.cfg); d > 0 {
		evalCtx, cancel = context.WithTimeout(evalCtx, d)
		defer cancel()
	}
	judged := final
	if d := string(r.cfg.Orchestrator.DebugFinalAnswer); d != "" && attempt == 1 {
		judged = d
		ev := r.agentEvent(w, EventEvaluation, StatusPresenting, PhasePostEvaluation)
		ev.Text = "debug_final_answer: the evaluation judges the configured answer instead of the final answer"
		r.emit(ev)
	}
	tools := append(slices.Clone(w.tools), submitSpec(), restartSpec())
	prompt := r.evaluationPrompt(w, judged)
	anons := r.coord.answerAnons()
	req := backends.Request{
		System:   r.evaluationSystem(w),
		Messages: []backends.Message{{Role: "user", Content: prompt}},
		Tools:    tools,
		Phase:    PhasePostEvaluation,
		Vars:     r.vars(w, anons),
	}
	var fb *feedback
	decided := false
	err := r.converse(evalCtx, w, &req, loopRules{
		phase:    PhasePostEvaluation,
		toolset:  w.toolset, // the coordination role: it may read everything, change only its workspace
		maxSteps: r.maxSteps,
		maxCalls: maxToolCallsPerReply,
		leave:    isEvaluationTool,
	}, func(resp *backends.Response, results []*filesystem.Result) ([]backends.Message, bool) {
		for _, tc := range resp.ToolCalls {
			switch tc.Name {
			case ToolSubmit:
				decided = true
				return nil, true
			case ToolRestartOrchestration:
				fb = restartFeedback(tc)
				decided = true
				return nil, true
			}
		}
		if len(resp.ToolCalls) == 0 { // no decision: the answer is submitted, as in MassGen
			return nil, true
		}
		return toolMessages(resp.ToolCalls, results), false
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	ev := r.agentEvent(w, EventEvaluation, StatusPresenting, PhasePostEvaluation)
	switch {
	case err != nil:
		fb = nil
		ev.Text = "the evaluation failed (" + evaluationError(err, r.maxSteps) + "); the final answer is submitted"
	case fb != nil:
		ev.Text = fmt.Sprintf("restart requested (attempt %d of %d): %s", attempt, attempts, fb.reason)
	case decided:
		ev.Text = "the final answer is submitted"
	default:
		ev.Text = "no decision (neither submit nor restart_orchestration was called); the final answer is submitted"
	}
	r.emit(ev)
	if fb != nil {
		if ans := r.coord.agents[w.index].answer; ans != nil {
			fb.previous = ans.text
		}
	}
	return fb, nil
}

func evaluationError(err error, steps int) string {
	switch {
	case errors.Is(err, errStepLimit):
		return fmt.Sprintf("%d model calls without a decision", steps)
	case errors.Is(err, context.DeadlineExceeded):
		return "time limit reached"
	}
	return "backend: " + err.Error()
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// restartOrchestration prepares attempt (of attempts): the next coordination starts afresh
// (answers and votes are the new coordination's), every agent with fb in its prompt.
// Workspaces and snapshots stay: the agents see their earlier work in their temp workspaces.
// Called between attempts, when no agent runs.
func (r *run) restartOrchestration(fb *feedback, attempt, attempts int) {
	r.feedback = fb
	r.skipped = false
	r.emit(Event{Kind: EventAttempt, Phase: PhaseCoordination,
		Text: fmt.Sprintf("orchestration restart (attempt %d of %d): %s", attempt, attempts, fb.reason)})
}

// writeFeedback is MassGen's restart context, before the task of every prompt of a restarted
// attempt.
func (r *run) writeFeedback(b *strings.Builder) {
	fb := r.feedback
	if fb == nil {
		return
	}
	fmt.Fprintf(b, "<PREVIOUS ATTEMPT FEEDBACK>\nThe previous orchestration attempt was restarted because:\n%s\n\n**Instructions for this attempt:**\n%s\n", fb.reason, fb.instructions)
	if fb.previous != "" {
		fmt.Fprintf(b, "\n**Previous attempt's winning answer (for reference):**\n%s\n", fb.previous)
	}
	b.WriteString("\nPlease address these specific issues in your coordination and final answer.\n<END OF PREVIOUS ATTEMPT FEEDBACK>\n\n")
}

// evaluationSystem is MassGen's post-evaluation instructions, after the agent's system message.
func (r *run) evaluationSystem(a *agent) string {
	var b strings.Builder
	if s := strings.TrimSpace(a.cfg.SystemMessage); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString(`## Post-Presentation Evaluation

You have just presented a final answer to the user. Now you must evaluate whether your answer fully addresses the original task.

Review the final answer and determine if it completely and accurately addresses the original task requirements. You have your file tools: use them to verify that claimed files exist and that their contents match what the answer describes.

You must call ONE of these tools:
1. submit(confirmed=true) when the answer fully addresses ALL parts of the original task, all its claims are accurate and verified, and the work is complete.
2. restart_orchestration(reason, instructions) when the answer is incomplete, contains errors, or misses important aspects of the task. Give a clear reason (what is wrong) and detailed, actionable instructions for the next attempt.

Be honest and thorough: restarting with clear instructions leads to a better result.
`)
	return b.String()
}

// evaluationPrompt shows the task and the answer to judge, and where the files are.
func (r *run) evaluationPrompt(a *agent, judged string) string {
	var b strings.Builder
	r.writeTask(&b)
	fmt.Fprintf(&b, "FINAL ANSWER TO EVALUATE:\n%s\n\n", judged)
	b.WriteString("Review this answer carefully and determine if it fully addresses the original task. Use your tools to verify claims and check files as needed. ")
	b.WriteString("Then call either submit(confirmed=true) if the answer is satisfactory, or restart_orchestration(reason, instructions) if improvements are needed.\n\n")
	r.writePaths(&b, a, false, a.toolset)
	return b.String()
}
