package orchestrator

import (
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
)

// EventKind says what happened.
type EventKind string

// The kinds of events on the stream. Every event is also written to the run's log.
const (
	EventRunStart   EventKind = "run_start"   // coordination begins; Text lists the agents
	EventStart      EventKind = "start"       // an agent starts (or restarts) an execution
	EventToolCall   EventKind = "tool_call"   // an agent calls a tool; Tool, Args
	EventToolResult EventKind = "tool_result" // its result; Denied, Rule, IsError, Text (short), Changes
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
	EventUsage      EventKind = "usage"       // token use so far for Agent (cumulative)
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
	Target string // vote target / winner (real id)
	Text   string
	// Denied marks a tool call refused by the permission layer, Rule the rule that refused it;
	// IsError any failed call. Changes are the paths the call created, modified or deleted.
	Denied  bool
	Rule    string
	IsError bool
	Changes []filesystem.Change
	Usage   backends.Usage // cumulative for Agent (EventUsage)
}
