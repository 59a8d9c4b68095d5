package display

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen/orchestrator"
)

// The orchestration-restart events (coordination.max_orchestration_restarts) get plain lines.
func TestPlainLinesForOrchestrationRestarts(t *testing.T) {
	for _, tt := range []struct {
		ev   orchestrator.Event
		want string
	}{
		{orchestrator.Event{Kind: orchestrator.EventEvaluation, Agent: "alice", Text: "restart requested (attempt 1 of 3): only one Beatle"},
			"[alice] evaluation: restart requested (attempt 1 of 3): only one Beatle"},
		{orchestrator.Event{Kind: orchestrator.EventAttempt, Text: "orchestration restart (attempt 2 of 3): only one Beatle"},
			"massgen: orchestration restart (attempt 2 of 3): only one Beatle"},
	} {
		if got := PlainLine(tt.ev); got != tt.want {
			t.Errorf("PlainLine = %q, want %q", got, tt.want)
		}
	}
}

func TestSummaryCountsAttempts(t *testing.T) {
	if got := Summary(&orchestrator.Result{Winner: "a", Attempts: 3}, nil); !strings.Contains(got, "Attempts: 3 (the winner's evaluation restarted the coordination 2 times)") {
		t.Errorf("summary:\n%s", got)
	}
	if got := Summary(&orchestrator.Result{Winner: "a", Attempts: 1}, nil); strings.Contains(got, "Attempts") {
		t.Errorf("summary of a run without restarts mentions attempts:\n%s", got)
	}
}
