package session

import "time"

// Moment is one step of a turn's coordination as stored in metadata.json ("timeline"): an
// answer, a vote, a restart, a stop, the decision or the final answer (the orchestrator's
// Result.Timeline), so `sessions show` can draw the turn's vote tally and timeline.
type Moment struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Agent  string    `json:"agent,omitempty"`
	Target string    `json:"target,omitempty"`
	Text   string    `json:"text,omitempty"`
}
