package orchestrator

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/massgen-go/massgen/backends"
)

// textEventInterval is the least time between two text events of one model reply: a model
// streams tens of deltas a second, the user reads a line, and the log keeps one event per
// interval (at debug level) instead of one per token.
const textEventInterval = 250 * time.Millisecond

// maxStreamLine bounds the partial line kept while a reply streams (a model may stream
// megabytes without a newline); the rest of that line is dropped.
const maxStreamLine = 4096

// textStream turns one model reply's text deltas into EventText events carrying the latest
// line: the first delta is reported at once, later ones at most every textEventInterval (a
// timer reports what came meanwhile), and close reports what is left when the reply ends.
// It also reports the backend's retries (EventRetry).
type textStream struct {
	r     *run
	a     *agent
	phase string

	mu       sync.Mutex
	partial  string // text after the last newline
	full     bool   // partial reached maxStreamLine: the rest of the line is dropped
	complete string // the last non-blank complete line
	sent     string // the line last reported
	lastSent time.Time
	timer    *time.Timer
	closed   bool
}

func (r *run) newTextStream(a *agent, phase string) *textStream {
	return &textStream{r: r, a: a, phase: phase}
}

// onEvent is the backend's event callback for one Generate.
func (s *textStream) onEvent(ev backends.Event) {
	switch ev.Kind {
	case backends.EventRetry:
		s.mu.Lock()
		s.partial, s.full, s.complete = "", false, "" // what was streamed is void
		s.mu.Unlock()
		e := s.r.agentEvent(s.a, EventRetry, "", s.phase)
		e.Text = ev.Text
		s.r.emit(e)
	case backends.EventTextDelta:
		s.add(ev.Text)
	}
}

func (s *textStream) add(delta string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || delta == "" {
		return
	}
	for {
		i := strings.IndexByte(delta, '\n')
		if i < 0 {
			break
		}
		s.appendPartial(delta[:i])
		if strings.TrimSpace(s.partial) != "" {
			s.complete = s.partial
		}
		s.partial, s.full = "", false
		delta = delta[i+1:]
	}
	s.appendPartial(delta)
	if s.timer != nil { // a report is due: it will carry this delta too
		return
	}
	if wait := textEventInterval - time.Since(s.lastSent); wait > 0 {
		s.timer = time.AfterFunc(wait, s.flush)
		return
	}
	s.reportLocked()
}

// appendPartial adds text to the current line, up to maxStreamLine bytes (cut on a rune).
func (s *textStream) appendPartial(text string) {
	if s.full {
		return
	}
	if room := maxStreamLine - len(s.partial); len(text) > room {
		text = text[:room]
		if i := lastRuneStart(text); i >= 0 && !utf8.FullRuneInString(text[i:]) {
			text = text[:i] // do not keep half a rune
		}
		s.full = true
	}
	s.partial += text
}

// lastRuneStart is the index where the last (possibly incomplete) rune of s starts (-1 for "").
func lastRuneStart(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return len(s) - 1
}

// flush reports what came since the last report (the timer's function).
func (s *textStream) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if !s.closed {
		s.reportLocked()
	}
}

// reportLocked emits the latest line if it changed.
func (s *textStream) reportLocked() {
	line := s.complete
	if strings.TrimSpace(s.partial) != "" {
		line = s.partial
	}
	line = strings.TrimSpace(line)
	if line == "" || line == s.sent {
		return
	}
	s.sent, s.lastSent = line, time.Now()
	ev := s.r.agentEvent(s.a, EventText, "", s.phase)
	ev.Text = shorten(line, 300)
	s.r.emit(ev)
}

// close reports what is left once the reply is over; nothing is reported after it.
func (s *textStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if !s.closed {
		s.reportLocked()
		s.closed = true
	}
}
