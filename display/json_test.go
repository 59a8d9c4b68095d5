package display

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/orchestrator"
)

// TestJSONLines: every event of interest becomes one line with its type; the rest write nothing.
func TestJSONLines(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		ev   orchestrator.Event
		want string // "" : no line
	}{
		{orchestrator.Event{Kind: orchestrator.EventRunStart, Text: "a=agent1, b=agent2"}, `"type":"run_start","time":"2025-01-02T03:04:05Z","agents":{"a":"agent1","b":"agent2"}`},
		{orchestrator.Event{Kind: orchestrator.EventStart, Agent: "a", Anon: "agent1", Phase: "coordination"}, `"type":"agent_started","time":"2025-01-02T03:04:05Z","agent":"a","anon":"agent1","phase":"coordination"`},
		{orchestrator.Event{Kind: orchestrator.EventToolCall, Agent: "a", Tool: "write_file"}, ""},
		{orchestrator.Event{Kind: orchestrator.EventToolResult, Agent: "a", Tool: "write_file", Args: `{"path":"x"}`}, `"tool":"write_file","args":{"path":"x"},"decision":"allowed","error":false`},
		{orchestrator.Event{Kind: orchestrator.EventToolResult, Agent: "a", Tool: "write_file", Args: `{"path":"x","content":"abc…`, Denied: true, IsError: true, Text: "no"}, `"args":"{\"path\":\"x\",\"content\":\"abc…","decision":"denied","error":true,"message":"no"`},
		{orchestrator.Event{Kind: orchestrator.EventAnswer, Agent: "a", Text: "ans"}, `"type":"answer"`},
		{orchestrator.Event{Kind: orchestrator.EventVote, Agent: "b", Target: "a", Text: "why"}, `"type":"vote","time":"2025-01-02T03:04:05Z","agent":"b","text":"why","target":"a"`},
		{orchestrator.Event{Kind: orchestrator.EventRestart, Agent: "b", Text: "new answer"}, `"type":"restart"`},
		{orchestrator.Event{Kind: orchestrator.EventDecision, Target: "a", Text: "a wins"}, `"type":"winner"`},
		{orchestrator.Event{Kind: orchestrator.EventFinal, Agent: "a", Text: "final"}, `"type":"final_answer"`},
		{orchestrator.Event{Kind: orchestrator.EventUsage, Agent: "a", Usage: backends.Usage{InputTokens: 3, OutputTokens: 4}}, `"input_tokens":3,"output_tokens":4`},
		// Token kinds and costs; an unknown cost is null, never 0.
		{orchestrator.Event{Kind: orchestrator.EventUsage, Agent: "a", Usage: backends.Usage{InputTokens: 30, CachedInputTokens: 20, CacheWriteTokens: 5, OutputTokens: 9, ReasoningTokens: 4},
			Cost: pricing.Known(0.0123456789), TotalCost: pricing.Cost{USD: 0.02}},
			`"input_tokens":30,"output_tokens":9,"cached_input_tokens":20,"cache_write_tokens":5,"reasoning_tokens":4,"cost_usd":0.012346,"total_cost_usd":null`},
		{orchestrator.Event{Kind: orchestrator.EventBudget, Text: "the turn's budget: $0.50 of $1.00 spent (50%)"}, `"type":"budget","time":"2025-01-02T03:04:05Z","message":"the turn's budget: $0.50 of $1.00 spent (50%)"`},
		{orchestrator.Event{Kind: orchestrator.EventError, Text: "bad"}, `"type":"error","time":"2025-01-02T03:04:05Z","message":"bad"`},
		{orchestrator.Event{Kind: orchestrator.EventDone}, ""},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		j := NewJSON(&buf)
		tt.ev.Time = at
		j.Handle(tt.ev)
		got := buf.String()
		if tt.want == "" {
			if got != "" {
				t.Errorf("%s: wrote %q", tt.ev.Kind, got)
			}
			continue
		}
		if !strings.HasSuffix(got, "}\n") || strings.Count(got, "\n") != 1 || !json.Valid([]byte(got)) || !strings.Contains(got, tt.want) {
			t.Errorf("%s: line %q, want it to contain %s", tt.ev.Kind, got, tt.want)
		}
	}
	var buf bytes.Buffer
	j := NewJSON(&buf)
	r := JSONResult{FinalAnswer: "x", ExitCode: 0}
	JSONSpend(&r, &orchestrator.Result{StoppedBy: "user",
		Usage: map[string]backends.Usage{"a": {InputTokens: 3, OutputTokens: 4}, "b": {InputTokens: 1}},
		Cost:  map[string]pricing.Cost{"a": pricing.Known(0.5)}, TotalCost: pricing.Cost{USD: 0.5}})
	j.Result(r)
	want := `{"type":"result","final_answer":"x","winner":"","votes":{},"files_changed":[],"denied_by_user":[],"denied_changes":0,` +
		`"tokens":{"a":{"input_tokens":3,"cached_input_tokens":0,"cache_write_tokens":0,"output_tokens":4,"reasoning_tokens":0,"cost_usd":0.5},` +
		`"b":{"input_tokens":1,"cached_input_tokens":0,"cache_write_tokens":0,"output_tokens":0,"reasoning_tokens":0,"cost_usd":null}},` +
		`"cost_usd":null,"stopped_by":"user","exit_code":0}` + "\n"
	if got := buf.String(); got != want || j.Results() != 1 {
		t.Errorf("result line\n%s\nwant\n%s", got, want)
	}
	buf.Reset()
	j.Result(JSONResult{FinalAnswer: "x", ExitCode: 0})
	if got := buf.String(); got != `{"type":"result","final_answer":"x","winner":"","votes":{},"files_changed":[],"denied_by_user":[],"denied_changes":0,"exit_code":0}`+"\n" || j.Results() != 2 {
		t.Errorf("result line %q", got)
	}
}

// TestLiveSuspendErasesThePanels: suspending erases the frame drawn, so the prompt takes its
// place and the next frame is drawn there again rather than repeated below.
func TestLiveSuspendErasesThePanels(t *testing.T) {
	var buf syncBuffer
	l := newLive(&buf, Options{Width: 80})
	for _, ev := range sample {
		l.Handle(ev)
	}
	l.mu.Lock()
	l.redrawLocked()
	drawn := l.drawn
	l.mu.Unlock()
	before := buf.Len()
	l.Suspend()
	if got := buf.String()[before:]; drawn == 0 || got != "\x1b["+itoa(drawn)+"A\r\x1b[J" {
		t.Errorf("Suspend wrote %q after a %d-line frame", got, drawn)
	}
	l.Resume()
	l.Close()
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
