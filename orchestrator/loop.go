package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// loopRules are what differs between coordination and the final presentation in the one
// model-and-tool loop (converse).
type loopRules struct {
	phase   string
	toolset *filesystem.Toolset // nil: the agent has no file tools (each call gets an error result)
	// maxSteps bounds the model calls; maxCalls the tool calls run per reply (the rest get an
	// error result without running).
	maxSteps, maxCalls int
	// leave names the tool calls the loop does not run: the reply handler answers them.
	leave func(name string) bool
	// interrupted is asked before every model call but the first; true ends the loop with
	// errInterrupted (a pending restart).
	interrupted func() bool
	// timer times the model calls (the replies' durations decide the restart grace): the owner
	// during coordination; nil for the run's own clock (presentation and evaluation).
	timer replyTimer
}

// replyTimer is told when each model call of agent i starts and ends.
type replyTimer interface {
	replyStarted(i int, at time.Time)
	replyEnded(i int, at time.Time, completed bool)
}

// replyFunc decides what a model reply means once its tool calls ran. results holds one result
// per call, nil for the calls left to it. done ends the loop; otherwise more are the messages
// sent back with the next model call (the tool results in call order, and any note).
type replyFunc func(resp *backends.Response, results []*filesystem.Result) (more []backends.Message, done bool)

var (
	errInterrupted = errors.New("interrupted")
	errStepLimit   = errors.New("step limit reached")
	errNoResponse  = errors.New("the backend returned no response")
)

// converse is the model-and-tool loop of every execution: call the model with req, run the
// reply's tool calls through the toolset, let onReply decide, and go on with the results
// appended to req until onReply is done. It returns nil when onReply ended it, errInterrupted,
// errStepLimit, errBudget (no request starts once a budget is spent), the backend's error, or
// ctx's error when it was cancelled.
func (r *run) converse(ctx context.Context, a *agent, req *backends.Request, rules loopRules, onReply replyFunc) error {
	timer := rules.timer
	if timer == nil {
		timer = &r.clock
	}
	for step := 0; ; step++ {
		if step > 0 && rules.interrupted != nil && rules.interrupted() {
			return errInterrupted
		}
		if step >= rules.maxSteps {
			return errStepLimit
		}
		if err := r.ledger.allows(a.index); err != nil {
			return err // a spent budget: no new request starts
		}
		timer.replyStarted(a.index, time.Now())
		stream := r.newTextStream(a, rules.phase)
		resp, err := a.backend.Generate(ctx, *req, stream.onEvent)
		stream.close()
		if err == nil && resp == nil {
			err = errNoResponse
		}
		timer.replyEnded(a.index, time.Now(), err == nil)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		r.addUsage(a, resp.Usage, rules.phase)
		req.Messages = append(req.Messages, backends.Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls})

		results, err := r.runCalls(ctx, a, resp.ToolCalls, rules)
		if err != nil {
			return err
		}
		more, done := onReply(resp, results)
		if done {
			return nil
		}
		req.Messages = append(req.Messages, more...)
	}
}

// runCalls runs a reply's tool calls in order, at most rules.maxCalls of them, leaving the ones
// rules.leave names (nil results). It stops when ctx is cancelled.
func (r *run) runCalls(ctx context.Context, a *agent, calls []backends.ToolCall, rules loopRules) ([]*filesystem.Result, error) {
	results := make([]*filesystem.Result, len(calls))
	ran := 0
	for i, tc := range calls {
		if rules.leave != nil && rules.leave(tc.Name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var res filesystem.Result
		if ran++; ran > rules.maxCalls {
			res = errorResult(fmt.Sprintf("not run: more than %d tool calls in one reply; make fewer calls per reply", rules.maxCalls))
		} else {
			res = r.callTool(ctx, a, tc, rules.phase, rules.toolset)
		}
		results[i] = &res
	}
	return results, ctx.Err()
}

// callTool runs a file (or MCP) tool through the toolset, where the permission decision is
// made, and reports the call and its result on the event stream from the result's typed fields.
func (r *run) callTool(ctx context.Context, a *agent, tc backends.ToolCall, phase string, ts *filesystem.Toolset) filesystem.Result {
	ev := r.agentEvent(a, EventToolCall, statusFor(phase), phase)
	ev.Tool, ev.Args = shorten(tc.Name, 100), shorten(string(tc.Arguments), 200)
	args := tooldecl.Decode(tc.Arguments) // once: for the summary and for the call
	ev.Summary = r.tools.Summary(tc.Name, args, a.shortPath)
	r.emit(ev)

	var res filesystem.Result
	if ts == nil {
		res = errorResult(fmt.Sprintf("unknown tool %q: this agent has no file tools (no workspace); use new_answer or vote", tc.Name))
	} else {
		callCtx := ctx
		if !cancellable(ts, tc.Name) {
			callCtx = context.WithoutCancel(ctx)
		}
		callCtx = filesystem.WithNotes(callCtx, func(text string) {
			nev := r.agentEvent(a, EventToolNote, statusFor(phase), phase)
			nev.Tool, nev.Args, nev.Summary, nev.Text = ev.Tool, ev.Args, ev.Summary, shorten(text, 300)
			r.emit(nev)
		})
		res = ts.CallArgs(callCtx, tc.Name, args)
	}

	rev := r.agentEvent(a, EventToolResult, statusFor(phase), phase)
	rev.Tool, rev.Args, rev.Summary = ev.Tool, ev.Args, ev.Summary
	rev.IsError = res.IsError
	if res.Denied != nil {
		rev.Denied, rev.Rule = true, string(res.Denied.Rule)
	}
	text := res.Message
	if text == "" {
		text = res.Content
	}
	rev.Text = shorten(text, 300)
	rev.Changes = res.Changes
	r.emit(rev)
	return capResult(res)
}

// cancellable says whether a call stops with its execution (restart, timeout, Ctrl-C): commands
// and external tools do; file tools finish what they started, so no file is left half written.
func cancellable(ts *filesystem.Toolset, name string) bool {
	if ts == nil {
		return true
	}
	return ts.Cancellable(name)
}

// maxToolResultBytes bounds what one tool call sends back to the model, so one call (a large
// file, a chatty MCP server) cannot blow the model's context or the process's memory over the
// steps of an execution.
const maxToolResultBytes = 128 << 10

// capResult replaces the content of a result larger than maxToolResultBytes by a JSON object
// holding its first part and a note saying it was truncated; the typed fields stay.
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
	res.Content = string(b)
	return res
}

// errorResult is a failed call's result made here (not by a tool).
func errorResult(msg string) filesystem.Result {
	return filesystem.Result{Content: jsonError(msg), IsError: true, Message: msg}
}

// toolMessages are the results sent back for a reply's calls, in call order.
func toolMessages(calls []backends.ToolCall, results []*filesystem.Result) []backends.Message {
	msgs := make([]backends.Message, len(calls))
	for i, tc := range calls {
		msgs[i] = backends.Message{Role: "tool", Content: results[i].Content, ToolCallID: tc.ID, ToolName: tc.Name, IsError: results[i].IsError}
	}
	return msgs
}

func statusFor(phase string) Status {
	if phase == PhaseCoordination {
		return StatusWorking
	}
	return StatusPresenting
}

func jsonError(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
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
