package display

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/orchestrator"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(sec float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t0.Add(time.Duration(sec * float64(time.Second)))
}

// at stamps an event sec seconds into the run.
func at(sec float64, ev orchestrator.Event) orchestrator.Event {
	ev.Time = t0.Add(time.Duration(sec * float64(time.Second)))
	return ev
}

func frame(l *live) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.frameLocked(), "\n")
}

// The panels show each agent's status with its elapsed time, its latest streamed line, its
// tool calls in words, its denials and restarts; the footer the run's time and counts.
func TestLiveFrameContent(t *testing.T) {
	clk := &fakeClock{}
	clk.set(0)
	l := newLive(io.Discard, Options{Width: 90, Now: clk.now})
	defer l.Close()
	const alice, bob = "alice", "bob"
	ev := func(kind orchestrator.EventKind, agent string, st orchestrator.Status) orchestrator.Event {
		anon := map[string]string{alice: "agent1", bob: "agent2"}[agent]
		return orchestrator.Event{Kind: kind, Agent: agent, Anon: anon, Status: st}
	}
	with := func(e orchestrator.Event, f func(*orchestrator.Event)) orchestrator.Event { f(&e); return e }
	for _, e := range []orchestrator.Event{
		at(0, orchestrator.Event{Kind: orchestrator.EventRunStart, Text: "alice=agent1, bob=agent2"}),
		at(0.1, ev(orchestrator.EventStart, alice, orchestrator.StatusWorking)),
		at(0.1, ev(orchestrator.EventStart, bob, orchestrator.StatusWorking)),
		at(1, with(ev(orchestrator.EventText, alice, ""), func(e *orchestrator.Event) { e.Text = "I will write the page first." })),
		at(2, with(ev(orchestrator.EventToolCall, alice, orchestrator.StatusWorking), func(e *orchestrator.Event) {
			e.Tool, e.Args, e.Summary = "write_file", `{"path":"index.html","content":"\u003ch1\u003e"}`, "write_file index.html (38 B)"
		})),
		at(2.5, with(ev(orchestrator.EventToolResult, alice, orchestrator.StatusWorking), func(e *orchestrator.Event) {
			e.Tool, e.Summary, e.Changes = "write_file", "write_file index.html (38 B)", []changes.Change{{Path: "/w/index.html", Op: changes.Created}}
		})),
		at(3, with(ev(orchestrator.EventToolResult, bob, orchestrator.StatusWorking), func(e *orchestrator.Event) {
			e.Tool, e.Summary, e.Denied, e.IsError, e.Rule, e.Text = "write_file", "write_file /etc/passwd (4 B)", true, true, "outside-allowed", "Access denied: /etc/passwd is outside the allowed paths"
		})),
		at(4, with(ev(orchestrator.EventAnswer, alice, orchestrator.StatusAnswered), func(e *orchestrator.Event) { e.Text = "A page.\nWith a header." })),
		at(4, with(ev(orchestrator.EventRestart, bob, orchestrator.StatusRestarting), func(e *orchestrator.Event) { e.Text = "new answer from agent1; restarts at its next step" })),
		at(4.5, with(ev(orchestrator.EventUsage, alice, ""), func(e *orchestrator.Event) {
			e.Usage, e.Cost, e.TotalCost = backends.Usage{InputTokens: 1200, OutputTokens: 34}, pricing.Known(0.0123), pricing.Known(0.0123)
		})),
		at(5, ev(orchestrator.EventStart, bob, orchestrator.StatusWorking)),
		at(5.5, with(ev(orchestrator.EventText, bob, ""), func(e *orchestrator.Event) { e.Text = "Looking at agent1's page." })),
	} {
		l.Handle(e)
	}
	clk.set(7)
	want := strings.Join([]string{
		"★ alice (agent1)  answered 0:03  1234 tokens · $0.0123 · 1 answer",
		"  › I will write the page first.",
		"  ★ answer #1: A page. With a header.",
		"• bob (agent2)  working 0:02  1 restart · 1 denial",
		"  › Looking at agent1's page.",
		"  thinking",
		"  ⊘ denied: write_file /etc/passwd (4 B) (outside-allowed): Access denied: /etc/passwd i…",
		"massgen 0:07: coordinating · 1 answer · 0 votes · $0.0123",
	}, "\n")
	if got := frame(l); got != want {
		t.Errorf("frame:\n%s\nwant:\n%s", got, want)
	}
	// Time moves without events.
	clk.set(65)
	if got := frame(l); !strings.Contains(got, "working 1:00") || !strings.Contains(got, "massgen 1:05") {
		t.Errorf("elapsed times did not move:\n%s", got)
	}
}

// A tool call shows its summary, not its JSON arguments; its outcome replaces the arrow.
func TestLiveToolSummaries(t *testing.T) {
	clk := &fakeClock{}
	clk.set(0)
	l := newLive(io.Discard, Options{Width: 100, Now: clk.now})
	defer l.Close()
	call := orchestrator.Event{Kind: orchestrator.EventToolCall, Agent: "a", Anon: "agent1", Status: orchestrator.StatusWorking,
		Tool: "write_file", Args: `{"content":"\u003ch1\u003eHi"}`, Summary: "write_file index.html (38 B)"}
	l.Handle(call)
	if got := frame(l); !strings.Contains(got, "  → write_file index.html (38 B)") || strings.Contains(got, `\u003c`) {
		t.Errorf("call:\n%s", got)
	}
	res := call
	res.Kind, res.IsError, res.Text = orchestrator.EventToolResult, true, "disk full"
	l.Handle(res)
	if got := frame(l); !strings.Contains(got, "  ✗ write_file index.html (38 B): disk full") {
		t.Errorf("failed call:\n%s", got)
	}
	l.Handle(orchestrator.Event{Kind: orchestrator.EventToolCall, Agent: "a", Tool: "mcp__x__y", Args: `{"q":1}`})
	if got := frame(l); !strings.Contains(got, `  → mcp__x__y {"q":1}`) {
		t.Errorf("call without a summary:\n%s", got)
	}
}

// Colours only when asked; the redraw itself is the only escape sequence otherwise.
func TestLiveColors(t *testing.T) {
	for _, color := range []bool{false, true} {
		var buf syncBuffer
		l := newLive(&buf, Options{Width: 80, Color: color})
		for _, ev := range sample {
			l.Handle(ev)
		}
		l.Close()
		out := buf.String()
		stripped := cursorMoves.ReplaceAllString(out, "")
		hasSGR := strings.Contains(stripped, "\x1b[")
		if hasSGR != color {
			t.Errorf("color=%v: SGR sequences present = %v:\n%q", color, hasSGR, stripped)
		}
	}
}

// cursorMoves are the redraw's own sequences: cursor up, clear to the end of the screen.
var cursorMoves = regexp.MustCompile(`\x1b\[[0-9]*A|\x1b\[J`)

// The view redraws every second while nothing happens, so elapsed times move; not while
// suspended.
func TestLiveRedrawsForTime(t *testing.T) {
	clk := &fakeClock{}
	clk.set(0)
	var buf bytes.Buffer
	l := &live{w: &buf, width: 80, height: 40, now: clk.now, panels: map[string]*panel{}}
	l.Handle(orchestrator.Event{Kind: orchestrator.EventStart, Agent: "a", Anon: "agent1", Status: orchestrator.StatusWorking})
	l.tick()
	n := buf.Len()
	l.tick()
	if buf.Len() != n {
		t.Error("redrew with nothing new within the second")
	}
	clk.set(1)
	l.tick()
	if buf.Len() == n || !strings.Contains(buf.String(), "working 0:01") {
		t.Errorf("no redraw after a second:\n%q", buf.String())
	}
	l.Suspend()
	n = buf.Len()
	clk.set(5)
	l.tick()
	if buf.Len() != n {
		t.Error("redrew while suspended")
	}
}

// A running call's notes (the command network's connections) show under the call, in the live
// view and as plain lines.
func TestToolNotes(t *testing.T) {
	l := newLive(io.Discard, Options{Width: 120})
	defer l.Close()
	note := orchestrator.Event{Kind: orchestrator.EventToolNote, Agent: "a", Anon: "agent1", Status: orchestrator.StatusWorking,
		Tool: "execute_command", Summary: "execute_command pip install requests", Text: "network: pypi.org:443 allowed"}
	l.Handle(orchestrator.Event{Kind: orchestrator.EventToolCall, Agent: "a", Anon: "agent1", Tool: note.Tool, Summary: note.Summary})
	l.Handle(note)
	if got := frame(l); !strings.Contains(got, "→ execute_command pip install requests · network: pypi.org:443 allowed") {
		t.Errorf("live view:\n%s", got)
	}
	if got := PlainLine(note); !strings.HasSuffix(got, "execute_command pip install requests: network: pypi.org:443 allowed") {
		t.Errorf("plain line: %q", got)
	}
}
