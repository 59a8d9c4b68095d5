package orchestrator

import (
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/changes"
)

// EventKind says what happened.
type EventKind string

// The kinds of events on the stream. Every event is also written to the run's log.
const (
	EventRunStart   EventKind = "run_start"   // coordination begins; Text lists the agents
	EventStart      EventKind = "start"       // an agent starts (or restarts) an execution
	EventText       EventKind = "text"        // the model's streamed text; Text = its latest line (throttled, see textStream)
	EventToolCall   EventKind = "tool_call"   // an agent calls a tool; Tool, Args, Summary
	EventToolResult EventKind = "tool_result" // its result; Summary, Denied, Rule, IsError, Text (short), Changes
	EventToolNote   EventKind = "tool_note"   // what a running call says; Tool, Summary, Text ("network: pypi.org:443 allowed")
	EventAnswer     EventKind = "answer"      // an agent posted a new answer; Text
	EventVote       EventKind = "vote"        // an agent voted; Target (real id), Text = reason
	EventInvalid    EventKind = "invalid"     // an invalid workflow call; Text says what was wrong
	EventRestart    EventKind = "restart"     // a new answer restarts a working agent, or has an idle one vote again; Text says which
	EventStopped    EventKind = "stopped"     // an agent was stopped; Text says why
	EventDecision   EventKind = "decision"    // coordination is over; Target = winner, Text = why
	EventFinalStart EventKind = "final_start" // the winner starts its final presentation
	EventFinal      EventKind = "final"       // the final answer; Text
	EventEvaluation EventKind = "evaluation"  // the winner's evaluation of the final answer (max_orchestration_restarts); Text says the outcome
	EventAttempt    EventKind = "attempt"     // the evaluation restarts the whole coordination; Text says which attempt and why
	EventUsage      EventKind = "usage"       // token use and cost so far for Agent (cumulative), and the turn's cost
	EventBudget     EventKind = "budget"      // a budget warning (50, 75, 90%) or a budget spent; Agent set for an agent's own budget; Text
	EventError      EventKind = "error"       // a problem that did not stop the run; Text
	EventRetry      EventKind = "retry"       // the backend retries a request (429/5xx); Text says why
	EventDone       EventKind = "done"        // the run is over (also after cancellation)
)

// Status is an agent's state as displays show it.
type Status string

const (
	StatusWaiting    Status = "waiting" // not started yet, or waiting for the others to finish to vote again
	StatusWorking    Status = "working"
	StatusAnswered   Status = "answered"
	StatusVoted      Status = "voted"
	StatusRestarting Status = "restarting"
	StatusStopped    Status = "stopped"
	StatusPresenting Status = "presenting"
	StatusDone       Status = "done"
)

// Event is one thing that happened in a run. Events are for the user (displays and logs): they
// carry real agent ids. Models never see them.
type Event struct {
	Time   time.Time
	Kind   EventKind
	Agent  string // real agent id ("" for run-wide events)
	Anon   string // the agent's anonymous id (agent1, ...)
	Status Status // the agent's status after this event
	Phase  string // "coordination", "final" or "post_evaluation"
	Tool   string
	Args   string // tool arguments, shortened
	// Summary is the tool call in words, from the tool's declared arguments:
	// "write_file index.html (38 B)", "execute_command npm test" (the tool's declaration, tooldecl.Set.Summary).
	Summary string
	Target  string // vote target / winner (real id)
	Text    string
	// Denied marks a tool call refused by the permission layer, Rule the rule that refused it;
	// IsError any failed call. Changes are the paths the call created, modified or deleted.
	Denied  bool
	Rule    string
	IsError bool
	Changes []changes.Change
	Usage   backends.Usage // cumulative for Agent (EventUsage)
	// Cost is Agent's cost so far, TotalCost the turn's (EventUsage); unknown when a model has
	// no price (backends/pricing).
	Cost, TotalCost pricing.Cost
	// Budget marks an agent stopped because its budget was spent (EventStopped): a limit the
	// user set, not a failure.
	Budget bool
}

// Moment is one step of coordination kept for the end-of-run timeline (Result.Timeline): the
// run's start, answers, votes, restarts of working agents, stops, the decision and the final
// answer, in the order they were emitted.
type Moment struct {
	Time   time.Time
	Kind   EventKind // EventRunStart, EventAnswer, EventVote, EventRestart, EventStopped, EventDecision or EventFinal
	Agent  string    // real id ("" for the run's start)
	Target string    // the vote's target, the winner (real ids)
	Text   string    // short: why it restarted or stopped, the decision
}

// maxMomentText bounds the text kept per moment (a stop reason can quote a model).
const maxMomentText = 200

// timeline collects the moments of a run as they are emitted (emit calls note, under emitMu).
type timeline struct {
	moments []Moment
}

// note keeps ev if it is a moment of the timeline. Idle agents told to vote again (restart
// events with StatusWaiting) are not: they follow every answer and say nothing new.
func (t *timeline) note(ev Event) {
	m := Moment{Time: ev.Time, Kind: ev.Kind, Agent: ev.Agent, Target: ev.Target}
	switch ev.Kind {
	case EventRunStart:
		m.Agent = ""
	case EventAnswer, EventVote, EventFinal:
	case EventRestart:
		if ev.Status == StatusWaiting {
			return
		}
		m.Text = shorten(ev.Text, maxMomentText)
	case EventStopped, EventDecision:
		m.Text = shorten(ev.Text, maxMomentText)
	default:
		return
	}
	t.moments = append(t.moments, m)
}
