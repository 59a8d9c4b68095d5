package orchestrator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"go.uber.org/zap"
)

// fileHarness is a two-agent run with real workspaces, a writable context path holding a
// protected file and a default-excluded .env, and real snapshots, permissions and tools.
type fileHarness struct {
	*harness
	base, project, snapRoot, tempRoot string
	ws                                map[string]string
}

func newFileHarness(t *testing.T, ids ...string) *fileHarness {
	t.Helper()
	h := newHarness(t, ids...)
	base := h.cfg.BaseDir
	fh := &fileHarness{harness: h, base: base, project: filepath.Join(base, "project"),
		snapRoot: h.cfg.Orchestrator.SnapshotStorage, tempRoot: h.cfg.Orchestrator.AgentTemporaryWorkspace,
		ws: map[string]string{}}
	for i, id := range ids {
		ws := filepath.Join(base, ".massgen", "workspaces", "workspace"+string(rune('1'+i)))
		mustMkdir(t, ws)
		h.cfg.Agents[i].Backend.CWD = ws
		fh.ws[id] = ws
	}
	mustWrite(t, filepath.Join(fh.project, "index.html"), "original index")
	mustWrite(t, filepath.Join(fh.project, ".env"), "SECRET=1")
	mustWrite(t, filepath.Join(fh.project, "keep.txt"), "protected")
	h.cfg.Orchestrator.ContextPaths = []configs.ContextPath{{
		Path: fh.project, Permission: "write", ProtectedPaths: []string{filepath.Join(fh.project, "keep.txt")},
	}}
	return fh
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func writeCall(id, path, content string) backends.ToolCall {
	return call(id, "write_file", map[string]string{"path": path, "content": content})
}

// toolResult finds the result sent back for a tool call id in the last request of an agent.
func toolResult(reqs []backends.Request, callID string) (backends.Message, bool) {
	for i := len(reqs) - 1; i >= 0; i-- {
		for _, m := range reqs[i].Messages {
			if m.Role == "tool" && m.ToolCallID == callID {
				return m, true
			}
		}
	}
	return backends.Message{}, false
}

// The whole flow on disk: tool calls next to new_answer run; a coordination agent's write to
// the context path is denied; bob, interrupted, has its partial work saved, its workspace
// cleared and its temp workspace refilled; alice sees bob's partial work under agent2; the
// final agent delivers into the context path but not over protected or excluded files.
func TestDeliveryRestartAndPermissions(t *testing.T) {
	fh := newFileHarness(t, "alice", "bob")
	wsA, wsB := fh.ws["alice"], fh.ws["bob"]
	bobWrote := make(chan struct{})
	fh.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final() && c.lastMessage().Role == "user":
			return &backends.Response{ToolCalls: []backends.ToolCall{
				writeCall("f1", filepath.Join(fh.project, "hello.txt"), "hello delivered"),
				writeCall("f2", filepath.Join(fh.project, ".env"), "SECRET=stolen"),
				writeCall("f3", filepath.Join(fh.project, "keep.txt"), "overwritten"),
			}}, nil
		case c.final():
			return textResp("delivered hello.txt"), nil
		case len(c.answers()) == 0:
			select { // answer once bob has partial work
			case <-bobWrote:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &backends.Response{ToolCalls: []backends.ToolCall{
				writeCall("w1", filepath.Join(wsA, "hello.txt"), "hi from agent one"),
				writeCall("w2", filepath.Join(fh.project, "alice.txt"), "coordination write"),
				call("a1", ToolNewAnswer, map[string]string{"content": "answer: hello.txt"}),
			}}, nil
		case c.lastMessage().Role == "tool":
			return voteResp("agent1", "mine"), nil
		default:
			return &backends.Response{ToolCalls: []backends.ToolCall{
				call("r1", "read_file", map[string]string{"path": filepath.Join(c.req.Vars["TEMP_WORKSPACE"], "agent2", "partial.txt")}),
			}}, nil
		}
	}
	fh.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case len(c.answers()) == 0 && c.n == 0:
			return &backends.Response{ToolCalls: []backends.ToolCall{writeCall("p1", filepath.Join(wsB, "partial.txt"), "partial draft")}}, nil
		case len(c.answers()) == 0:
			close(bobWrote)
			return block(ctx)
		case c.lastMessage().Role == "tool":
			return voteResp("agent1", "agent1 works"), nil
		default:
			return &backends.Response{ToolCalls: []backends.ToolCall{
				call("r2", "read_file", map[string]string{"path": filepath.Join(c.req.Vars["TEMP_WORKSPACE"], "agent1", "hello.txt")}),
			}}, nil
		}
	}
	opts := fh.options(context.Background())
	delivered := fh.journaled(&opts)
	var r *run
	fh.onRun = func(rr *run) { r = rr }
	res, err := fh.runOptions(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner != "alice" || res.FinalAnswer != "delivered hello.txt" {
		t.Fatalf("result = %+v", res)
	}

	// The context path: the coordination write denied, the final write delivered, the
	// protected and excluded files untouched.
	if exists(filepath.Join(fh.project, "alice.txt")) {
		t.Error("a coordination agent wrote into the context path")
	}
	if got := readFile(t, filepath.Join(fh.project, "hello.txt")); got != "hello delivered" {
		t.Errorf("delivered hello.txt = %q", got)
	}
	for file, want := range map[string]string{".env": "SECRET=1", "keep.txt": "protected", "index.html": "original index"} {
		if got := readFile(t, filepath.Join(fh.project, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}

	// Tool calls in the same reply as new_answer ran: alice's file is in her snapshot.
	if got := readFile(t, filepath.Join(fh.snapRoot, "alice", "hello.txt")); got != "hi from agent one" {
		t.Errorf("alice's snapshot hello.txt = %q", got)
	}
	// bob's partial work was saved on restart, then its workspace cleared.
	if got := readFile(t, filepath.Join(fh.snapRoot, "bob", "partial.txt")); got != "partial draft" {
		t.Errorf("bob's snapshot partial.txt = %q", got)
	}
	if exists(filepath.Join(wsB, "partial.txt")) {
		t.Error("bob's workspace was not cleared on restart")
	}
	// Temp workspaces hold the others' snapshots under anonymous ids; the final agent also
	// sees its own.
	if got := readFile(t, filepath.Join(fh.tempRoot, "bob", "agent1", "hello.txt")); got != "hi from agent one" {
		t.Errorf("bob's temp agent1/hello.txt = %q", got)
	}
	for _, p := range []string{filepath.Join(fh.tempRoot, "alice", "agent2", "partial.txt"), filepath.Join(fh.tempRoot, "alice", "agent1", "hello.txt")} {
		if !exists(p) {
			t.Errorf("%s missing", p)
		}
	}
	for _, id := range []string{"alice", "bob"} {
		entries, _ := os.ReadDir(filepath.Join(fh.tempRoot, id))
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "agent") {
				t.Errorf("temp workspace of %s has %q: not an anonymous id", id, e.Name())
			}
		}
	}
	// alice read bob's partial work (saved before her temp workspace was refilled).
	if m, ok := toolResult(fh.rec.get("alice"), "r1"); !ok || m.IsError || !strings.Contains(m.Content, "partial draft") {
		t.Errorf("alice's read of agent2/partial.txt = %+v", m)
	}
	// The final workspace is kept.
	if res.FinalWorkspace != wsA || !exists(filepath.Join(wsA, "hello.txt")) {
		t.Errorf("final workspace %q lost its files", res.FinalWorkspace)
	}
	// The shared audit log has a line per checked call.
	f, err := os.Open(filepath.Join(opts.RunDir, "permissions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("audit line %q is not JSON", sc.Text())
		}
	}
	if lines < 7 {
		t.Errorf("%d audit lines, want at least 7", lines)
	}
	assertNoLeak(t, fh.rec, []string{"alice", "bob"})

	// Denials and deliveries are read from the built-in tools' typed results.
	if !builtinTypedResults(t, r.agents[0].toolset, filepath.Join(fh.base, "outside.txt")) {
		t.Skip("the filesystem tools do not fill Result.Denied and Result.Changes yet (the core branch does): denials and deliveries not checked")
	}
	if got, want := delivered(), []string{filepath.Join(fh.project, "hello.txt")}; !slices.Equal(got, want) {
		t.Errorf("delivered = %v, want %v", got, want)
	}
	denied := 0
	for _, ev := range fh.ev.of(EventToolResult, "alice") {
		if ev.Denied {
			denied++
		}
	}
	if denied != 3 {
		t.Errorf("%d denials reported for alice, want 3 (coordination write, .env, keep.txt)", denied)
	}
}

// builtinTypedResults probes whether the built-in file tools fill the typed fields of their
// results: a write outside every allowed path must come back with its Decision.
func builtinTypedResults(t *testing.T, ts *filesystem.Toolset, outside string) bool {
	t.Helper()
	res := ts.Call(context.Background(), "write_file", json.RawMessage(fmt.Sprintf(`{"path":%q,"content":"x"}`, outside)))
	if !res.IsError {
		t.Fatalf("a write to %s was allowed", outside)
	}
	return res.Denied != nil
}

// journaled gives the run the turn's journal, as the app does (the one record of what the final
// agent changed); delivered finishes it and returns what the turn delivered.
func (fh *fileHarness) journaled(o *Options) (delivered func() []string) {
	fh.t.Helper()
	j, err := changes.NewJournal(filepath.Join(fh.base, ".massgen", "trash", changes.JournalPrefix+"test_turn1"), zap.NewNop())
	if err != nil {
		fh.t.Fatal(err)
	}
	o.Journal = j
	return func() []string {
		fh.t.Helper()
		cs, err := j.Finish(context.Background())
		if err != nil {
			fh.t.Fatal(err)
		}
		return cs.Delivered()
	}
}

// An agent without cwd gets no file tools; its tool calls get an error result, not a crash.
func TestAgentWithoutWorkspaceHasNoFileTools(t *testing.T) {
	h := newHarness(t, "solo")
	h.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		for _, tool := range c.req.Tools {
			if tool.Name != ToolNewAnswer {
				t.Errorf("tool %s offered without a workspace", tool.Name)
			}
		}
		switch {
		case c.final():
			return textResp("done"), nil
		case c.n == 0:
			return &backends.Response{ToolCalls: []backends.ToolCall{writeCall("w", "/tmp/x", "y")}}, nil
		default:
			if m := c.lastMessage(); m.Role != "tool" || !m.IsError {
				t.Errorf("last message = %+v, want an error tool result", m)
			}
			return answerResp("ok"), nil
		}
	}
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
}
