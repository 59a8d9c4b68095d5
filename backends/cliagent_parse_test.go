package backends

import (
	"errors"
	"testing"
)

// What each driver makes of its CLI's output lines (as the versions in cli-agents.md print
// them): the session, text, massgen's calls, calls of tools that do not exist, the end of a
// turn with its tokens, and what stops the agent.
func TestCLIParse(t *testing.T) {
	codex, gemini := &codexDriver{}, &geminiDriver{}
	tests := []struct {
		name string
		drv  cliDriver
		line string
		want []cliEvent
		err  error
	}{
		{"codex session", codex, `{"type":"thread.started","thread_id":"01a2"}`, []cliEvent{{kind: evSession, session: "01a2"}}, nil},
		{"codex text", codex, `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hello"}}`, []cliEvent{{kind: evText, text: "hello"}}, nil},
		{"codex massgen call", codex, `{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"massgen","tool":"write_file","arguments":{},"status":"in_progress"}}`, []cliEvent{{kind: evCall, id: "item_1", name: "write_file"}}, nil},
		{"codex call completed", codex, `{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"massgen","tool":"write_file","status":"completed"}}`, nil, nil},
		{"codex own command", codex, `{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"rm -rf /","status":"in_progress"}}`, nil, ErrCLIOwnTools},
		{"codex warning", codex, `{"type":"error","message":"Reconnecting... 2/5"}`, nil, nil},
		{"codex end", codex, `{"type":"turn.completed","usage":{"input_tokens":30,"cached_input_tokens":0,"output_tokens":6}}`, []cliEvent{{kind: evResult, usage: Usage{InputTokens: 30, OutputTokens: 6}}}, nil},
		{"gemini session", gemini, `{"type":"init","session_id":"29fb","model":"gemini-2.5-flash"}`, []cliEvent{{kind: evSession, session: "29fb"}}, nil},
		{"gemini user echo", gemini, `{"type":"message","role":"user","content":"say hi"}`, nil, nil},
		{"gemini text", gemini, `{"type":"message","role":"assistant","content":"hel","delta":true}`, []cliEvent{{kind: evText, text: "hel"}}, nil},
		{"gemini massgen call", gemini, `{"type":"tool_use","tool_name":"mcp_massgen_write_file","tool_id":"t1","parameters":{}}`, []cliEvent{{kind: evCall, id: "t1", name: "write_file"}}, nil},
		{"gemini stray", gemini, `{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t2","parameters":{}}`, []cliEvent{{kind: evStray, name: "run_shell_command"}}, nil},
		{"gemini end", gemini, `{"type":"result","status":"success","stats":{"input_tokens":30,"output_tokens":6}}`, []cliEvent{{kind: evResult, usage: Usage{InputTokens: 30, OutputTokens: 6}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.drv.parse([]byte(tt.line), &cliParse{})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("events %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
	// A failed turn is an error naming the CLI's reason.
	st := &cliParse{}
	_, _ = gemini.parse([]byte(`{"type":"error","severity":"error","message":"quota exceeded"}`), st)
	evs, _ := gemini.parse([]byte(`{"type":"result","status":"error"}`), st)
	if len(evs) != 1 || evs[0].err == nil || evs[0].err.Error() != "gemini_cli: the gemini CLI ended its turn with error: quota exceeded" {
		t.Errorf("gemini failure: %+v", evs)
	}
	evs, _ = codex.parse([]byte(`{"type":"turn.failed","error":{"message":"unexpected status 401"}}`), &cliParse{})
	if len(evs) != 1 || evs[0].err == nil || evs[0].err.Error() != "codex: the codex CLI's turn failed: unexpected status 401" {
		t.Errorf("codex failure: %+v", evs)
	}
}
