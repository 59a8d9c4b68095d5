package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
)

// present runs the winner once more in the Final role: context paths get their configured
// permission, it sees every answer and vote and its own earlier work, and has no workflow tools.
// It returns the final text. What it delivers into context paths is recorded by the turn's
// journal (Options.Journal), the one record of what the turn changed; the workspace is kept.
func (r *run) present(ctx context.Context, w *agent) (string, error) {
	if d := agentTimeout(r.cfg); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	r.emit(r.agentEvent(w, EventFinalStart, StatusPresenting, PhaseFinal))

	var ts *filesystem.Toolset
	var tools []backends.ToolSpec
	if w.toolset != nil { // every agent has one; without a workspace it offers MCP tools only
		var err error
		ts, err = r.toolset(w, permissions.Final)
		if err != nil {
			return "", err
		}
		tools, _ = toolSpecs(ts)
	}
	if err := r.store.FillTemp(ctx, w.id); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		r.emit(Event{Kind: EventError, Agent: w.id, Anon: w.anon, Phase: PhaseFinal, Text: "filling the temp workspace: " + err.Error()})
	}
	prompt := r.finalPrompt(w, ts)
	anons := r.coord.answerAnons()
	req := backends.Request{
		System:   r.finalSystem(w),
		Messages: r.history(prompt, 0),
		CacheKey: r.cacheKey,
		Tools:    tools,
		Phase:    PhaseFinal,
		Vars:     r.vars(w, anons),
	}

	text := ""
	err := r.converse(ctx, w, &req, loopRules{
		phase:    PhaseFinal,
		toolset:  ts,
		maxSteps: r.maxSteps,
		maxCalls: maxToolCallsPerReply,
		leave:    isWorkflowTool,
	}, func(resp *backends.Response, results []*filesystem.Result) ([]backends.Message, bool) {
		if len(resp.ToolCalls) == 0 { // a reply without tool calls ends the presentation
			text = resp.Text
			return nil, true
		}
		for i, tc := range resp.ToolCalls {
			if results[i] == nil {
				res := errorResult(tc.Name + " is not available while presenting the final answer; reply with the final answer as text.")
				results[i] = &res
			}
		}
		return toolMessages(resp.ToolCalls, results), false
	})
	switch {
	case errors.Is(err, errStepLimit):
		return "", fmt.Errorf("%d model calls without a final reply", r.maxSteps)
	case errors.Is(err, errBudget):
		return "", err
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", fmt.Errorf("backend: %w", err)
	}

	if w.workspace != "" {
		if _, err := r.store.Save(context.WithoutCancel(ctx), w.id, w.workspace, "final"); err != nil {
			r.emit(Event{Kind: EventError, Agent: w.id, Anon: w.anon, Phase: PhaseFinal, Text: "saving the final snapshot: " + err.Error()})
		}
	}
	if strings.TrimSpace(text) == "" {
		if ans := r.coord.agents[w.index].answer; ans != nil {
			text = ans.text
		}
	}
	return text, nil
}
