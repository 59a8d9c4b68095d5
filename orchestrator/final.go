package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/permissions"
)

// present runs the winner once more in the Final role: context paths get their configured
// permission, it sees every answer and vote and its own earlier work, and has no workflow tools.
// It returns the final text and the files delivered into context paths. The workspace is kept.
func (r *run) present(ctx context.Context, w *agent) (string, []string, error) {
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
			return "", nil, err
		}
		tools, _ = toolSpecs(ts)
	}
	if err := r.store.FillTemp(ctx, w.id); err != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
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

	roots := deliveryRoots(w)
	delivered := map[string]bool{}
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
			for _, p := range deliveredPaths(*results[i], roots) {
				delivered[p] = true
			}
		}
		return toolMessages(resp.ToolCalls, results), false
	})
	switch {
	case errors.Is(err, errStepLimit):
		return "", nil, fmt.Errorf("%d model calls without a final reply", r.maxSteps)
	case errors.Is(err, errBudget):
		return "", nil, err
	case ctx.Err() != nil:
		return "", nil, ctx.Err()
	case err != nil:
		return "", nil, fmt.Errorf("backend: %w", err)
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
	out := make([]string, 0, len(delivered))
	for p := range delivered {
		out = append(out, p)
	}
	slices.Sort(out)
	return text, out, nil
}

// deliveryRoots are the context paths as the winner's environment resolved them once, when it
// was built (internal/roots): the same canonical paths its policy decided the writes on, never
// resolved again, so a link retargeted since cannot make delivery list another folder's files.
func deliveryRoots(w *agent) []string {
	if w.env == nil {
		return nil
	}
	set := w.env.Roots()
	if set == nil {
		return nil
	}
	out := make([]string, 0, len(set.Context))
	for _, c := range set.Context {
		out = append(out, c.Path)
	}
	return out
}

// deliveredPaths are the paths a call created or modified inside a context path, as the tool
// reported them (Result.Changes).
func deliveredPaths(res filesystem.Result, roots []string) []string {
	var out []string
	for _, c := range res.Changes {
		if c.Op == changes.Deleted || !pathx.WithinAny(filepath.Clean(c.Path), roots) {
			continue
		}
		if fi, err := os.Lstat(c.Path); err == nil && fi.IsDir() {
			continue // a directory made on the way: the files in it are listed themselves
		}
		out = append(out, filepath.Clean(c.Path))
	}
	return out
}
