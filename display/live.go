package display

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
)

// live redraws one panel per agent in place with ANSI cursor moves: when something changed, at
// most every 100ms, and every second for the elapsed times.
type live struct {
	mu       sync.Mutex
	w        io.Writer
	width    int
	height   int
	color    bool
	now      func() time.Time
	panels   map[string]*panel
	status   string    // run-wide line (decision, presenting)
	started  time.Time // the run's start
	ended    time.Time // set by Close: elapsed times stop
	answers  int
	votes    int
	cost     pricing.Cost // the turn's so far (from the usage events)
	costSeen bool         // some agent used tokens
	budget   string       // the latest budget event of the turn's budget
	drawn    int          // lines of the last frame
	lastDraw time.Time
	dirty    bool
	closed   bool
	paused   int // Suspend depth: no redraws while the user is asked something
	stop     chan struct{}
	done     chan struct{}
}

// panel is what the live view shows of one agent.
type panel struct {
	id, anon string
	order    int // position in the run's agent list
	status   orchestrator.Status
	since    time.Time // when the status began
	text     string    // latest line of the model's streamed text
	activity line      // current tool call and its outcome, or the last answer/vote/restart
	denial   string    // last permission denial
	tokens   int64
	cost     pricing.Cost
	answers  int
	restarts int
	denials  int
}

// redrawEvery is how often the elapsed times move when nothing else changes.
const redrawEvery = time.Second

func newLive(w io.Writer, o Options) *live {
	width := o.Width
	if width <= 0 {
		width = 100
	}
	height := o.Height
	if height <= 0 {
		height = 40
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	l := &live{w: w, width: width, height: height, color: o.Color, now: now, panels: map[string]*panel{}, stop: make(chan struct{}), done: make(chan struct{})}
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

// tick redraws when something changed or a second passed, unless suspended.
func (l *live) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused == 0 && (l.dirty || (l.drawn > 0 && l.now().Sub(l.lastDraw) >= redrawEvery)) {
		l.redrawLocked()
	}
}

func (l *live) Handle(ev orchestrator.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = l.now()
	}
	l.apply(ev)
	l.dirty = true
}

// apply updates the view state from an event.
func (l *live) apply(ev orchestrator.Event) {
	switch ev.Kind {
	case orchestrator.EventRunStart:
		l.status = "coordinating"
		l.started = ev.Time
		l.addAgents(ev)
		return
	case orchestrator.EventDecision:
		l.status = ev.Text
		return
	case orchestrator.EventError:
		if ev.Agent == "" {
			l.status = "error: " + ev.Text
			return
		}
	case orchestrator.EventBudget:
		if ev.Agent == "" {
			l.budget = ev.Text
			return
		}
	case orchestrator.EventDone:
		return
	}
	if ev.Agent == "" {
		return
	}
	p := l.panel(ev.Agent, ev.Anon, ev.Time)
	if ev.Status != "" && ev.Status != p.status {
		p.status, p.since = ev.Status, ev.Time
	}
	switch ev.Kind {
	case orchestrator.EventStart:
		p.activity, p.text = line{}.add("thinking", sgrDim), ""
	case orchestrator.EventText:
		p.text = ev.Text
	case orchestrator.EventToolCall:
		p.activity = line{}.add("→ ", sgrYellow).add(termtext.Squeeze(toolText(ev), 0), sgrNone)
	case orchestrator.EventToolNote:
		p.activity = line{}.add("→ ", sgrYellow).add(termtext.Squeeze(toolText(ev), 0), sgrNone).add(" · ", sgrDim).add(termtext.Squeeze(ev.Text, 0), sgrDim)
	case orchestrator.EventToolResult:
		switch {
		case ev.Denied:
			p.denials++
			p.denial = toolText(ev) + ruleNote(ev.Rule) + ": " + ev.Text
			p.activity = nil // the denial line says it all
		case ev.IsError:
			p.activity = line{}.add("✗ ", sgrRed).add(termtext.Squeeze(toolText(ev)+": "+ev.Text, 0), sgrNone)
		default:
			p.activity = line{}.add("✓ ", sgrGreen).add(termtext.Squeeze(toolText(ev), 0), sgrNone)
		}
	case orchestrator.EventAnswer:
		p.answers++
		l.answers++
		p.activity = line{}.add("★ answer #"+strconv.Itoa(p.answers)+": ", sgrCyan).add(termtext.Squeeze(ev.Text, 0), sgrNone)
	case orchestrator.EventVote:
		l.votes++
		p.activity = line{}.add("✓ voted for "+ev.Target, sgrGreen).add(": "+termtext.Squeeze(ev.Text, 0), sgrNone)
	case orchestrator.EventInvalid:
		p.activity = line{}.add("✗ invalid: ", sgrRed).add(termtext.Squeeze(ev.Text, 0), sgrNone)
	case orchestrator.EventRestart:
		if ev.Status == orchestrator.StatusWaiting {
			p.activity = line{}.add("… waiting: ", sgrDim).add(termtext.Squeeze(ev.Text, 0), sgrNone)
		} else {
			p.restarts++
			p.activity = line{}.add("↻ restarting: ", sgrMagenta).add(termtext.Squeeze(ev.Text, 0), sgrNone)
		}
	case orchestrator.EventRetry:
		p.activity = line{}.add("↻ retrying: ", sgrYellow).add(termtext.Squeeze(ev.Text, 0), sgrNone)
	case orchestrator.EventStopped:
		p.activity = line{}.add("✗ stopped: ", sgrRed).add(termtext.Squeeze(ev.Text, 0), sgrNone)
	case orchestrator.EventFinalStart:
		p.activity, p.text = line{}.add("presenting the final answer", sgrBold), ""
		l.status = ev.Agent + " presents the final answer"
	case orchestrator.EventFinal:
		p.activity = line{}.add("✓ final answer ready", sgrGreen)
		l.status = "final answer ready"
	case orchestrator.EventUsage:
		p.tokens = ev.Usage.InputTokens + ev.Usage.OutputTokens
		p.cost, l.cost = ev.Cost, ev.TotalCost
		l.costSeen = l.costSeen || p.tokens > 0 // a model used tokens (the scripted demo uses none)
	case orchestrator.EventBudget:
		p.activity = line{}.add("$ ", sgrYellow).add(ev.Text, sgrNone)
	case orchestrator.EventError:
		p.activity = line{}.add("error: ", sgrRed).add(termtext.Squeeze(ev.Text, 0), sgrNone)
	}
}

// addAgents shows every agent from the start: the run-start event lists them ("alice=agent1,
// bob=agent2"), in config order.
func (l *live) addAgents(ev orchestrator.Event) {
	for _, pair := range strings.Split(ev.Text, ", ") {
		i := strings.LastIndex(pair, "=")
		if i <= 0 {
			continue
		}
		l.panel(pair[:i], pair[i+1:], ev.Time)
	}
}

func (l *live) panel(id, anon string, at time.Time) *panel {
	p := l.panels[id]
	if p == nil {
		p = &panel{id: id, anon: anon, order: len(l.panels), status: orchestrator.StatusWaiting, since: at}
		l.panels[id] = p
	}
	if p.anon == "" {
		p.anon = anon
	}
	return p
}

// toolText is a tool call as the user reads it: its summary, or its name and arguments.
func toolText(ev orchestrator.Event) string {
	if ev.Summary != "" {
		return ev.Summary
	}
	if ev.Args == "" {
		return ev.Tool
	}
	return ev.Tool + " " + ev.Args
}

// frameLocked renders the current view, one string per terminal line.
func (l *live) frameLocked() []string {
	now := l.now()
	if !l.ended.IsZero() {
		now = l.ended
	}
	ids := make([]string, 0, len(l.panels))
	for id := range l.panels {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := l.panels[ids[i]], l.panels[ids[j]]
		if x, y := anonNum(a.anon), anonNum(b.anon); x != y {
			return x < y
		}
		return a.order < b.order
	})
	var lines []line
	for _, id := range ids {
		p := l.panels[id]
		lines = append(lines, l.header(p, now))
		if p.text != "" {
			lines = append(lines, line{}.add("  › ", sgrDim).add(termtext.Squeeze(p.text, 0), sgrDim))
		}
		if len(p.activity) > 0 {
			lines = append(lines, append(line{}.add("  ", sgrNone), p.activity...))
		}
		if p.denial != "" {
			lines = append(lines, line{}.add("  ⊘ denied: ", sgrRed).add(termtext.Squeeze(p.denial, 0), sgrNone))
		}
	}
	if len(lines) > l.height-2 { // too tall to redraw in place: one line per agent
		lines = lines[:0]
		for i, id := range ids {
			if i >= l.height-3 {
				lines = append(lines, line{}.add(fmt.Sprintf("... and %d more agents", len(ids)-i), sgrDim))
				break
			}
			p := l.panels[id]
			what := p.activity.plainText()
			if p.text != "" {
				what = "› " + p.text
			}
			lines = append(lines, line{}.add(mark(p.status)+" ", statusColor(p.status)).add(p.id, sgrBold).
				add(fmt.Sprintf("  %s %s", p.status, clock(now.Sub(p.since))), statusColor(p.status)).
				add(fmt.Sprintf("  %6d tok  ", p.tokens), sgrDim).add(termtext.Squeeze(what, 0), sgrNone))
		}
	}
	if l.status != "" {
		foot := line{}.add("massgen", sgrBold)
		if !l.started.IsZero() {
			foot = foot.add(" "+clock(now.Sub(l.started)), sgrDim)
		}
		foot = foot.add(": "+termtext.Squeeze(l.status, 0), sgrNone)
		if l.answers > 0 || l.votes > 0 {
			foot = foot.add(" · "+plural(l.answers, "answer")+" · "+plural(l.votes, "vote"), sgrDim)
		}
		if l.costSeen {
			foot = foot.add(" · "+costNote(l.cost), sgrDim)
		}
		if l.budget != "" {
			foot = foot.add(" · "+termtext.Squeeze(l.budget, 0), sgrYellow)
		}
		lines = append(lines, foot)
	}
	out := make([]string, len(lines))
	for i, ln := range lines {
		out[i] = ln.render(l.width-1, l.color) // never wrap: the redraw counts lines
	}
	return out
}

// header is a panel's first line: mark, agent, status with its elapsed time, then tokens and
// counts of answers, restarts and denials.
func (l *live) header(p *panel, now time.Time) line {
	h := line{}.add(mark(p.status)+" ", statusColor(p.status)).add(p.id, sgrBold)
	if p.anon != "" {
		h = h.add(" ("+p.anon+")", sgrDim)
	}
	h = h.add(fmt.Sprintf("  %s %s", p.status, clock(now.Sub(p.since))), statusColor(p.status))
	var notes []string
	if p.tokens > 0 {
		notes = append(notes, fmt.Sprintf("%d tokens", p.tokens), costNote(p.cost))
	}
	if p.answers > 0 {
		notes = append(notes, plural(p.answers, "answer"))
	}
	if p.restarts > 0 {
		notes = append(notes, plural(p.restarts, "restart"))
	}
	if p.denials > 0 {
		notes = append(notes, plural(p.denials, "denial"))
	}
	if len(notes) > 0 {
		h = h.add("  "+strings.Join(notes, " · "), sgrDim)
	}
	return h
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
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
	l.lastDraw = l.now()
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

// Close draws the last frame, with the elapsed times stopped, and stops redrawing.
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
	l.ended = l.now()
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

func statusColor(s orchestrator.Status) string {
	switch s {
	case orchestrator.StatusWorking, orchestrator.StatusPresenting:
		return sgrYellow
	case orchestrator.StatusVoted, orchestrator.StatusDone:
		return sgrGreen
	case orchestrator.StatusAnswered:
		return sgrCyan
	case orchestrator.StatusStopped:
		return sgrRed
	case orchestrator.StatusRestarting:
		return sgrMagenta
	}
	return sgrDim
}

func anonNum(anon string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(anon, "agent"))
	if err != nil {
		return 1 << 30
	}
	return n
}

// costNote is a cost as a panel or the footer shows it: "$0.0123", or "cost unknown".
func costNote(c pricing.Cost) string {
	if c.Known {
		return c.String()
	}
	return "cost unknown"
}
