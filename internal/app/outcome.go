package app

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
)

// Outcome is what a turn reports besides its result: the agents that failed, the state massgen
// could not save, and whether the overall timeout cut coordination short. It decides the exit
// code (see code) and the lines that end the run on stderr (see print).
type Outcome struct {
	Failed   []AgentFailure // in config order
	NotSaved []string       // one sentence per step whose state was not saved
	// StoppedBy is who ended coordination early: orchestrator.StoppedByTimeout, ...ByUser or
	// ...ByBudget ("" when no one did). Limited are the agents stopped by their own budget (a
	// limit the user set, not a failure).
	StoppedBy string
	Limited   []AgentFailure
	// Denied are the final agent's changes to files the permission layer refused
	// (filesoutcome.go): the turn is partial.
	Denied DeniedChanges
}

// AgentFailure is one agent that failed, with the cause in words.
type AgentFailure struct {
	Agent string
	Cause string
}

// code is the exit code of a turn that gave an answer: partial when an agent failed, state was
// not saved or the final agent's changes to files were refused, timeout when the overall timeout was reached, done otherwise.
func (o *Outcome) code() int {
	c := cmdutil.ExitOK
	switch o.StoppedBy {
	case orchestrator.StoppedByTimeout:
		c = cmdutil.ExitTimeout
	case orchestrator.StoppedByBudget:
		c = cmdutil.ExitBudget
	}
	if len(o.Failed) > 0 || len(o.NotSaved) > 0 || o.Denied.Total() > 0 {
		c = cmdutil.Worst(c, cmdutil.ExitPartial)
	}
	return c
}

// print ends the run on stderr: one line per agent stopped by its budget, per failed agent,
// then per step not saved.
func (o *Outcome) print(w io.Writer) {
	for _, f := range o.Limited {
		fmt.Fprintf(w, "Stopped: agent %s: %s\n", f.Agent, termtext.Squeeze(f.Cause, 0))
	}
	for _, f := range o.Failed {
		fmt.Fprintf(w, "Failed: agent %s: %s\n", f.Agent, termtext.Squeeze(f.Cause, 0))
	}
	for _, s := range o.NotSaved {
		fmt.Fprintf(w, "Not saved: %s\n", termtext.Squeeze(s, 0))
	}
}

// reason is the outcome in one line, for --output json's result: what print says.
func (o *Outcome) reason() error {
	var parts []string
	for _, f := range o.Limited {
		parts = append(parts, fmt.Sprintf("stopped: agent %s: %s", f.Agent, termtext.Squeeze(f.Cause, 0)))
	}
	for _, f := range o.Failed {
		parts = append(parts, fmt.Sprintf("failed: agent %s: %s", f.Agent, termtext.Squeeze(f.Cause, 0)))
	}
	for _, s := range o.NotSaved {
		parts = append(parts, "not saved: "+termtext.Squeeze(s, 0))
	}
	switch o.StoppedBy {
	case orchestrator.StoppedByTimeout:
		parts = append(parts, "the overall timeout was reached")
	case orchestrator.StoppedByBudget:
		parts = append(parts, "the budget was spent")
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}

// notSaved records a step whose state was not saved.
func (o *Outcome) notSaved(format string, args ...any) {
	o.NotSaved = append(o.NotSaved, fmt.Sprintf(format, args...))
}

// outcomeRecorder builds a turn's Outcome from the orchestrator's event stream: an agent that
// stopped (a backend error, its timeout, too many invalid replies) or whose final presentation
// failed has failed; an error saving snapshots, clearing a workspace or filling a temp workspace
// is state not saved. Other error events (an MCP server unavailable) are warnings.
type outcomeRecorder struct {
	order map[string]int // agent id -> config index

	mu       sync.Mutex
	failed   map[string]string
	limited  map[string]string
	notSaved []string
	denied   DeniedChanges
}

// isStateError: the text of an orchestrator error event about massgen's own state ("saving the
// answer snapshot: ...", "clearing the workspace: ...", "filling the temp workspace: ...").
func isStateError(text string) bool {
	for _, p := range [...]string{"saving ", "clearing ", "filling "} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// finalFailedPrefix starts the text of the error event of a failed final presentation.
const finalFailedPrefix = "final presentation failed: "

func newOutcomeRecorder(cfg *configs.Config) *outcomeRecorder {
	r := &outcomeRecorder{order: map[string]int{}, failed: map[string]string{}, limited: map[string]string{}}
	for i, a := range cfg.Agents {
		r.order[a.ID] = i
	}
	return r
}

func (r *outcomeRecorder) handle(ev orchestrator.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.denied.noteDenial(ev)
	switch {
	case ev.Kind == orchestrator.EventStopped && ev.Agent != "" && ev.Budget:
		r.limited[ev.Agent] = ev.Text
	case ev.Kind == orchestrator.EventStopped && ev.Agent != "":
		r.failed[ev.Agent] = ev.Text
	case ev.Kind == orchestrator.EventError && ev.Agent != "" && strings.HasPrefix(ev.Text, finalFailedPrefix):
		r.failed[ev.Agent] = strings.TrimPrefix(ev.Text, "final ") // "presentation failed: ..."
	case ev.Kind == orchestrator.EventError && ev.Agent != "" && isStateError(ev.Text):
		r.notSaved = append(r.notSaved, fmt.Sprintf("agent %s: %s", ev.Agent, ev.Text))
	}
}

// outcome is what was recorded, with the result's timeout.
func (r *outcomeRecorder) outcome(res *orchestrator.Result) *Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := &Outcome{NotSaved: append([]string(nil), r.notSaved...), Failed: r.agents(r.failed), Limited: r.agents(r.limited), Denied: r.denied}
	if res != nil {
		o.StoppedBy = res.StoppedBy
	}
	return o
}

// agents lists m's agents in config order.
func (r *outcomeRecorder) agents(m map[string]string) []AgentFailure {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return r.order[a] - r.order[b] })
	var out []AgentFailure
	for _, id := range ids {
		out = append(out, AgentFailure{Agent: id, Cause: m[id]})
	}
	return out
}
