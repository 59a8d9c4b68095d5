package display

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
)

// plain writes one line per meaningful event, for pipes, CI logs and --display plain.
type plain struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *plain) Handle(ev orchestrator.Event) {
	line := PlainLine(ev)
	if line == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, line)
}

func (p *plain) Close() {}

// PlainLine renders an event as a progress line ("" for events not worth a line). The line is
// cleaned for the terminal (termtext.Line).
func PlainLine(ev orchestrator.Event) string {
	return termtext.Line(plainLine(ev))
}

func plainLine(ev orchestrator.Event) string {
	who := "[" + ev.Agent + "]"
	switch ev.Kind {
	case orchestrator.EventRunStart:
		return "massgen: starting " + ev.Text
	case orchestrator.EventStart:
		return who + " working"
	case orchestrator.EventToolCall:
		return fmt.Sprintf("%s %s", who, termtext.Squeeze(toolText(ev), 160))
	case orchestrator.EventToolResult:
		switch {
		case ev.Denied:
			return fmt.Sprintf("%s DENIED %s%s: %s", who, termtext.Squeeze(toolText(ev), 160), ruleNote(ev.Rule), termtext.Squeeze(ev.Text, 200))
		case ev.IsError:
			return fmt.Sprintf("%s %s failed: %s", who, termtext.Squeeze(toolText(ev), 160), termtext.Squeeze(ev.Text, 200))
		case len(ev.Changes) > 0:
			return fmt.Sprintf("%s %s: %s", who, ev.Tool, termtext.Squeeze(changesText(ev.Changes), 200))
		}
		return ""
	case orchestrator.EventAnswer:
		return fmt.Sprintf("%s answered: %s", who, termtext.Squeeze(ev.Text, 120))
	case orchestrator.EventVote:
		return fmt.Sprintf("%s voted for %s: %s", who, ev.Target, termtext.Squeeze(ev.Text, 120))
	case orchestrator.EventInvalid:
		return fmt.Sprintf("%s invalid workflow call: %s", who, termtext.Squeeze(ev.Text, 200))
	case orchestrator.EventRetry:
		return fmt.Sprintf("%s retrying: %s", who, termtext.Squeeze(ev.Text, 200))
	case orchestrator.EventToolNote:
		return fmt.Sprintf("%s %s: %s", who, termtext.Squeeze(toolText(ev), 120), termtext.Squeeze(ev.Text, 200))
	case orchestrator.EventRestart:
		if ev.Status == orchestrator.StatusWaiting {
			return fmt.Sprintf("%s waiting (%s)", who, ev.Text)
		}
		return fmt.Sprintf("%s restarting (%s)", who, ev.Text)
	case orchestrator.EventStopped:
		return fmt.Sprintf("%s stopped: %s", who, termtext.Squeeze(ev.Text, 200))
	case orchestrator.EventDecision:
		return "massgen: " + ev.Text
	case orchestrator.EventBudget:
		if ev.Agent == "" {
			return "massgen: " + termtext.Squeeze(ev.Text, 200)
		}
		return fmt.Sprintf("%s %s", who, termtext.Squeeze(ev.Text, 200))
	case orchestrator.EventFinalStart:
		return who + " presenting the final answer"
	case orchestrator.EventEvaluation:
		return fmt.Sprintf("%s evaluation: %s", who, termtext.Squeeze(ev.Text, 200))
	case orchestrator.EventAttempt:
		return "massgen: " + termtext.Squeeze(ev.Text, 200)
	case orchestrator.EventError:
		if ev.Agent == "" {
			return "massgen: error: " + termtext.Squeeze(ev.Text, 200)
		}
		return fmt.Sprintf("%s error: %s", who, termtext.Squeeze(ev.Text, 200))
	}
	return ""
}

// ruleNote names the permission rule that refused a call (" (protected-path)"), if known.
func ruleNote(rule string) string {
	if rule == "" {
		return ""
	}
	return " (" + rule + ")"
}

// changesText lists what a call changed: "created /p/a, modified /p/b".
func changesText(changes []changes.Change) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = string(c.Op) + " " + c.Path
	}
	return strings.Join(parts, ", ")
}
