package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/backends"
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
	prompt := r.finalPromptLocked(w, ts)
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
					for _, p := range r.deliveredPaths(res) {
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

// deliveredPaths are the files a successful call wrote inside a context path (its typed
// Changes: resolved paths, as the permission decision saw them).
func (r *run) deliveredPaths(res filesystem.Result) []string {
	var out []string
	for _, ch := range res.Changes {
		if ch.Op == filesystem.Deleted {
			continue
		}
		if fi, err := os.Lstat(ch.Path); err != nil || fi.IsDir() {
			continue // a directory made on the way, or gone since
		}
		for _, cp := range r.cfg.Orchestrator.ContextPaths {
			root := filepath.Clean(cp.Path)
			if real, err := filepath.EvalSymlinks(root); err == nil {
				root = real
			}
			if pathx.Within(ch.Path, root) {
				out = append(out, ch.Path)
				break
			}
		}
	}
	return out
}
