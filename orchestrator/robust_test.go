package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
)

// A hostile or broken model reply never crashes the run: every odd tool call gets an error
// result and the agent goes on; a huge tool result is cut to maxToolResultBytes with a note.
func TestHostileToolCallsAreResultsNotCrashes(t *testing.T) {
	big := strings.Repeat("é", 1<<20) // 2 MB of two-byte runes
	many := make([]backends.ToolCall, 2000)
	for i := range many {
		many[i] = backends.ToolCall{ID: "dup", Name: "no_such_tool", Arguments: json.RawMessage(`{}`)}
	}
	tests := []struct {
		name  string
		calls []backends.ToolCall
		check func(t *testing.T, results []backends.Message)
	}{
		{name: "malformed json", calls: []backends.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path": `)}}},
		{name: "non-object json", calls: []backends.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`[1,2]`)}}},
		{name: "null arguments", calls: []backends.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`null`)}}},
		{name: "unknown tool", calls: []backends.ToolCall{{ID: "c1", Name: "rm_rf_everything", Arguments: json.RawMessage(`{}`)}}},
		{name: "empty name", calls: []backends.ToolCall{{ID: "", Name: "", Arguments: nil}}},
		{name: "huge arguments", calls: []backends.ToolCall{call("c1", "read_file", map[string]string{"path": big})}},
		{name: "thousands of calls, duplicate ids", calls: many,
			check: func(t *testing.T, results []backends.Message) {
				for i, m := range results {
					if notRun := strings.Contains(m.Content, "not run"); notRun != (i >= 100) || !m.IsError {
						t.Fatalf("call %d of %d: %s", i, len(results), m.Content)
					}
				}
			}},
		{name: "new_answer of megabytes", calls: []backends.ToolCall{call("c1", ToolNewAnswer, map[string]string{"content": big})},
			check: func(t *testing.T, results []backends.Message) {
				if !results[0].IsError || !strings.Contains(results[0].Content, "limit") {
					t.Errorf("huge answer accepted: %.200s", results[0].Content)
				}
			}},
		{name: "new_answer non-string content", calls: []backends.ToolCall{{ID: "c1", Name: ToolNewAnswer, Arguments: json.RawMessage(`{"content": 42}`)}}},
		{name: "new_answer null", calls: []backends.ToolCall{{ID: "c1", Name: ToolNewAnswer, Arguments: json.RawMessage(`null`)}}},
		{name: "huge result", calls: []backends.ToolCall{call("c1", "read_file", map[string]string{"path": "big.txt"})},
			check: func(t *testing.T, results []backends.Message) {
				res := results[0]
				if len(res.Content) > maxToolResultBytes*11/10 {
					t.Errorf("result of %d bytes sent to the model, cap %d", len(res.Content), maxToolResultBytes)
				}
				var obj struct{ Truncated, Partial string }
				if err := json.Unmarshal([]byte(res.Content), &obj); err != nil || !strings.Contains(obj.Truncated, "bytes") || obj.Partial == "" {
					t.Errorf("truncated result is not a clear JSON note (%v): %.200s", err, res.Content)
				}
				if strings.ContainsRune(obj.Partial, '\uFFFD') {
					t.Error("truncation cut a rune in half")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fh := newFileHarness(t, "solo")
			ws := fh.ws["solo"]
			mustWrite(t, filepath.Join(ws, "big.txt"), big)
			for i := range tt.calls {
				if tt.calls[i].Name == "read_file" && strings.Contains(string(tt.calls[i].Arguments), `"big.txt"`) {
					tt.calls[i] = call(tt.calls[i].ID, "read_file", map[string]string{"path": filepath.Join(ws, "big.txt")})
				}
			}
			var results []backends.Message
			fh.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
				switch {
				case c.final():
					return textResp("final"), nil
				case c.n == 0:
					return &backends.Response{ToolCalls: tt.calls}, nil
				default:
					msgs := c.req.Messages
					for i := len(msgs) - 1; i >= 0 && msgs[i].Role == "tool"; i-- {
						results = append([]backends.Message{msgs[i]}, results...)
					}
					return answerResp("the answer"), nil
				}
			}
			res, err := fh.run(context.Background())
			if err != nil {
				t.Fatalf("run failed: %v", err)
			}
			if res.FinalAnswer != "final" {
				t.Errorf("final answer %q", res.FinalAnswer)
			}
			if len(results) != len(tt.calls) {
				t.Fatalf("%d tool results for %d calls", len(results), len(tt.calls))
			}
			for i, m := range results {
				if len(m.Content) > maxToolResultBytes*11/10 {
					t.Errorf("result %d: %d bytes", i, len(m.Content))
				}
			}
			if tt.check != nil {
				tt.check(t, results)
			} else if !results[0].IsError {
				t.Errorf("odd call got a success result: %.200s", results[0].Content)
			}
			if n := len(fh.ev.of(EventToolCall, "")); n > 100 {
				t.Errorf("%d tool calls ran for one reply", n)
			}
			for _, ev := range fh.ev.of(EventToolCall, "") {
				if n := len([]rune(ev.Args)); n > 201 {
					t.Errorf("tool call event carries %d runes of arguments", n)
				}
			}
		})
	}
}

func TestCapResultSmallUnchanged(t *testing.T) {
	for _, n := range []int{0, 1, maxToolResultBytes} {
		in := strings.Repeat("a", n)
		if got := capResult(resultOf(in)).Content; got != in {
			t.Errorf("capResult of %d bytes changed it", n)
		}
	}
	got := capResult(resultOf(strings.Repeat("a", maxToolResultBytes+1))).Content
	if !strings.Contains(got, fmt.Sprintf("%d bytes", maxToolResultBytes+1)) {
		t.Errorf("note does not give the size: %.200s", got)
	}
}

func resultOf(s string) filesystem.Result { return filesystem.Result{Content: s} }

// A model that never stops calling tools is stopped at the step cap; a backend that returns
// neither a response nor an error stops the agent instead of panicking.
func TestRunawayAndEmptyBackendStopTheAgent(t *testing.T) {
	tests := []struct {
		name       string
		fn         script
		wantReason string
	}{
		{name: "never stops calling tools", wantReason: "200 model calls", fn: func(ctx context.Context, c fakeCall) (*backends.Response, error) {
			return &backends.Response{ToolCalls: []backends.ToolCall{call("t", "list_directory", map[string]string{"path": "."})}}, nil
		}},
		{name: "nil response", wantReason: "no response", fn: func(ctx context.Context, c fakeCall) (*backends.Response, error) {
			return nil, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "alice", "bob")
			h.scripts["alice"] = tt.fn
			h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
				switch {
				case c.final():
					return textResp("bob's final"), nil
				case len(c.answers()) == 0:
					return answerResp("bob's answer"), nil
				}
				return voteResp(c.answers()[0], "only one"), nil
			}
			res, err := h.run(context.Background())
			if err != nil {
				t.Fatalf("run failed: %v", err)
			}
			if res.FinalAnswer != "bob's final" {
				t.Errorf("final answer %q", res.FinalAnswer)
			}
			stopped := h.ev.of(EventStopped, "alice")
			if len(stopped) == 0 || !strings.Contains(stopped[len(stopped)-1].Text, tt.wantReason) {
				t.Errorf("alice not stopped for %q: %+v", tt.wantReason, stopped)
			}
		})
	}
}

// A vote with a megabyte reason is accepted with the reason cut, so it cannot blow up the final
// agent's prompt; a megabyte tool name does not reach the events whole.
func TestHugeVoteReasonAndToolNameAreCut(t *testing.T) {
	huge := strings.Repeat("why ", 256<<10)
	h := newHarness(t, "alice", "bob")
	var finalPrompt string
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if len(c.answers()) == 0 {
			<-ctx.Done() // restarted once alice answers
			return nil, ctx.Err()
		}
		if c.lastMessage().Role == "tool" {
			return voteResp(c.answers()[0], huge), nil
		}
		return &backends.Response{ToolCalls: []backends.ToolCall{{ID: "x", Name: huge, Arguments: json.RawMessage(`{}`)}}}, nil
	}
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final() && c.lastMessage().Role == "user":
			finalPrompt = c.lastMessage().Content
			return textResp("final"), nil
		case len(c.answers()) == 0:
			return answerResp("alice's answer"), nil
		}
		return voteResp(c.answers()[0], huge), nil
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("run failed: %v", err)
	}
	if res.Winner != "alice" {
		t.Errorf("winner %q", res.Winner)
	}
	if finalPrompt == "" || len(finalPrompt) > 64<<10 {
		t.Errorf("final prompt of %d bytes", len(finalPrompt))
	}
	for _, ev := range h.ev.all {
		if len(ev.Tool) > 1000 || len(ev.Text) > 64<<10 {
			t.Errorf("%v event carries a %d-byte tool name, %d-byte text", ev.Kind, len(ev.Tool), len(ev.Text))
		}
	}
}
