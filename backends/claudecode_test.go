package backends

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeclaude"
)

func TestMain(m *testing.M) {
	if fakeclaude.IsInvoked() { // re-executed as the claude CLI
		os.Exit(fakeclaude.Main())
	}
	os.Exit(m.Run())
}

// fakeCLI puts the fake claude CLI first on PATH with script; it returns the fake's log file.
func fakeCLI(t *testing.T, script fakeclaude.Script) string {
	t.Helper()
	env, log, err := fakeclaude.Setup(t.TempDir(), script)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return log
}

func newTestClaudeCode(t *testing.T, extra map[string]any) *cliBackend {
	t.Helper()
	b, err := New(configs.Backend{Type: "claude_code", Model: "sonnet", Extra: extra}, Options{AgentID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	cb := b.(*cliBackend)
	t.Cleanup(func() { _ = cb.Close() })
	return cb
}

func fakeLog(t *testing.T, path string) []fakeclaude.Record {
	t.Helper()
	recs, err := fakeclaude.ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

var (
	ccWriteSpec = ToolSpec{Name: "write_file", Description: "Write a file.", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}}}
	ccAnswerSpec = ToolSpec{Name: "new_answer", Description: "Post your answer.", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}, "required": []string{"content"}}}
)

func TestClaudeCodeMissingCLI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	cfg := configs.Backend{Type: "claude_code", Model: "claude-sonnet-4-5"}
	// No key needed, and New succeeds: the preflight reports a missing CLI before a run.
	if err := CheckKey(cfg, func(string) (string, bool) { return "", false }); err != nil {
		t.Fatalf("CheckKey: %v", err)
	}
	b, err := New(cfg, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if b.Provider() != "claude_code" || b.Model() != "claude-sonnet-4-5" {
		t.Errorf("Provider/Model = %q/%q", b.Provider(), b.Model())
	}
	if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil); !errors.Is(err, ErrClaudeCodeMissing) {
		t.Fatalf("Generate err = %v, want ErrClaudeCodeMissing", err)
	}
}

func TestClaudeCodeBadOptions(t *testing.T) {
	for _, extra := range []map[string]any{{"max_turns": "many"}, {"max_thinking_tokens": -1}} {
		if _, err := New(configs.Backend{Type: "claude_code", Extra: extra}, Options{}); err == nil {
			t.Errorf("New with %v: no error", extra)
		}
	}
}

// A coordination execution as the orchestrator drives it: the model's calls through the bridge
// come back as tool calls, their results go back to the waiting CLI, and the workflow call ends
// the execution; ending its context ends the CLI.
func TestClaudeCodeCoordination(t *testing.T) {
	log := fakeCLI(t, fakeclaude.Script{Coordination: []fakeclaude.Step{
		{Tool: "write_file", Args: map[string]any{"path": "a.txt", "content": "A"}},
		{Tool: "write_file", Args: map[string]any{"path": "/etc/passwd", "content": "x"}},
		{Text: "Both tried."},
		{Tool: "new_answer", Args: map[string]any{"content": "the answer"}},
	}})
	b := newTestClaudeCode(t, map[string]any{"max_turns": 7, "max_thinking_tokens": 2048})
	ctx, cancel := context.WithCancel(testContext(t))
	req := Request{System: "You are agent1.", Messages: []Message{{Role: "user", Content: "Do the task."}},
		Tools: []ToolSpec{ccWriteSpec, ccAnswerSpec}, Phase: "coordination"}

	var events wireEvents
	results := []Message{
		{Content: `{"path":"a.txt","written":true}`},
		{Content: `{"error":"Access denied: /etc/passwd is outside the agent's directories","denied":true}`, IsError: true},
	}
	var total Usage
	for i, want := range []string{"write_file", "write_file"} {
		resp, err := b.Generate(ctx, req, events.add)
		if err != nil {
			t.Fatalf("Generate %d: %v", i, err)
		}
		if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != want {
			t.Fatalf("Generate %d: tool calls %+v, want one %s", i, resp.ToolCalls, want)
		}
		total.Add(resp.Usage)
		req.Messages = append(req.Messages,
			Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls},
			Message{Role: "tool", ToolCallID: resp.ToolCalls[0].ID, ToolName: want, Content: results[i].Content, IsError: results[i].IsError})
	}
	resp, err := b.Generate(ctx, req, events.add)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "new_answer" || string(resp.ToolCalls[0].Arguments) != `{"content":"the answer"}` {
		t.Fatalf("tool calls %+v, want new_answer with the answer", resp.ToolCalls)
	}
	if resp.Text != "Both tried." || events.text() != "Both tried." {
		t.Errorf("text %q, streamed %q", resp.Text, events.text())
	}
	total.Add(resp.Usage)
	// The turn never reached its result: usage comes from the four assistant messages.
	if total != (Usage{InputTokens: 4 * 150, OutputTokens: 4, CachedInputTokens: 4 * 50}) {
		t.Errorf("usage %+v", total)
	}
	if n := len(events.kinds(EventToolCall)); n != 3 {
		t.Errorf("%d tool call events, want 3", n)
	}

	recs := fakeLog(t, log)
	start := recs[0]
	for _, flag := range []string{"--append-system-prompt=You are agent1.\n\n" + ccToolNote, "--model=sonnet", "--max-turns=7", "--max-thinking-tokens=2048", "--strict-mcp-config", "--allowedTools=mcp__massgen"} {
		if !slices.Contains(start.Args, flag) {
			t.Errorf("the CLI was started without %s: %q", flag, start.Args)
		}
	}
	if slices.Sort(start.Tools); !slices.Equal(start.Tools, []string{"new_answer", "write_file"}) {
		t.Errorf("the CLI was offered %v", start.Tools)
	}
	var calls []fakeclaude.Record
	for _, r := range recs {
		if r.Event == "call" {
			calls = append(calls, r)
		}
	}
	if len(calls) != 2 || calls[0].Output != results[0].Content || calls[0].IsError ||
		calls[1].Output != results[1].Content || !calls[1].IsError {
		t.Fatalf("the model saw %+v, want the orchestrator's results", calls)
	}

	// The workflow call is pending in the CLI; the execution ends, and so does the CLI.
	proc := b.conv.proc
	cancel()
	select {
	case <-proc.exited:
	case <-time.After(testTimeout):
		t.Fatal("the claude CLI outlived its execution")
	}
}

// The final presentation: a reply without tool calls is the CLI's result, with the result's
// usage, and the CLI exits once its turn is over.
func TestClaudeCodeFinal(t *testing.T) {
	fakeCLI(t, fakeclaude.Script{Final: []fakeclaude.Step{{Text: "Working on it."}, {Text: "The final answer."}}})
	b := newTestClaudeCode(t, nil)
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "Present."}}, Phase: "final"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "The final answer." || len(resp.ToolCalls) != 0 {
		t.Fatalf("reply %+v", resp)
	}
	// The result's totals (2 messages: 2*150 in, 2*50 of it cached, 2*20 out) win over the
	// messages' one token; its total_cost_usd is the turn's cost.
	if resp.Usage != (Usage{InputTokens: 300, OutputTokens: 40, CachedInputTokens: 100, CostUSD: 0.02}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	select {
	case <-b.conv.last.exited:
	case <-time.After(testTimeout):
		t.Fatal("the claude CLI did not exit after its turn")
	}
}

// A reply without a workflow call ends the CLI's turn; the orchestrator's reminder resumes the
// session in a new CLI.
func TestClaudeCodeResume(t *testing.T) {
	log := fakeCLI(t, fakeclaude.Script{Coordination: []fakeclaude.Step{
		{Text: "I think it is 4.", End: true},
		{Tool: "new_answer", Args: map[string]any{"content": "4"}},
	}})
	b := newTestClaudeCode(t, nil)
	ctx := testContext(t)
	req := Request{Messages: []Message{{Role: "user", Content: "2+2?"}}, Tools: []ToolSpec{ccAnswerSpec}}
	resp, err := b.Generate(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "I think it is 4." || len(resp.ToolCalls) != 0 {
		t.Fatalf("first reply %+v", resp)
	}
	req.Messages = append(req.Messages, Message{Role: "assistant", Content: resp.Text},
		Message{Role: "user", Content: "You must finish by calling the new_answer tool."})
	resp, err = b.Generate(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "new_answer" {
		t.Fatalf("second reply %+v", resp)
	}
	var starts []fakeclaude.Record
	var users []string
	for _, r := range fakeLog(t, log) {
		switch r.Event {
		case "start":
			starts = append(starts, r)
		case "user":
			users = append(users, r.Text)
		}
	}
	if len(starts) != 2 || !slices.Contains(starts[1].Args, "--resume="+starts[0].Session) {
		t.Fatalf("want a second CLI resuming %q: %+v", starts[0].Session, starts)
	}
	// The CLI keeps sessions per working directory: the resumed one runs where the first ran.
	if starts[0].Dir == "" || starts[1].Dir != starts[0].Dir {
		t.Errorf("the CLIs ran in %q and %q", starts[0].Dir, starts[1].Dir)
	}
	if !slices.Equal(users, []string{"2+2?", "You must finish by calling the new_answer tool."}) {
		t.Errorf("the CLI was told %q", users)
	}
}

// A CLI that does not report its session (no init message) is refused: its tools are unknown.
func TestClaudeCodeRefusesASessionWithoutInit(t *testing.T) {
	fakeCLI(t, fakeclaude.Script{NoInit: true, Final: []fakeclaude.Step{{Text: "hello"}}})
	b := newTestClaudeCode(t, nil)
	_, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "go"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "before reporting its session") {
		t.Fatalf("err = %v", err)
	}
}

// A CLI that offers tools of its own is refused before any tool runs.
func TestClaudeCodeRefusesOwnTools(t *testing.T) {
	log := fakeCLI(t, fakeclaude.Script{OwnTools: []string{"Bash", "Write"},
		Coordination: []fakeclaude.Step{{Tool: "write_file", Args: map[string]any{"path": "a", "content": "b"}}}})
	b := newTestClaudeCode(t, nil)
	_, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "go"}}, Tools: []ToolSpec{ccWriteSpec, ccAnswerSpec}}, nil)
	if !errors.Is(err, ErrClaudeCodeOwnTools) || !strings.Contains(err.Error(), "Bash, Write") {
		t.Fatalf("err = %v, want ErrClaudeCodeOwnTools naming Bash, Write", err)
	}
	select {
	case <-b.conv.proc.exited:
	case <-time.After(testTimeout):
		t.Fatal("the refused CLI is still running")
	}
	for _, r := range fakeLog(t, log) {
		if r.Event == "call" && !r.IsError {
			t.Errorf("a tool ran for a refused CLI: %+v", r)
		}
	}
}

// BenchmarkClaudeCodeBridgeCall: one tool call of the model through the bridge (MCP over
// loopback HTTP) to the backend and its answer back: what claude_code adds to every tool call.
func BenchmarkClaudeCodeBridgeCall(b *testing.B) {
	bridge, err := newCCBridge([]ToolSpec{ccWriteSpec}, 0, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer bridge.Close()
	go func() {
		for {
			select {
			case c := <-bridge.calls:
				c.reply <- ccResult{text: `{"written":true}`}
			case <-bridge.done:
				return
			}
		}
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: bridge.url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"path": "a.txt", "content": "x"}
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// The bridge is connected before the first request: the CLI connects MCP servers in the
// background unless told not to, and a session whose bridge is still "pending" is refused (its
// first request would go out without massgen's tools).
func TestClaudeCodeBridgeConnectedBeforeFirstRequest(t *testing.T) {
	log := fakeCLI(t, fakeclaude.Script{Coordination: []fakeclaude.Step{{Tool: "new_answer", Args: map[string]any{"content": "42"}}}})
	b := newTestClaudeCode(t, nil)
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "go"}}, Tools: []ToolSpec{ccAnswerSpec}}, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "new_answer" {
		t.Fatalf("reply %+v", resp)
	}
	if recs := fakeLog(t, log); recs[0].MCP != "connected" {
		t.Fatalf("the CLI reported massgen's server %q in its init message", recs[0].MCP)
	}
}

// A call to a tool that is not massgen's is answered with an error by the CLI (it has no such
// tool) and the agent goes on; the model's next calls work.
func TestClaudeCodeStrayCallGetsAnErrorResult(t *testing.T) {
	log := fakeCLI(t, fakeclaude.Script{Coordination: []fakeclaude.Step{
		{Stray: "Bash"},
		{Tool: "new_answer", Args: map[string]any{"content": "42"}},
	}})
	b := newTestClaudeCode(t, nil)
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "go"}}, Tools: []ToolSpec{ccAnswerSpec}}, nil)
	if err != nil {
		t.Fatalf("one stray call stopped the agent: %v", err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "new_answer" {
		t.Fatalf("reply %+v", resp)
	}
	var stray []fakeclaude.Record
	for _, r := range fakeLog(t, log) {
		if r.Event == "stray" {
			stray = append(stray, r)
		}
	}
	if len(stray) != 1 || !stray[0].IsError || !strings.Contains(stray[0].Output, "No such tool available: Bash") {
		t.Fatalf("the model saw %+v, want an error result for Bash", stray)
	}
}

// A second call to a tool that is not massgen's stops the agent, and the message says what
// happened: the model called tools that do not exist (the CLI offered none of its own).
func TestClaudeCodeRepeatedStrayCallStops(t *testing.T) {
	fakeCLI(t, fakeclaude.Script{Coordination: []fakeclaude.Step{
		{Stray: "Bash"},
		{Stray: "Write"},
		{Tool: "new_answer", Args: map[string]any{"content": "42"}},
	}})
	b := newTestClaudeCode(t, nil)
	_, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "go"}}, Tools: []ToolSpec{ccAnswerSpec}}, nil)
	if !errors.Is(err, ErrCLIStrayCalls) || errors.Is(err, ErrClaudeCodeOwnTools) {
		t.Fatalf("err = %v, want ErrCLIStrayCalls (not ErrClaudeCodeOwnTools)", err)
	}
	for _, want := range []string{"Write", "Bash", "refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the message %q does not say %s", err, want)
		}
	}
}

// The CLI gets only the environment it needs: not massgen's other keys and settings.
func TestClaudeCodeEnvironment(t *testing.T) {
	log := fakeCLI(t, fakeclaude.Script{Final: []fakeclaude.Step{{Text: "hi"}}})
	t.Setenv("OPENAI_API_KEY", "sk-other-provider")
	t.Setenv("MASSGEN_SECRET_SETTING", "x")
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	b := newTestClaudeCode(t, nil)
	if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}, Phase: "final"}, nil); err != nil {
		t.Fatal(err)
	}
	env := fakeLog(t, log)[0].Env
	for _, want := range []string{"PATH", "HOME", "ANTHROPIC_API_KEY", "HTTPS_PROXY", "MCP_CONNECTION_NONBLOCKING"} {
		if !slices.Contains(env, want) {
			t.Errorf("the CLI's environment lacks %s: %v", want, env)
		}
	}
	for _, not := range []string{"OPENAI_API_KEY", "MASSGEN_SECRET_SETTING", "CLAUDECODE", fakeclaude.EnvScript} {
		if slices.Contains(env, not) {
			t.Errorf("the CLI's environment has %s", not)
		}
	}
}

// The agent's private folder (the CLI's working directory, and each run's bridge address and
// secret) is private while it lives, a run's files go with the run, and Close removes it all.
func TestClaudeCodePrivateFolder(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	fakeCLI(t, fakeclaude.Script{Final: []fakeclaude.Step{{Text: "hi"}}})
	b := newTestClaudeCode(t, nil)
	if _, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}, Phase: "final"}, nil); err != nil {
		t.Fatal(err)
	}
	dir := b.private.Path
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(dir), cliPrefix+"-") {
		t.Fatalf("private folder %s: %v %v", dir, fi.Mode(), err)
	}
	select {
	case <-b.conv.last.exited:
	case <-time.After(testTimeout):
		t.Fatal("the CLI did not exit")
	}
	deadline := time.Now().Add(testTimeout)
	for {
		runs, _ := os.ReadDir(filepath.Join(dir, "runs"))
		if len(runs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ended run's files are still there: %v", runs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Close left %s (%v)", dir, err)
	}
}
