package display

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/orchestrator"
)

func TestParseModeAndResolve(t *testing.T) {
	tests := []struct {
		in      string
		tty     bool
		want    Mode
		wantErr bool
	}{
		{in: "", tty: true, want: ModeLive},
		{in: "auto", tty: false, want: ModePlain},
		{in: "rich_terminal", tty: true, want: ModeLive},
		{in: "rich_terminal", tty: false, want: ModePlain},
		{in: "simple", tty: true, want: ModePlain},
		{in: "plain", tty: true, want: ModePlain},
		{in: "silent", tty: true, want: ModeSilent},
		{in: "fancy", wantErr: true},
	}
	for _, tt := range tests {
		m, err := ParseMode(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseMode(%q) error = %v", tt.in, err)
			continue
		}
		if err == nil {
			if got := Resolve(m, tt.tty); got != tt.want {
				t.Errorf("Resolve(ParseMode(%q), %v) = %q, want %q", tt.in, tt.tty, got, tt.want)
			}
		}
	}
}

var sample = []orchestrator.Event{
	{Kind: orchestrator.EventRunStart, Text: "alice=agent1, bob=agent2"},
	{Kind: orchestrator.EventStart, Agent: "alice", Anon: "agent1", Status: orchestrator.StatusWorking},
	{Kind: orchestrator.EventStart, Agent: "bob", Anon: "agent2", Status: orchestrator.StatusWorking},
	{Kind: orchestrator.EventToolCall, Agent: "bob", Anon: "agent2", Status: orchestrator.StatusWorking, Tool: "write_file", Args: `{"path":"/p/x"}`},
	{Kind: orchestrator.EventToolResult, Agent: "bob", Anon: "agent2", Status: orchestrator.StatusWorking, Tool: "write_file", Denied: true, Rule: "context-read-only", IsError: true, Text: "Access denied: /p/x is read-only"},
	{Kind: orchestrator.EventToolResult, Agent: "bob", Anon: "agent2", Tool: "read_file", Text: `{"content":"ok"}`},
	{Kind: orchestrator.EventToolResult, Agent: "bob", Anon: "agent2", Tool: "move_file", Text: `{}`, Changes: []changes.Change{{Path: "/w/b", Op: changes.Created}, {Path: "/w/a", Op: changes.Deleted}}},
	{Kind: orchestrator.EventUsage, Agent: "alice", Anon: "agent1", Usage: backends.Usage{InputTokens: 100, OutputTokens: 20}},
	{Kind: orchestrator.EventAnswer, Agent: "alice", Anon: "agent1", Status: orchestrator.StatusAnswered, Text: "hello\nworld"},
	{Kind: orchestrator.EventRestart, Agent: "bob", Anon: "agent2", Status: orchestrator.StatusRestarting, Text: "new answer from agent1"},
	{Kind: orchestrator.EventRestart, Agent: "carol", Anon: "agent3", Status: orchestrator.StatusWaiting, Text: "new answer from agent1; votes again once no agent is working"},
	{Kind: orchestrator.EventVote, Agent: "bob", Anon: "agent2", Status: orchestrator.StatusVoted, Target: "alice", Text: "good"},
	{Kind: orchestrator.EventDecision, Agent: "alice", Text: "alice (agent1) wins with 2 of 2 votes"},
}

func TestPlainLines(t *testing.T) {
	var buf bytes.Buffer
	d := New(ModePlain, &buf, Options{})
	for _, ev := range sample {
		d.Handle(ev)
	}
	d.Close()
	want := []string{
		"massgen: starting alice=agent1, bob=agent2",
		"[alice] working",
		"[bob] working",
		`[bob] write_file {"path":"/p/x"}`,
		"[bob] DENIED write_file (context-read-only): Access denied: /p/x is read-only",
		"[bob] move_file: created /w/b, deleted /w/a",
		"[alice] answered: hello world",
		"[bob] restarting (new answer from agent1)",
		"[carol] waiting (new answer from agent1; votes again once no agent is working)",
		"[bob] voted for alice: good",
		"massgen: alice (agent1) wins with 2 of 2 votes",
	}
	if got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLiveFrame(t *testing.T) {
	var buf bytes.Buffer
	l := newLive(&buf, Options{Width: 60})
	for _, ev := range sample {
		l.Handle(ev)
	}
	l.Close()
	l.mu.Lock()
	frame := l.frameLocked()
	l.mu.Unlock()
	text := strings.Join(frame, "\n")
	for _, want := range []string{"alice (agent1)  answered", "120 tokens", "bob (agent2)  voted", "denied: write_file (context-read-only): Access denied", "waiting: new answer from agent1", ": alice (agent1) wins"} {
		if !strings.Contains(text, want) {
			t.Errorf("frame lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "alice") > strings.Index(text, "bob") {
		t.Error("panels not in agent order")
	}
	for _, line := range frame {
		if n := len([]rune(line)); n >= 60 {
			t.Errorf("line of %d runes wraps a 60-column terminal: %q", n, line)
		}
	}
	if !strings.Contains(buf.String(), "\x1b[J") {
		t.Error("no redraw written")
	}
}

func TestPrintResult(t *testing.T) {
	res := &orchestrator.Result{
		FinalAnswer: "the answer", Winner: "alice", Votes: map[string]string{"bob": "alice", "alice": "alice"},
		Delivered: []string{"/p/page.html"}, EndedEarly: "bob stopped",
		Usage: map[string]backends.Usage{"alice": {InputTokens: 10, OutputTokens: 5}},
	}
	for _, m := range []Mode{ModePlain, ModeLive, ModeSilent} {
		var out, errb bytes.Buffer
		PrintResult(m, &out, &errb, res)
		if out.String() != "the answer\n" {
			t.Errorf("%s: stdout = %q", m, out.String())
		}
		if m == ModeSilent && errb.Len() != 0 {
			t.Errorf("silent wrote %q to stderr", errb.String())
		}
		if m != ModeSilent {
			for _, want := range []string{"Winner: alice", "Votes (2 cast):\n  alice  ████████████████████  2/2  alice, bob  winner", "Ended early: bob stopped", "/p/page.html", "alice 10 in / 5 out (total 15)"} {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("%s: summary lacks %q:\n%s", m, want, errb.String())
				}
			}
		}
	}
}

// While suspended (a permission prompt owns the terminal) the live view draws nothing.
func TestLiveSuspend(t *testing.T) {
	var buf syncBuffer
	l := newLive(&buf, Options{Width: 80})
	var s Suspender = l
	s.Suspend()
	before := buf.Len()
	for _, ev := range sample {
		l.Handle(ev)
	}
	l.tick()
	if buf.Len() != before {
		t.Error("drew while suspended")
	}
	s.Resume()
	l.tick()
	if !strings.Contains(buf.String(), "alice (agent1)") {
		t.Error("no frame after Resume")
	}
	l.Close()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) Len() int       { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Len() }
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Many agents on a small terminal: one line each, never taller than the screen.
func TestLiveFrameFitsTerminal(t *testing.T) {
	l := newLive(&syncBuffer{}, Options{Width: 80, Height: 12})
	defer l.Close()
	for i := 1; i <= 50; i++ {
		id := fmt.Sprintf("g%02d", i)
		l.Handle(orchestrator.Event{Kind: orchestrator.EventToolCall, Agent: id, Anon: fmt.Sprintf("agent%d", i), Status: orchestrator.StatusWorking, Tool: "read_file"})
	}
	l.Handle(orchestrator.Event{Kind: orchestrator.EventRunStart})
	l.mu.Lock()
	frame := l.frameLocked()
	l.mu.Unlock()
	if len(frame) > 11 {
		t.Errorf("%d lines on a 12-row terminal:\n%s", len(frame), strings.Join(frame, "\n"))
	}
	if !strings.HasPrefix(frame[0], "• g01") || !strings.Contains(strings.Join(frame, "\n"), "more agents") {
		t.Errorf("frame:\n%s", strings.Join(frame, "\n"))
	}
}

// A model must not reach the user's terminal with escape sequences or control characters
// through anything a display prints: plain lines, live frames, the summary.
func TestDisplaysCleanHostileText(t *testing.T) {
	const hostile = "ok\x1b[2J\x1b]0;pwned\x07\x9b31m\u202eevil\x00end"
	events := []orchestrator.Event{
		{Kind: orchestrator.EventRunStart, Text: hostile},
		{Kind: orchestrator.EventToolCall, Agent: "a", Anon: "agent1", Tool: "mcp__x__" + hostile, Args: hostile},
		{Kind: orchestrator.EventToolCall, Agent: "a", Anon: "agent1", Tool: "write_file", Summary: "write_file " + hostile},
		{Kind: orchestrator.EventText, Agent: "a", Anon: "agent1", Text: hostile},
		{Kind: orchestrator.EventToolResult, Agent: "a", Anon: "agent1", Tool: "write_file", Denied: true, IsError: true, Text: hostile},
		{Kind: orchestrator.EventToolResult, Agent: "a", Anon: "agent1", Tool: "x", IsError: true, Text: hostile},
		{Kind: orchestrator.EventAnswer, Agent: "a", Anon: "agent1", Text: hostile},
		{Kind: orchestrator.EventVote, Agent: "a", Anon: "agent1", Target: "a", Text: hostile},
		{Kind: orchestrator.EventInvalid, Agent: "a", Anon: "agent1", Text: hostile},
		{Kind: orchestrator.EventRestart, Agent: "a", Anon: "agent1", Text: hostile},
		{Kind: orchestrator.EventRetry, Agent: "a", Anon: "agent1", Text: hostile},
		{Kind: orchestrator.EventToolNote, Agent: "a", Anon: "agent1", Tool: "execute_command", Text: "network: " + hostile + ":443 refused"},
		{Kind: orchestrator.EventStopped, Agent: "a", Anon: "agent1", Text: hostile},
		{Kind: orchestrator.EventError, Text: hostile},
		{Kind: orchestrator.EventError, Agent: "a", Anon: "agent1", Text: hostile},
		{Kind: orchestrator.EventDecision, Text: hostile},
	}
	bad := func(s string) bool {
		for _, r := range s {
			if r == '\x1b' || r == '\x07' || r == '\x9b' || r == '\x00' || r == '\u202e' {
				return true
			}
		}
		return false
	}
	for _, ev := range events {
		if line := PlainLine(ev); bad(line) {
			t.Errorf("PlainLine(%v) prints control characters: %q", ev.Kind, line)
		}
		l := newLive(io.Discard, Options{Width: 200})
		l.Handle(ev)
		l.Close()
		l.mu.Lock()
		frame := l.frameLocked()
		l.mu.Unlock()
		for _, line := range frame {
			if bad(line) {
				t.Errorf("live frame after %v prints control characters: %q", ev.Kind, line)
			}
		}
	}
	res := &orchestrator.Result{Winner: hostile, Votes: map[string]string{"a": hostile}, EndedEarly: hostile, Delivered: []string{"/p/" + hostile}, FinalWorkspace: hostile,
		Timeline: []orchestrator.Moment{{Kind: orchestrator.EventRunStart}, {Kind: orchestrator.EventAnswer, Agent: hostile}, {Kind: orchestrator.EventStopped, Agent: "a", Text: hostile}, {Kind: orchestrator.EventDecision, Text: hostile}}}
	for _, st := range []Style{{}, {Color: true}} {
		sum := SummaryWith(res, st)
		if st.Color {
			sum = regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(sum, "") // the report's own colours
		}
		for _, line := range strings.Split(sum, "\n") {
			if bad(line) {
				t.Errorf("summary (colour %v) prints control characters: %q", st.Color, line)
			}
		}
	}
	for _, color := range []bool{false, true} {
		l := newLive(io.Discard, Options{Width: 200, Color: color})
		for _, ev := range events {
			l.Handle(ev)
		}
		l.Close()
		l.mu.Lock()
		frame := strings.Join(l.frameLocked(), "\n")
		l.mu.Unlock()
		if color {
			frame = regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(frame, "")
		}
		if bad(frame) {
			t.Errorf("live frame (colour %v) prints control characters: %q", color, frame)
		}
	}
	if !strings.Contains(PlainLine(events[4]), "evil") {
		t.Errorf("cleaning lost the printable text: %q", PlainLine(events[4]))
	}
}

// Wide runes count two columns: a frame full of CJK and emoji still fits the terminal, so the
// in-place redraw (which counts lines) is not broken by wrapping.
func TestLiveFrameWideRunesFit(t *testing.T) {
	wide := strings.Repeat("漢字😀", 200)
	l := newLive(io.Discard, Options{Width: 40})
	l.Handle(orchestrator.Event{Kind: orchestrator.EventAnswer, Agent: "a", Anon: "agent1", Text: wide})
	l.Handle(orchestrator.Event{Kind: orchestrator.EventToolResult, Agent: "a", Anon: "agent1", Tool: "write_file", Denied: true, Text: wide})
	l.Handle(orchestrator.Event{Kind: orchestrator.EventDecision, Text: wide})
	l.Close()
	l.mu.Lock()
	frame := l.frameLocked()
	l.mu.Unlock()
	for _, line := range frame {
		if w := runewidth.StringWidth(line); w >= 40 {
			t.Errorf("line %d columns wide wraps a 40-column terminal: %q", w, line)
		}
	}
}

// The summary's spend: tokens by kind per agent, the turn's cost and each agent's (a model
// without a price is unknown, never $0), the budget; nothing when no token was used.
func TestSpendLines(t *testing.T) {
	s := Spend{
		Agents: []AgentSpend{
			{Agent: "alice", Usage: backends.Usage{InputTokens: 1200, CachedInputTokens: 800, CacheWriteTokens: 100, OutputTokens: 340, ReasoningTokens: 120}, Cost: pricing.Known(0.0123)},
			{Agent: "bob", Usage: backends.Usage{InputTokens: 10, OutputTokens: 5}},
		},
		Total: pricing.Cost{USD: 0.0123}, MaxCostUSD: 0.05, PricesDate: "2025-12-01",
	}
	want := []string{
		"Tokens: alice 1200 in (800 cached, 100 cache write) / 340 out (120 reasoning), bob 10 in / 5 out (total 1555)",
		"Cost: unknown (at least $0.0123) (alice $0.0123, bob unknown (no price for its model); prices of 2025-12-01)",
		"Budget: $0.0500, 24% spent",
	}
	if got := SpendLines(s); !slices.Equal(got, want) {
		t.Errorf("SpendLines =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := SpendLines(Spend{Agents: []AgentSpend{{Agent: "a", Cost: pricing.Free}}}); got != nil {
		t.Errorf("no tokens: %q", got)
	}
}
