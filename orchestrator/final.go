package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
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
	ev := r.agentEvent(w, EventFinalStart, StatusPresenting, PhaseFinal)
	r.emit(ev)

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
	if err := r.store.FillTemp(ctx, w.id, true); err != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		r.emit(Event{Kind: EventError, Agent: w.id, Anon: w.anon, Phase: PhaseFinal, Text: "filling the temp workspace: " + err.Error()})
	}
	r.mu.Lock()
	prompt := r.finalPromptLocked(w)
	anons := r.answerAnonsLocked()
	r.mu.Unlock()
	req := backends.Request{
		System:   r.finalSystem(w),
		Messages: r.history(prompt),
		Tools:    tools,
		Phase:    PhaseFinal,
		Vars:     r.vars(w, anons),
	}

	delivered := map[string]bool{}
	text := ""
	for step := 0; ; step++ {
		if step >= r.maxSteps {
			return "", nil, fmt.Errorf("%d model calls without a final reply", r.maxSteps)
		}
		resp, err := w.backend.Generate(ctx, req, r.onBackendEvent(w, PhaseFinal))
		if err == nil && resp == nil {
			err = errNoResponse
		}
		if err != nil {
			return "", nil, fmt.Errorf("backend: %w", err)
		}
		r.usageEvent(w, resp.Usage, PhaseFinal)
		if len(resp.ToolCalls) == 0 {
			text = resp.Text
			break
		}
		req.Messages = append(req.Messages, backends.Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls})
		for i, tc := range resp.ToolCalls {
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
			var res filesystem.Result
			switch {
			case i >= maxToolCallsPerReply:
				res = filesystem.Result{Content: tooManyCalls(), IsError: true}
			case tc.Name == ToolNewAnswer || tc.Name == ToolVote:
				res = filesystem.Result{Content: jsonError(tc.Name + " is not available while presenting the final answer; reply with the final answer as text."), IsError: true}
			default:
				res = r.callTool(ctx, w, tc, PhaseFinal, ts)
				if !res.IsError && ts != nil {
					for _, p := range r.deliveredPaths(ts, tc) {
						delivered[p] = true
					}
				}
			}
			req.Messages = append(req.Messages, toolMessage(tc, res.Content, res.IsError))
		}
	}
	if w.workspace != "" {
		if _, err := r.store.Save(context.WithoutCancel(ctx), w.id, w.workspace, "final"); err != nil {
			r.emit(Event{Kind: EventError, Agent: w.id, Anon: w.anon, Phase: PhaseFinal, Text: "saving the final snapshot: " + err.Error()})
		}
	}
	if strings.TrimSpace(text) == "" {
		r.mu.Lock()
		if ans := r.answers[w.id]; ans != nil {
			text = ans.text
		}
		r.mu.Unlock()
	}
	out := make([]string, 0, len(delivered))
	for p := range delivered {
		out = append(out, p)
	}
	slices.Sort(out)
	return text, out, nil
}

// deliveredPaths are the paths a successful write call touched inside a context path.
func (r *run) deliveredPaths(ts *filesystem.Toolset, tc backends.ToolCall) []string {
	if !permissions.IsWriteTool(tc.Name) {
		return nil
	}
	var args map[string]any
	if json.Unmarshal(orEmpty(tc.Arguments), &args) != nil {
		return nil
	}
	accesses, err := permissions.ExtractPaths(tc.Name, args)
	if err != nil {
		return nil
	}
	var out []string
	for _, pa := range accesses {
		if pa.Access != permissions.Write {
			continue
		}
		p := pa.Path
		if !filepath.IsAbs(p) {
			continue // relative paths are in the workspace
		}
		p = filepath.Clean(p)
		for _, cp := range r.cfg.Orchestrator.ContextPaths {
			if within(cp.Path, p) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	root = filepath.Clean(root)
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
