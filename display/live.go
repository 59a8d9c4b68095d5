package display

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/massgen-go/massgen/orchestrator"
)

// live redraws one panel per agent in place with ANSI cursor moves, at most every 100ms.
type live struct {
	mu     sync.Mutex
	w      io.Writer
	width  int
	height int
	panels map[string]*panel
	status string // run-wide line (decision, presenting)
	drawn  int    // lines of the last frame
	dirty  bool
	closed bool
	paused int // Suspend depth: no redraws while the user is asked something
	stop   chan struct{}
	done   chan struct{}
}

type panel struct {
	id, anon string
	status   orchestrator.Status
	activity string // current tool call, or the last answer/vote
	denial   string // last permission denial
	tokens   int64
}

func newLive(w io.Writer, o Options) *live {
	width := o.Width
	if width <= 0 {
		width = 100
	}
	height := o.Height
	if height <= 0 {
		height = 40
	}
	l := &live{w: w, width: width, height: height, panels: map[string]*panel{}, stop: make(chan struct{}), done: make(chan struct{})}
	go l.loop()
	return l
}

func (l *live) loop() {
	defer close(l.done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.tick()
		}
	}
}

// tick redraws when something changed, unless suspended.
func (l *live) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dirty && l.paused == 0 {
		l.redrawLocked()
	}
}

func (l *live) Handle(ev orchestrator.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.apply(ev)
	l.dirty = true
}

// apply updates the view state from an event.
func (l *live) apply(ev orchestrator.Event) {
	switch ev.Kind {
	case orchestrator.EventRunStart:
		l.status = "coordinating"
		return
	case orchestrator.EventDecision:
		l.status = ev.Text
		return
	case orchestrator.EventError:
		if ev.Agent == "" {
			l.status = "error: " + ev.Text
			return
		}
	case orchestrator.EventDone:
		return
	}
	if ev.Agent == "" {
		return
	}
	p := l.panels[ev.Agent]
	if p == nil {
		p = &panel{id: ev.Agent, anon: ev.Anon, status: orchestrator.StatusWaiting}
		l.panels[ev.Agent] = p
	}
	if ev.Status != "" {
		p.status = ev.Status
	}
	switch ev.Kind {
	case orchestrator.EventStart:
		p.activity = "thinking"
	case orchestrator.EventToolCall:
		p.activity = ev.Tool + " " + ev.Args
	case orchestrator.EventToolResult:
		if ev.Denied {
			p.denial = ev.Tool + ": " + ev.Text
		}
	case orchestrator.EventAnswer:
		p.activity = "answered: " + ev.Text
	case orchestrator.EventVote:
		p.activity = "voted for " + ev.Target + ": " + ev.Text
	case orchestrator.EventInvalid:
		p.activity = "invalid: " + ev.Text
	case orchestrator.EventRestart:
		p.activity = "restarting: " + ev.Text
	case orchestrator.EventRetry:
		p.activity = "retrying: " + ev.Text
	case orchestrator.EventStopped:
		p.activity = "stopped: " + ev.Text
	case orchestrator.EventFinalStart:
		p.activity = "presenting the final answer"
		l.status = ev.Agent + " presents the final answer"
	case orchestrator.EventFinal:
		p.activity = "done"
		l.status = "final answer ready"
	case orchestrator.EventUsage:
		p.tokens = ev.Usage.InputTokens + ev.Usage.OutputTokens
	case orchestrator.EventError:
		p.activity = "error: " + ev.Text
	}
}

// Frame renders the current view (exported through the live type for tests).
func (l *live) frameLocked() []string {
	ids := make([]string, 0, len(l.panels))
	for id := range l.panels {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return anonNum(l.panels[ids[i]].anon) < anonNum(l.panels[ids[j]].anon) })
	var lines []string
	for _, id := range ids {
		p := l.panels[id]
		lines = append(lines, fmt.Sprintf("%s %s (%s)  %-10s  %d tokens", mark(p.status), p.id, p.anon, p.status, p.tokens))
		if p.activity != "" {
			lines = append(lines, "    "+oneLine(p.activity, l.width-5))
		}
		if p.denial != "" {
			lines = append(lines, "    denied: "+oneLine(p.denial, l.width-13))
		}
	}
	if len(lines) > l.height-2 { // too tall to redraw in place: one line per agent
		lines = lines[:0]
		for i, id := range ids {
			if i >= l.height-3 {
				lines = append(lines, fmt.Sprintf("... and %d more agents", len(ids)-i))
				break
			}
			p := l.panels[id]
			lines = append(lines, fmt.Sprintf("%s %s  %-10s  %6d tok  %s", mark(p.status), p.id, p.status, p.tokens, oneLine(p.activity, l.width)))
		}
	}
	if l.status != "" {
		lines = append(lines, "massgen: "+oneLine(l.status, l.width-10))
	}
	for i, s := range lines {
		lines[i] = truncate(clean(s), l.width-1) // never wrap: the redraw counts lines; no escapes
	}
	return lines
}

func (l *live) redrawLocked() {
	var b strings.Builder
	if l.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", l.drawn)
	}
	b.WriteString("\r\x1b[J")
	lines := l.frameLocked()
	for _, s := range lines {
		b.WriteString(s)
		b.WriteString("\n")
	}
	io.WriteString(l.w, b.String())
	l.drawn = len(lines)
	l.dirty = false
}

// Suspend stops redrawing and erases the panels, so a prompt can use their place; once the
// prompt has erased itself, the next frame is drawn there again (below any line the prompt
// left), not repeated below it.
func (l *live) Suspend() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused++
	if l.paused == 1 && l.drawn > 0 {
		fmt.Fprintf(l.w, "\x1b[%dA\r\x1b[J", l.drawn)
	}
	l.drawn = 0
}

// Resume redraws again after Suspend.
func (l *live) Resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused > 0 {
		l.paused--
	}
	l.dirty = true
}

// Close draws the last frame and stops redrawing.
func (l *live) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.mu.Lock()
	l.redrawLocked()
	l.mu.Unlock()
}

func mark(s orchestrator.Status) string {
	switch s {
	case orchestrator.StatusVoted, orchestrator.StatusDone:
		return "✓"
	case orchestrator.StatusAnswered:
		return "★"
	case orchestrator.StatusStopped:
		return "✗"
	case orchestrator.StatusRestarting:
		return "↻"
	}
	return "•"
}

func anonNum(anon string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(anon, "agent"))
	if err != nil {
		return 1 << 30
	}
	return n
}

// truncate cuts s to n terminal columns, keeping its spacing: wide runes (CJK, emoji) count
// two, so a line never wraps and the in-place redraw keeps its line count.
func truncate(s string, n int) string {
	if n <= 0 || runewidth.StringWidth(s) <= n {
		return s
	}
	return runewidth.Truncate(s, n, "…")
}
