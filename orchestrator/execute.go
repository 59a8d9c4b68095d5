package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
)

type outcomeKind int

const (
	outDone      outcomeKind = iota // answered or voted
	outRestart                      // superseded by a restart
	outStopped                      // gave up; reason says why
	outCancelled                    // ctx ended (restart, timeout or Ctrl-C: the caller tells)
)

type outcome struct {
	kind   outcomeKind
	reason string
}

// execute runs one coordination execution of agent a: model calls and tool calls until a valid
// workflow call (new_answer or vote), a restart, a stop or cancellation.
func (r *run) execute(ctx context.Context, a *agent, gen int) outcome {
	r.waitSaves(ctx)
	if ctx.Err() != nil {
		return outcome{kind: outCancelled}
	}
	// The temp workspace is refilled before every execution with the others' latest snapshots.
	if err := r.store.FillTemp(ctx, a.id, false); err != nil {
		if ctx.Err() != nil {
			return outcome{kind: outCancelled}
		}
		r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Phase: PhaseCoordination, Text: "filling the temp workspace: " + err.Error()})
	}

	r.mu.Lock()
	answerAnons := r.answerAnonsLocked()
	prompt := r.coordinationPromptLocked(a)
	answersLeft := true
	if max := r.cfg.Orchestrator.MaxNewAnswersPerAgent; max > 0 && a.answers >= max {
		answersLeft = false
	}
	r.mu.Unlock()

	single := len(r.agents) == 1
	tools := append([]backends.ToolSpec(nil), a.tools...)
	tools = append(tools, newAnswerSpec())
	if !single && len(answerAnons) > 0 {
		tools = append(tools, voteSpec(answerAnons))
	}
	req := backends.Request{
		System:   r.coordinationSystem(a, single, answersLeft),
		Messages: r.history(prompt),
		Tools:    tools,
		Phase:    PhaseCoordination,
		Vars:     r.vars(a, answerAnons),
	}

	invalid := 0
	for step := 0; ; step++ {
		if step >= r.maxSteps {
			return outcome{kind: outStopped, reason: fmt.Sprintf("%d model calls without new_answer or vote", r.maxSteps)}
		}
		resp, err := a.backend.Generate(ctx, req, r.onBackendEvent(a, PhaseCoordination))
		if err == nil && resp == nil {
			err = errNoResponse
		}
		if err != nil {
			if ctx.Err() != nil {
				return outcome{kind: outCancelled}
			}
			return outcome{kind: outStopped, reason: "backend error: " + err.Error()}
		}
		r.usageEvent(a, resp.Usage, PhaseCoordination)
		req.Messages = append(req.Messages, backends.Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls})

		// Every tool call runs, those next to a workflow call included; results keep call order.
		results := make([]backends.Message, len(resp.ToolCalls))
		var workflow []int
		ran := 0
		for i, tc := range resp.ToolCalls {
			if tc.Name == ToolNewAnswer || tc.Name == ToolVote {
				workflow = append(workflow, i)
				continue
			}
			if ctx.Err() != nil {
				return outcome{kind: outCancelled}
			}
			if ran++; ran > maxToolCallsPerReply {
				results[i] = toolMessage(tc, tooManyCalls(), true)
				continue
			}
			res := r.callTool(ctx, a, tc, PhaseCoordination, nil)
			results[i] = toolMessage(tc, res.Content, res.IsError)
		}
		if ctx.Err() != nil {
			return outcome{kind: outCancelled}
		}

		var problem string
		switch {
		case len(workflow) == 0 && len(resp.ToolCalls) > 0:
			req.Messages = append(req.Messages, results...)
			continue // still working
		case len(workflow) == 0:
			problem = "You must finish by calling a workflow tool: new_answer with your complete answer, or vote for the best existing answer."
			if single || len(answerAnons) == 0 {
				problem = "You must finish by calling the new_answer tool with your complete answer."
			}
		case len(workflow) > 1:
			problem = workflowComboProblem(resp.ToolCalls, workflow)
		default:
			tc := resp.ToolCalls[workflow[0]]
			var err error
			problem, err = r.workflowCall(a, gen, tc, answerAnons, single)
			if errors.Is(err, errSuperseded) {
				return outcome{kind: outRestart}
			}
			if err == nil && problem == "" {
				r.saveAfter(ctx, a, tc.Name)
				return outcome{kind: outDone}
			}
		}

		invalid++
		ev := r.agentEvent(a, EventInvalid, StatusWorking, PhaseCoordination)
		ev.Text = problem
		r.emit(ev)
		if invalid > maxRetries {
			return outcome{kind: outStopped, reason: fmt.Sprintf("invalid workflow calls after %d retries: %s", maxRetries, problem)}
		}
		msg := fmt.Sprintf("Error: %s (attempt %d of %d)", problem, invalid, maxRetries+1)
		for _, i := range workflow {
			results[i] = toolMessage(resp.ToolCalls[i], jsonError(msg), true)
		}
		req.Messages = append(req.Messages, results...)
		if len(resp.ToolCalls) == 0 {
			req.Messages = append(req.Messages, backends.Message{Role: "user", Content: msg})
		}
	}
}

// workflowCall validates and commits one workflow call. It returns the problem to tell the model
// ("" when accepted), or errSuperseded.
func (r *run) workflowCall(a *agent, gen int, tc backends.ToolCall, answerAnons []string, single bool) (string, error) {
	switch tc.Name {
	case ToolNewAnswer:
		var args struct {
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(orEmpty(tc.Arguments), &args); err != nil || args.Content == nil {
			return `new_answer takes {"content": "<your complete answer>"}.`, nil
		}
		// The snapshot is taken before the answer counts, so agents restarted by it already
		// see its files; a first cheap check avoids snapshotting answers that will be refused.
		r.mu.Lock()
		problem := r.answerProblemLocked(a, *args.Content)
		superseded := a.gen != gen || r.finished
		r.mu.Unlock()
		if superseded {
			return "", errSuperseded
		}
		if problem != "" {
			return problem, nil
		}
		if a.workspace != "" {
			if _, err := r.store.Save(context.Background(), a.id, a.workspace, "answer"); err != nil {
				r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Phase: PhaseCoordination, Text: "saving the answer snapshot: " + err.Error()})
			}
		}
		err := r.commitAnswer(a, gen, *args.Content)
		var inv invalidError
		if errors.As(err, &inv) {
			return string(inv), nil
		}
		return "", err
	case ToolVote:
		if single {
			return "there is no vote with a single agent; call new_answer with your answer.", nil
		}
		if len(answerAnons) == 0 {
			return "there are no answers to vote for yet; call new_answer with your answer.", nil
		}
		var args struct {
			AgentID string `json:"agent_id"`
			Reason  string `json:"reason"`
		}
		if err := json.Unmarshal(orEmpty(tc.Arguments), &args); err != nil {
			return fmt.Sprintf(`vote takes {"agent_id": one of %s, "reason": "..."}.`, strings.Join(answerAnons, ", ")), nil
		}
		known := false
		for _, id := range answerAnons {
			known = known || id == args.AgentID
		}
		if !known {
			// The id given is not echoed back: the reply names only valid anonymous ids.
			return fmt.Sprintf("agent_id is not an agent with an answer; vote for one of: %s.", strings.Join(answerAnons, ", ")), nil
		}
		// The reason goes into the final agent's prompt: a long one is cut, not refused.
		err := r.commitVote(a, gen, args.AgentID, shorten(args.Reason, maxReasonRunes))
		var inv invalidError
		if errors.As(err, &inv) {
			return string(inv), nil
		}
		return "", err
	}
	return "unknown workflow tool", nil
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

// callTool runs a file (or MCP) tool through the agent's Toolset, where the permission decision
// is made, and reports it. written collects the paths a successful write touched (final phase).
func (r *run) callTool(ctx context.Context, a *agent, tc backends.ToolCall, phase string, ts *filesystem.Toolset) filesystem.Result {
	if ts == nil {
		ts = a.toolset
	}
	ev := r.agentEvent(a, EventToolCall, statusFor(phase), phase)
	ev.Tool, ev.Args = shorten(tc.Name, 100), shorten(string(tc.Arguments), 200)
	r.emit(ev)

	var res filesystem.Result
	switch {
	case ts == nil:
		res = filesystem.Result{Content: jsonError(fmt.Sprintf("unknown tool %q: this agent has no file tools (no workspace); use new_answer or vote", tc.Name)), IsError: true}
	default:
		callCtx := ctx
		// File tools finish what they started (no half-written file on restart or Ctrl-C);
		// commands and external tools are cancelled with the execution.
		if !permissions.IsCommandTool(tc.Name) && !strings.HasPrefix(tc.Name, "mcp__") {
			callCtx = context.WithoutCancel(ctx)
		}
		res = ts.Call(callCtx, tc.Name, orEmpty(tc.Arguments))
	}

	rev := r.agentEvent(a, EventToolResult, statusFor(phase), phase)
	rev.Tool, rev.Args = ev.Tool, ev.Args
	rev.IsError = res.IsError
	rev.Denied = res.IsError && isDenial(res.Content)
	rev.Text = shorten(resultText(res), 300)
	r.emit(rev)
	return capResult(res)
}

// errNoResponse stands for a backend that returned neither a response nor an error.
var errNoResponse = errors.New("the backend returned no response")

// tooManyCalls is the result of a call past maxToolCallsPerReply.
func tooManyCalls() string {
	return jsonError(fmt.Sprintf("not run: more than %d tool calls in one reply; make fewer calls per reply", maxToolCallsPerReply))
}

// maxToolResultBytes bounds what one tool call sends back to the model, so one call (a large
// file, a chatty MCP server) cannot blow the model's context or the process's memory over the
// steps of an execution.
const maxToolResultBytes = 128 << 10

// capResult replaces a result larger than maxToolResultBytes by a JSON object holding its first
// part and a note saying it was truncated.
func capResult(res filesystem.Result) filesystem.Result {
	if len(res.Content) <= maxToolResultBytes {
		return res
	}
	part := res.Content[:maxToolResultBytes]
	for i := 0; i < utf8.UTFMax-1 && len(part) > 0; i++ { // do not cut a rune in half
		if r, size := utf8.DecodeLastRuneInString(part); r != utf8.RuneError || size != 1 {
			break
		}
		part = part[:len(part)-1]
	}
	b, _ := json.Marshal(map[string]any{
		"truncated": fmt.Sprintf("the result was %d bytes; only the first %d are shown: ask for a smaller part", len(res.Content), len(part)),
		"partial":   part,
	})
	return filesystem.Result{Content: string(b), IsError: res.IsError}
}

func statusFor(phase string) Status {
	if phase == PhaseFinal {
		return StatusPresenting
	}
	return StatusWorking
}

// resultText is what displays show of a result: the error message of a failure, else the content.
func resultText(res filesystem.Result) string {
	if res.IsError {
		var obj struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(res.Content), &obj) == nil && obj.Error != "" {
			return obj.Error
		}
	}
	return res.Content
}

// isDenial tells a permission denial from other failures: the Toolset marks denials with
// "denied": true in the result object.
func isDenial(content string) bool {
	var obj struct {
		Denied bool `json:"denied"`
	}
	return json.Unmarshal([]byte(content), &obj) == nil && obj.Denied
}

// onBackendEvent reports a backend's retries; streamed text and tool calls are not events (the
// executed tool calls are).
func (r *run) onBackendEvent(a *agent, phase string) func(backends.Event) {
	return func(ev backends.Event) {
		if ev.Kind == backends.EventRetry {
			e := r.agentEvent(a, EventRetry, "", phase)
			e.Text = ev.Text
			r.emit(e)
		}
	}
}

func (r *run) usageEvent(a *agent, u backends.Usage, phase string) {
	total := r.addUsage(a, u)
	ev := r.agentEvent(a, EventUsage, "", phase)
	ev.Usage = total
	r.emit(ev)
}

func toolMessage(tc backends.ToolCall, content string, isError bool) backends.Message {
	return backends.Message{Role: "tool", Content: content, ToolCallID: tc.ID, ToolName: tc.Name, IsError: isError}
}

func jsonError(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// shorten cuts s to at most n runes, marking the cut (without converting all of a huge s).
func shorten(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}

func newAnswerSpec() backends.ToolSpec {
	return backends.ToolSpec{
		Name:        ToolNewAnswer,
		Description: "Post your complete answer to the task. Use it when you can give a better answer than every existing one. Files you made stay in your workspace and are shown to the other agents.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"content": map[string]any{"type": "string", "description": "Your complete answer."},
			},
			"required":             []string{"content"},
			"additionalProperties": false,
		},
	}
}

func voteSpec(anons []string) backends.ToolSpec {
	enum := append([]string(nil), anons...)
	return backends.ToolSpec{
		Name:        ToolVote,
		Description: "Vote for the best existing answer (yours included) when no new answer of yours would be better.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"agent_id": map[string]any{"type": "string", "enum": enum, "description": "The anonymous id of the agent whose answer is best."},
				"reason":   map[string]any{"type": "string", "description": "Why that answer is best."},
			},
			"required":             []string{"agent_id", "reason"},
			"additionalProperties": false,
		},
	}
}
