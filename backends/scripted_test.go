package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen/configs"
)

func newTestScripted(t *testing.T, steps []configs.ScriptStep) Backend {
	t.Helper()
	b, err := New(configs.Backend{Type: "scripted", Script: steps}, Options{AgentID: "agent_a"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

func TestScriptedIdentity(t *testing.T) {
	b := newTestScripted(t, nil)
	if b.Provider() != "scripted" || b.Model() != "scripted (demo)" {
		t.Errorf("Provider/Model = %q/%q", b.Provider(), b.Model())
	}
	if err := CheckKey(configs.Backend{Type: "scripted"}, wireEnv(nil)); err != nil {
		t.Errorf("scripted needs no key: %v", err)
	}
}

func TestScriptedPlaysStepsPerPhaseWithSubstitution(t *testing.T) {
	b := newTestScripted(t, []configs.ScriptStep{
		{Phase: "coordination", ToolCalls: []configs.ScriptToolCall{
			{Name: "write_file", Args: map[string]any{"path": "${WORKSPACE}/a.txt", "content": "from ${AGENT}", "nested": []any{"${CONTEXT_0}", 3, map[string]any{"k": "${UNKNOWN}"}}}},
			{Name: "read_file", Args: map[string]any{"path": "${TEMP_WORKSPACE}/agent2/b.txt"}},
		}},
		{Phase: "final", Text: "final answer in ${CONTEXT_0}"},
		{Phase: "coordination", Text: "my answer", ToolCalls: []configs.ScriptToolCall{{Name: "new_answer", Args: map[string]any{"content": "see ${WORKSPACE}"}}}},
		{Text: "any phase"},
	})
	vars := map[string]string{"WORKSPACE": "/ws/a", "TEMP_WORKSPACE": "/tmp/a", "CONTEXT_0": "/proj", "AGENT": "agent1"}
	play := func(phase string) (*Response, []Event) {
		t.Helper()
		var log wireEvents
		resp, err := b.Generate(testContext(t), Request{Phase: phase, Vars: vars}, log.add)
		if err != nil {
			t.Fatalf("Generate(%s): %v", phase, err)
		}
		return resp, log.events
	}

	r, events := play("coordination")
	wireAssertCalls(t, r.ToolCalls, []ToolCall{
		{ID: "call_1", Name: "write_file", Arguments: json.RawMessage(`{"path":"/ws/a/a.txt","content":"from agent1","nested":["/proj",3,{"k":"${UNKNOWN}"}]}`)},
		{ID: "call_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"/tmp/a/agent2/b.txt"}`)},
	})
	if len(events) != 2 || events[0].Kind != EventToolCall || events[0].ToolCall.ID != "call_1" {
		t.Errorf("events = %+v", events)
	}

	// The final phase has its own cursor: it skips coordination steps.
	r, events = play("final")
	if r.Text != "final answer in /proj" || len(r.ToolCalls) != 0 {
		t.Errorf("final step = %+v", r)
	}
	if len(events) != 1 || events[0].Kind != EventTextDelta || events[0].Text != r.Text {
		t.Errorf("text not streamed: %+v", events)
	}

	// Coordination continues where it was (a restarted agent continues its script).
	r, _ = play("coordination")
	if r.Text != "my answer" || len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "call_3" || string(r.ToolCalls[0].Arguments) != `{"content":"see /ws/a"}` {
		t.Errorf("third step = %+v (%s)", r, r.ToolCalls[0].Arguments)
	}
	r, _ = play("coordination")
	if r.Text != "any phase" {
		t.Errorf("phase-less step = %+v", r)
	}
	r, _ = play("final")
	if r.Text != "any phase" {
		t.Errorf("phase-less step in final = %+v", r)
	}
}

func TestScriptedWhenExhausted(t *testing.T) {
	voteTool := ToolSpec{Name: "vote"}
	tests := []struct {
		name     string
		phase    string
		answers  string
		tools    []ToolSpec
		wantVote string
		wantText string
	}{
		{name: "coordination votes for the first answer", phase: "coordination", answers: "agent2,agent1", tools: []ToolSpec{{Name: "new_answer"}, voteTool}, wantVote: "agent2"},
		{name: "coordination without answers says so", phase: "coordination", tools: []ToolSpec{voteTool}, wantText: "(script finished)"},
		{name: "coordination without a vote tool", phase: "coordination", answers: "agent1", tools: []ToolSpec{{Name: "new_answer"}}, wantText: "(script finished)"},
		{name: "final", phase: "final", answers: "agent1", wantText: "(script finished)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestScripted(t, []configs.ScriptStep{{Phase: "final", Text: "only final"}})
			req := Request{Phase: tt.phase, Tools: tt.tools, Vars: map[string]string{"ANSWERS": tt.answers}}
			if tt.phase == "final" {
				if r, err := b.Generate(testContext(t), req, nil); err != nil || r.Text != "only final" {
					t.Fatalf("first final = %+v, %v", r, err)
				}
			}
			for i := 0; i < 2; i++ { // stays exhausted
				r, err := b.Generate(testContext(t), req, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tt.wantVote != "" {
					if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "vote" {
						t.Fatalf("want a vote, got %+v", r)
					}
					var args struct {
						AgentID string `json:"agent_id"`
					}
					if err := json.Unmarshal(r.ToolCalls[0].Arguments, &args); err != nil || args.AgentID != tt.wantVote {
						t.Errorf("vote args = %s", r.ToolCalls[0].Arguments)
					}
				} else if r.Text != tt.wantText || len(r.ToolCalls) != 0 {
					t.Errorf("reply = %+v, want text %q", r, tt.wantText)
				}
			}
		})
	}
}

func TestScriptedWaitFor(t *testing.T) {
	dir := t.TempDir()
	b := newTestScripted(t, []configs.ScriptStep{
		{WaitFor: "${TEMP_WORKSPACE}/agent1/ready.txt", Text: "saw it"},
		{Text: "next"},
	})
	vars := map[string]string{"TEMP_WORKSPACE": dir}
	target := filepath.Join(dir, "agent1", "ready.txt")

	// Cancelled while waiting: the step has not replied, so it is played again next time.
	ctx, cancel := context.WithCancel(testContext(t))
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(started)
		_, err := b.Generate(ctx, Request{Vars: vars}, nil)
		done <- err
	}()
	receive(t, started, "start of the waiting call")
	cancel()
	if err := receive(t, done, "return of the cancelled wait"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: err = %v", err)
	}

	// Now the file appears while the call waits.
	type reply struct {
		r   *Response
		err error
	}
	result := make(chan reply, 1)
	waitCtx := testContext(t)
	go func() {
		r, err := b.Generate(waitCtx, Request{Vars: vars}, nil)
		result <- reply{r, err}
	}()
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, result, "reply once the file appeared"); got.err != nil || got.r.Text != "saw it" {
		t.Fatalf("reply = %+v, %v", got.r, got.err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatal(err)
	}
	r, err := b.Generate(testContext(t), Request{Vars: vars}, nil)
	if err != nil || r.Text != "next" {
		t.Errorf("after wait_for: %+v %v", r, err)
	}
}

func TestScriptedWaitForTimesOutWithContext(t *testing.T) {
	b := newTestScripted(t, []configs.ScriptStep{{WaitFor: filepath.Join(t.TempDir(), "never")}})
	ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Generate(ctx, Request{}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
}

func TestScriptedBlockUntilCancelledThenContinues(t *testing.T) {
	for _, preCancelled := range []bool{false, true} {
		b := newTestScripted(t, []configs.ScriptStep{
			{Phase: "coordination", Block: true},
			{Phase: "coordination", Text: "after restart"},
		})
		ctx, cancel := context.WithCancel(testContext(t))
		if preCancelled {
			cancel()
		}
		done := make(chan error, 1)
		go func() {
			_, err := b.Generate(ctx, Request{Phase: "coordination"}, nil)
			done <- err
		}()
		cancel()
		if err := receive(t, done, "return of the blocked step"); !errors.Is(err, context.Canceled) {
			t.Fatalf("blocked step (pre-cancelled %v): err = %v", preCancelled, err)
		}
		r, err := b.Generate(testContext(t), Request{Phase: "coordination"}, nil)
		if err != nil || r.Text != "after restart" {
			t.Fatalf("after restart (pre-cancelled %v): %+v %v", preCancelled, r, err)
		}
	}
}

func TestScriptedRejectsBadScript(t *testing.T) {
	for name, steps := range map[string][]configs.ScriptStep{
		"tool call sans name": {{ToolCalls: []configs.ScriptToolCall{{Args: map[string]any{"a": 1}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(configs.Backend{Type: "scripted", Script: steps}, Options{}); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

// A restart that lands before a block step started (the execution was cancelled before it
// reached the model) is the restart the step stands for: the next execution goes on with the
// following step instead of waiting for a second restart that may never come.
func TestScriptedBlockAfterEarlyRestart(t *testing.T) {
	coord := func(answers, prompt string, msgs ...Message) Request {
		return Request{Phase: "coordination", Vars: map[string]string{"ANSWERS": answers},
			Messages: append([]Message{{Role: "user", Content: prompt}}, msgs...)}
	}
	vote := configs.ScriptStep{Phase: "coordination", ToolCalls: []configs.ScriptToolCall{{Name: "vote", Args: map[string]any{"agent_id": "agent1"}}}}
	write := configs.ScriptStep{Phase: "coordination", ToolCalls: []configs.ScriptToolCall{{Name: "write_file", Args: map[string]any{"path": "a"}}}}
	answer := configs.ScriptStep{Phase: "coordination", ToolCalls: []configs.ScriptToolCall{{Name: "new_answer", Args: map[string]any{"content": "x"}}}}
	block := configs.ScriptStep{Phase: "coordination", Block: true}
	afterWrite := []Message{{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Name: "write_file"}}}, {Role: "tool", ToolCallID: "call_1", Content: "ok"}}

	type call struct {
		req       Request
		wantBlock bool
		wantTool  string
	}
	tests := []struct {
		name  string
		steps []configs.ScriptStep
		calls []call
	}{
		{name: "restart before the first step: the block is skipped",
			steps: []configs.ScriptStep{block, vote},
			calls: []call{{req: coord("agent1", "task; agent1 answered"), wantTool: "vote"}}},
		{name: "no restart yet: the first block waits",
			steps: []configs.ScriptStep{block, vote},
			calls: []call{{req: coord("", "task"), wantBlock: true}, {req: coord("agent1", "task; agent1 answered"), wantTool: "vote"}}},
		{name: "restart while tools ran, before the block's call: skipped",
			steps: []configs.ScriptStep{write, block, vote},
			calls: []call{{req: coord("", "task"), wantTool: "write_file"}, {req: coord("agent1", "task; agent1 answered"), wantTool: "vote"}}},
		{name: "same execution goes on: the block waits",
			steps: []configs.ScriptStep{write, block, vote},
			calls: []call{{req: coord("", "task"), wantTool: "write_file"}, {req: coord("", "task", afterWrite...), wantBlock: true}, {req: coord("agent1", "task; agent1 answered"), wantTool: "vote"}}},
		{name: "a revised answer is a restart too",
			steps: []configs.ScriptStep{write, block, vote},
			calls: []call{{req: coord("agent1", "task; agent1: v1"), wantTool: "write_file"}, {req: coord("agent1", "task; agent1: v2"), wantTool: "vote"}}},
		{name: "after an answer the next execution's block waits for the next restart",
			steps: []configs.ScriptStep{answer, block, vote},
			calls: []call{{req: coord("", "task"), wantTool: "new_answer"}, {req: coord("agent1,agent2", "task; two answers"), wantBlock: true}, {req: coord("agent1,agent2", "task; agent1 revised"), wantTool: "vote"}}},
		{name: "two blocks and one early restart: the second still waits",
			steps: []configs.ScriptStep{block, block, vote},
			calls: []call{{req: coord("agent1", "task; agent1 answered"), wantBlock: true}, {req: coord("agent1", "task; agent1 revised"), wantTool: "vote"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestScripted(t, tt.steps)
			for i, c := range tt.calls {
				ctx, cancel := context.WithCancel(testContext(t))
				type reply struct {
					r   *Response
					err error
				}
				done := make(chan reply, 1)
				go func() {
					r, err := b.Generate(ctx, c.req, nil)
					done <- reply{r, err}
				}()
				if c.wantBlock {
					// The call must still be waiting: it ends only when cancelled.
					select {
					case got := <-done:
						t.Fatalf("call %d returned %+v, %v; want it to block", i+1, got.r, got.err)
					case <-time.After(50 * time.Millisecond):
					}
					cancel()
					if got := receive(t, done, "return of the cancelled block"); !errors.Is(got.err, context.Canceled) {
						t.Fatalf("call %d: err = %v", i+1, got.err)
					}
					continue
				}
				got := receive(t, done, fmt.Sprintf("reply to call %d (a block step waited for a restart that had already come)", i+1))
				cancel()
				if got.err != nil || len(got.r.ToolCalls) != 1 || got.r.ToolCalls[0].Name != c.wantTool {
					t.Fatalf("call %d: %+v, %v; want %s", i+1, got.r, got.err, c.wantTool)
				}
			}
		})
	}
}

// In the final phase nothing restarts an agent: a block step waits whatever it is shown.
func TestScriptedBlockInFinalWaits(t *testing.T) {
	b := newTestScripted(t, []configs.ScriptStep{{Phase: "final", Block: true}})
	ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Generate(ctx, Request{Phase: "final", Vars: map[string]string{"ANSWERS": "agent1"}}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
}
