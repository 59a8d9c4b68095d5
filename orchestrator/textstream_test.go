package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/massgen-go/massgen/backends"
)

func texts(evs []Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Text
	}
	return out
}

// A model streaming token by token reaches the display as a few text events carrying its latest
// line, not one event (and one log line) per token; the last one is the reply's last line.
func TestStreamedTextIsCoalesced(t *testing.T) {
	h := newHarness(t, "solo")
	var streaming time.Duration
	h.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if c.final() {
			return textResp("done"), nil
		}
		start := time.Now()
		for i := range 200 {
			for _, w := range []string{"line ", fmt.Sprint(i), " of", " the", " reply", "\n"} {
				c.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: w})
			}
		}
		c.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: "\n  \n"}) // blank lines end it
		streaming = time.Since(start)
		return answerResp("x"), nil
	}
	core, logs := observer.New(zapcore.InfoLevel)
	o := h.options(context.Background())
	o.Logger = zap.New(core)
	if _, err := h.runOptions(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got := h.ev.of(EventText, "solo")
	if len(got) == 0 {
		t.Fatal("no text event")
	}
	// The first delta at once, then at most one per interval, then the end of the reply.
	if limit := 2 + int(streaming/textEventInterval); len(got) > limit {
		t.Errorf("%d text events for 1,200 deltas streamed in %s (limit %d)", len(got), streaming, limit)
	}
	if last := got[len(got)-1].Text; last != "line 199 of the reply" {
		t.Errorf("last text = %q", last)
	}
	for _, ev := range got {
		if strings.Contains(ev.Text, "\n") || ev.Phase != PhaseCoordination || ev.Anon != "agent1" {
			t.Errorf("text event %+v", ev)
		}
	}
	for _, e := range logs.All() {
		if e.ContextMap()["event"] == string(EventText) {
			t.Errorf("text event logged at %s: %v", e.Level, e.ContextMap())
		}
	}
}

// newTestStream is a text stream of one reply whose events are collected; done waits until
// every event emitted so far is collected (nothing is collected after it).
func newTestStream() (s *textStream, ev *events, done func()) {
	ev = &events{}
	stream := ev.stream()
	r := &run{log: zap.NewNop(), o: Options{Events: stream}}
	return r.newTextStream(&agent{id: "alice", anon: "agent1"}, PhaseCoordination), ev, func() { ev.finish(stream) }
}

// A pause in the middle of a reply does not hide what was streamed before it: the pending line is
// reported when the interval is over, before the reply ends.
func TestStreamedTextReportedDuringPause(t *testing.T) {
	s, ev, done := newTestStream()
	got := make(chan string, 10)
	ev.on = func(e Event) { got <- e.Text }
	s.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: "Planning the page.\n"})
	if first := <-got; first != "Planning the page." {
		t.Fatalf("first text = %q", first)
	}
	s.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: "Writing index"})
	s.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: ".html now"})
	select {
	case second := <-got:
		if second != "Writing index.html now" {
			t.Errorf("second text = %q", second)
		}
	case <-time.After(20 * textEventInterval):
		t.Fatal("the pending line was not reported while the reply paused")
	}
	s.close()
	s.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: "after the end\n"})
	done()
	if n := len(ev.of(EventText, "")); n != 2 {
		t.Errorf("%d text events, want 2: %v", n, texts(ev.of(EventText, "")))
	}
}

// Text streamed before a retry is void; a line longer than maxStreamLine is kept bounded and
// cut on a rune boundary.
func TestStreamedTextRetryAndLongLine(t *testing.T) {
	s, ev, done := newTestStream()
	s.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: "first attempt\n"})
	s.onEvent(backends.Event{Kind: backends.EventRetry, Text: "HTTP 429"})
	s.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: "par"})
	s.close()
	done()
	if got := texts(ev.of(EventText, "")); strings.Join(got, "|") != "first attempt|par" {
		t.Errorf("texts = %q", got)
	}
	if r := ev.of(EventRetry, "alice"); len(r) != 1 || r[0].Text != "HTTP 429" {
		t.Errorf("retry events = %+v", r)
	}

	s, ev, done = newTestStream()
	chunk := strings.Repeat("é", 333) // 666 bytes: the bound falls inside a rune
	for range 2000 {
		s.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: chunk})
	}
	s.mu.Lock()
	n, valid := len(s.partial), utf8.ValidString(s.partial)
	s.mu.Unlock()
	if n > maxStreamLine || !valid {
		t.Errorf("partial line of %d bytes (valid UTF-8: %v)", n, valid)
	}
	s.close()
	done()
	last := ev.of(EventText, "")
	if len(last) == 0 || utf8.RuneCountInString(last[len(last)-1].Text) > 301 {
		t.Errorf("text events %d, last %d runes", len(last), utf8.RuneCountInString(last[len(last)-1].Text))
	}
}

// The timeline keeps the run's start, answers, votes, restarts of working agents, the decision
// and the final answer, in order; idle agents told to vote again are not moments.
func TestResultTimeline(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	h.grace = time.Minute // bob restarts at its next step, never cancelled
	bobWorking, bobTold := make(chan struct{}), make(chan struct{})
	h.ev.on = func(ev Event) {
		if ev.Kind == EventRestart && ev.Agent == "bob" {
			close(bobTold)
		}
	}
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("final from alice"), nil
		case len(c.answers()) == 0:
			<-bobWorking
			return answerResp("hello from alice"), nil
		default:
			return voteResp("agent1", "mine is fine"), nil
		}
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if len(c.answers()) == 0 {
			close(bobWorking)
			<-bobTold // a reply in flight when alice answers: the restart comes at the next step
			return &backends.Response{ToolCalls: []backends.ToolCall{call("t1", "read_file", map[string]string{"path": "x"})}}, nil
		}
		return voteResp("agent1", "alice's is good"), nil
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, m := range res.Timeline {
		got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s", m.Kind, m.Agent, m.Target)))
		if i > 0 && m.Time.Before(res.Timeline[i-1].Time) {
			t.Errorf("moment %d is earlier than the one before", i)
		}
	}
	want := []string{"run_start", "answer alice", "restart bob", "vote bob alice", "vote alice alice", "decision alice alice", "final alice"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m := res.Timeline[2]; !strings.Contains(m.Text, "new answer from agent1") {
		t.Errorf("restart moment text = %q", m.Text)
	}
}
