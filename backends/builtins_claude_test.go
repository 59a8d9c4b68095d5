package backends

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A Claude reply that searches the web, runs code, cites a page and then calls one of our
// tools, as the Messages API streams it.
var claudeServerToolsReply = anthropicScript{
	{"message_start", msgStart},
	{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"go 1.26 release\"}"}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":0}`},
	{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"Go 1.26 Release Notes","url":"https://go.dev/doc/go1.26","encrypted_content":"enc1","page_age":"2026"},{"type":"web_search_result","title":"Other","url":"https://example.com/other","encrypted_content":"enc2"}]}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":1}`},
	{"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"","citations":[]}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":"Go 1.26 is out","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_index":"ix"}}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Go 1.26 is out."}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":2}`},
	{"content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"server_tool_use","id":"srvtoolu_2","name":"code_execution","input":{}}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"code\": \"print(6*7)\"}"}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":3}`},
	{"content_block_start", `{"type":"content_block_start","index":4,"content_block":{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_2","content":{"type":"code_execution_result","stdout":"42\n","stderr":"","return_code":0,"content":[]}}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":4}`},
	{"content_block_start", `{"type":"content_block_start","index":5,"content_block":{"type":"tool_use","id":"toolu_W","name":"write_file","input":{}}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":5,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a.txt\",\"content\":\"42\"}"}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":5}`},
	{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":50,"server_tool_use":{"web_search_requests":1}}}`},
	{"message_stop", `{"type":"message_stop"}`},
}

const claudeServerToolsText = "Go 1.26 is out." +
	"\n\n```python\nprint(6*7)\n```\n" +
	"\n\nCode execution output:\n```\n42\n```\n" +
	"\n\nSources:\n1. Go 1.26 Release Notes - https://go.dev/doc/go1.26\n"

// enable_web_search and enable_code_execution declare Anthropic's server tools ahead of ours,
// with the code execution beta (and the config's betas) in anthropic-beta and ?beta=true, as
// the SDK's beta client sends them; the searches, code, output and cited pages reach the answer
// text, and the server blocks go back unchanged in the next turn.
func TestClaudeServerTools(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		if rec.count() == 1 {
			claudeServerToolsReply.play(w)
			return
		}
		textOnlyReply.play(w)
	}))
	defer srv.Close()
	b := newTestClaude(t, srv.URL, map[string]any{
		"enable_web_search":     true,
		"enable_code_execution": true,
		"betas":                 []any{"files-api-2025-04-14"},
	})
	var log wireEvents
	msgs := []Message{{Role: "user", Content: "what's new in go, and 6*7?"}}
	resp, err := b.Generate(testContext(t), Request{Messages: msgs, Tools: []ToolSpec{testWriteFileTool}}, log.add)
	if err != nil {
		t.Fatal(err)
	}

	rec.mu.Lock()
	path, header := rec.paths[0], rec.header[0]
	rec.mu.Unlock()
	if path != "/v1/messages?beta=true" {
		t.Errorf("path = %s, want the beta endpoint", path)
	}
	if got := header.Get("anthropic-beta"); got != "files-api-2025-04-14,code-execution-2025-05-22" {
		t.Errorf("anthropic-beta = %q", got)
	}
	tools := rec.bodies[0]["tools"].([]any)
	if len(tools) != 3 {
		t.Fatalf("tools = %s", mustJSON(t, tools))
	}
	if got := mustJSON(t, tools[0]); got != `{"name":"web_search","type":"web_search_20250305"}` {
		t.Errorf("tools[0] = %s", got)
	}
	if got := mustJSON(t, tools[1]); got != `{"name":"code_execution","type":"code_execution_20250522"}` {
		t.Errorf("tools[1] = %s", got)
	}
	if wireDig(tools[2], "name") != "write_file" {
		t.Errorf("tools[2] = %s", mustJSON(t, tools[2]))
	}
	for _, k := range []string{"enable_web_search", "enable_code_execution", "betas"} {
		if _, ok := rec.bodies[0][k]; ok {
			t.Errorf("%s was sent in the body", k)
		}
	}

	if resp.Text != claudeServerToolsText {
		t.Errorf("text =\n%q\nwant\n%q", resp.Text, claudeServerToolsText)
	}
	if log.text() != resp.Text {
		t.Errorf("streamed text =\n%q\nwant the reply's", log.text())
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "write_file" {
		t.Fatalf("tool calls = %+v: server tool calls must not be returned", resp.ToolCalls)
	}

	// The next turn carries the server blocks as received, ahead of the tool_use.
	msgs = append(msgs, Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls},
		Message{Role: "tool", ToolCallID: "toolu_W", ToolName: "write_file", Content: "wrote a.txt"})
	if _, err := b.Generate(testContext(t), Request{Messages: msgs, Tools: []ToolSpec{testWriteFileTool}}, nil); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, blk := range wireDig(rec.last(), "messages", 1, "content").([]any) {
		types = append(types, blk.(map[string]any)["type"].(string))
	}
	want := "server_tool_use web_search_tool_result text server_tool_use code_execution_tool_result tool_use"
	if strings.Join(types, " ") != want {
		t.Errorf("assistant turn blocks = %v, want %s", types, want)
	}
	if got := wireDig(rec.last(), "messages", 1, "content", 1, "content", 0, "encrypted_content"); got != "enc1" {
		t.Errorf("search result not sent back as received: encrypted_content = %v", got)
	}
}

// Without the switches, no server tools and no beta header.
func TestClaudeServerToolsOff(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		textOnlyReply.play(w)
	}))
	defer srv.Close()
	b := newTestClaude(t, srv.URL, map[string]any{"enable_web_search": false})
	if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.last()["tools"]; ok || rec.header[0].Get("anthropic-beta") != "" || rec.paths[0] != "/v1/messages" {
		t.Errorf("tools %v, beta %q, path %s", rec.last()["tools"], rec.header[0].Get("anthropic-beta"), rec.paths[0])
	}
}

// A long server-tool turn the API pauses (stop_reason pause_turn) is sent back to be continued;
// the reply is the whole turn.
func TestClaudePauseTurnIsContinued(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		if rec.count() == 1 {
			anthropicScript{
				{"message_start", msgStart},
				{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
				{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Searching. "}}`},
				{"content_block_stop", `{"type":"content_block_stop","index":0}`},
				{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`},
				{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"q\"}"}}`},
				{"content_block_stop", `{"type":"content_block_stop","index":1}`},
				{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"pause_turn","stop_sequence":null},"usage":{"output_tokens":5}}`},
				{"message_stop", `{"type":"message_stop"}`},
			}.play(w)
			return
		}
		textOnlyReply.play(w)
	}))
	defer srv.Close()
	b := newTestClaude(t, srv.URL, map[string]any{"enable_web_search": true})
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Searching. done" || resp.Usage.OutputTokens != 5+7 {
		t.Errorf("resp = %+v", resp)
	}
	if rec.count() != 2 {
		t.Fatalf("requests = %d, want 2", rec.count())
	}
	last := wireDig(rec.last(), "messages", 1)
	if wireDig(last, "role") != "assistant" || wireDig(last, "content", 1, "type") != "server_tool_use" {
		t.Errorf("continuation does not send the paused turn back: %s", mustJSON(t, last))
	}
}
