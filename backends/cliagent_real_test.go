package backends

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

// The real coding-agent CLIs (claude, codex, gemini from npm, installed into .cache/npm by
// `make test-deps`), each pointed at a scripted provider speaking its protocol: the backend
// runs them as it runs them for a user. Skipped, saying so, when a CLI is not installed.

// realCLI finds program in .cache/npm or on PATH and puts its folder first on PATH.
func realCLI(t *testing.T, program string) {
	t.Helper()
	if testing.Short() {
		t.Skip("real CLI tests are skipped with -short")
	}
	bin, _ := filepath.Abs(filepath.Join("..", ".cache", "npm", "node_modules", ".bin"))
	p := filepath.Join(bin, program)
	if _, err := os.Stat(p); err != nil {
		if p, err = exec.LookPath(program); err != nil {
			t.Skipf("the real %s CLI is not installed (run make test-deps, or put it on PATH)", program)
		}
	}
	t.Setenv("PATH", filepath.Dir(p)+string(os.PathListSeparator)+os.Getenv("PATH"))
	// The CLIs write their state under HOME: the test's own; no update checks or telemetry.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	t.Setenv("TMPDIR", t.TempDir())
}

// realCase is one CLI: its backend config and how its model sees massgen's tools.
type realCase struct {
	typ, program, model string
	// tool is the name under which the CLI offers massgen's tool, and its namespace.
	tool func(name string) (string, string)
	key  func(h map[string][]string) string // the key the provider received
}

var realCases = []realCase{
	{typ: "claude_code", program: "claude", model: "claude-sonnet-4-5",
		tool: func(n string) (string, string) { return "mcp__massgen__" + n, "" },
		key:  func(h map[string][]string) string { return first(h["X-Api-Key"]) }},
	{typ: "codex", program: "codex", model: "gpt-5.5",
		tool: func(n string) (string, string) { return n, "mcp__massgen" },
		key:  func(h map[string][]string) string { return strings.TrimPrefix(first(h["Authorization"]), "Bearer ") }},
	{typ: "gemini_cli", program: "gemini", model: "gemini-2.5-flash",
		tool: func(n string) (string, string) { return "mcp_massgen_" + n, "" },
		key:  func(h map[string][]string) string { return first(h["X-Goog-Api-Key"]) }},
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (rc realCase) backend(t *testing.T, fp *fakeprovider.Server) *cliBackend {
	t.Helper()
	typ := map[string]string{"claude_code": "claude", "codex": "openai", "gemini_cli": "gemini"}[rc.typ]
	b, err := New(configs.Backend{Type: rc.typ, Model: rc.model, BaseURL: fp.BaseURL(typ), APIKey: "sk-real-key"}, Options{AgentID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	cb := b.(*cliBackend)
	t.Cleanup(func() { _ = cb.Close() })
	return cb
}

// offered reports whether r offers massgen's tool name (as rc's CLI names it).
func (rc realCase) offered(r fakeprovider.Request, name string) bool {
	want, ns := rc.tool(name)
	for _, tl := range r.Tools {
		if tl.Name == want && tl.Namespace == ns {
			return true
		}
	}
	return false
}

func (rc realCase) call(name string, args any) fakeprovider.Call {
	n, ns := rc.tool(name)
	return fakeprovider.Call{Name: n, Namespace: ns, Args: args}
}

// A coordination turn on the real CLI: the model writes through massgen's tool, gets the
// orchestrator's result, and answers; the CLI offered the model nothing but massgen's tools,
// with massgen's system prompt, and the provider got the key from massgen.
func TestRealCLICoordination(t *testing.T) {
	lane.Long(t)
	for _, rc := range realCases {
		t.Run(rc.typ, func(t *testing.T) {
			realCLI(t, rc.program)
			var mu sync.Mutex
			var seen []fakeprovider.Request
			fp := fakeprovider.New(func(r fakeprovider.Request) fakeprovider.Reply {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, r)
				if !rc.offered(r, "new_answer") {
					return fakeprovider.Reply{Text: `{"reasoning":"simple","model_choice":"flash"}`} // an auxiliary request
				}
				text := r.Text()
				switch {
				case strings.Contains(text, "result-7f3"):
					return fakeprovider.Reply{Calls: []fakeprovider.Call{rc.call("new_answer", map[string]any{"content": "the answer is 4"})}}
				case strings.Contains(text, "No such tool") || strings.Contains(text, "unsupported call") || strings.Contains(text, "not found"):
					return fakeprovider.Reply{Text: "writing", Calls: []fakeprovider.Call{rc.call("write_file", map[string]any{"path": "a.txt", "content": "A"})}}
				default: // first a tool the CLI does not have: it must refuse it itself
					stray := map[string]string{"claude_code": "Bash", "codex": "exec_command", "gemini_cli": "run_shell_command"}[rc.typ]
					return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: stray, Args: map[string]any{"command": "id"}}}}
				}
			})
			defer fp.Close()
			b := rc.backend(t, fp)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			req := Request{System: "You are agent-under-test.", Messages: []Message{{Role: "user", Content: "What is 2+2?"}},
				Tools: []ToolSpec{ccWriteSpec, ccAnswerSpec}, Phase: "coordination"}
			resp, err := b.Generate(ctx, req, nil)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "write_file" {
				t.Fatalf("reply %+v, want one write_file call", resp)
			}
			var args map[string]any
			if err := json.Unmarshal(resp.ToolCalls[0].Arguments, &args); err != nil || args["path"] != "a.txt" {
				t.Errorf("arguments %s (%v)", resp.ToolCalls[0].Arguments, err)
			}
			req.Messages = append(req.Messages, Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls},
				Message{Role: "tool", ToolCallID: resp.ToolCalls[0].ID, ToolName: "write_file", Content: `{"path":"a.txt","written":"result-7f3"}`})
			resp, err = b.Generate(ctx, req, nil)
			if err != nil {
				t.Fatalf("Generate 2: %v", err)
			}
			if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "new_answer" || !strings.Contains(string(resp.ToolCalls[0].Arguments), "the answer is 4") {
				t.Fatalf("reply %+v, want new_answer", resp)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range seen {
				if got := rc.key(r.Header); got != "sk-real-key" {
					t.Errorf("the provider got key %q, want massgen's", got)
				}
				if len(r.Tools) == 0 {
					continue
				}
				for _, tl := range r.Tools {
					if rc.typ == "codex" && codexHarmless[tl.Name] {
						continue
					}
					if tl.Name != "write_file" && tl.Name != "new_answer" && !strings.Contains(tl.Name, "massgen") {
						t.Errorf("the CLI offered its model %s (namespace %q)", tl.Name, tl.Namespace)
					}
				}
				if !strings.Contains(r.System+r.Text(), "You are agent-under-test.") {
					t.Errorf("the model was not given massgen's system prompt")
				}
			}
			cancel()
		})
	}
}

// A reply without a workflow call ends the CLI's turn; the orchestrator's reminder is answered
// by a new CLI run resuming the session, which has the conversation so far.
func TestRealCLIResume(t *testing.T) {
	lane.Long(t)
	for _, rc := range realCases {
		t.Run(rc.typ, func(t *testing.T) {
			realCLI(t, rc.program)
			fp := fakeprovider.New(func(r fakeprovider.Request) fakeprovider.Reply {
				if !rc.offered(r, "new_answer") {
					return fakeprovider.Reply{Text: `{"reasoning":"simple","model_choice":"flash"}`}
				}
				if strings.Contains(r.Text(), "You must finish by calling") {
					if !strings.Contains(r.Text(), "What is 2+2?") {
						return fakeprovider.Reply{Text: "I lost the conversation."}
					}
					return fakeprovider.Reply{Calls: []fakeprovider.Call{rc.call("new_answer", map[string]any{"content": "4"})}}
				}
				return fakeprovider.Reply{Text: "I think it is 4."}
			})
			defer fp.Close()
			b := rc.backend(t, fp)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			req := Request{System: "You are agent-under-test.", Messages: []Message{{Role: "user", Content: "What is 2+2?"}}, Tools: []ToolSpec{ccWriteSpec, ccAnswerSpec}}
			resp, err := b.Generate(ctx, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(resp.Text, "I think it is 4.") || len(resp.ToolCalls) != 0 {
				t.Fatalf("first reply %+v", resp)
			}
			req.Messages = append(req.Messages, Message{Role: "assistant", Content: resp.Text},
				Message{Role: "user", Content: "You must finish by calling the new_answer tool."})
			resp, err = b.Generate(ctx, req, nil)
			if err != nil {
				t.Fatalf("the resumed session failed: %v", err)
			}
			if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "new_answer" {
				t.Fatalf("second reply %+v", resp)
			}
		})
	}
}

// A CLI that offers its model a tool of its own is refused before the request reaches the
// model: here codex with its web search switched back on, which the gate sees in the request.
func TestRealCLIGateRefusesOwnTools(t *testing.T) {
	lane.Long(t)
	rc := realCases[1]
	realCLI(t, rc.program)
	fp := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply { return fakeprovider.Reply{Text: "should not be asked"} })
	defer fp.Close()
	b := rc.backend(t, fp)
	d := b.drv.(*codexDriver)
	d.extraArgs = []string{"-c", `web_search="live"`}
	_, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}, Tools: []ToolSpec{ccAnswerSpec}}, nil)
	if !errors.Is(err, ErrCLIOwnTools) || !strings.Contains(err.Error(), "web_search") {
		t.Fatalf("err = %v, want ErrCLIOwnTools naming web_search", err)
	}
	for _, r := range fp.Requests() {
		if len(r.Tools) > 0 {
			t.Errorf("a request offering %v reached the model", r.Tools)
		}
	}
}

// The real claude CLI with a slow bridge (its first answer 3 s late): massgen has the CLI
// connect before its first request (MCP_CONNECTION_NONBLOCKING=0). Without that, 2.1.197
// reports the bridge "pending" and the agent is refused. (A bridge more than about 5 s late is
// "pending" either way, and refused: the first request would go out without massgen's tools.)
func TestRealClaudeSlowBridge(t *testing.T) {
	lane.Long(t)
	rc := realCases[0]
	realCLI(t, rc.program)
	fp := fakeprovider.New(func(r fakeprovider.Request) fakeprovider.Reply {
		if rc.offered(r, "new_answer") {
			return fakeprovider.Reply{Calls: []fakeprovider.Call{rc.call("new_answer", map[string]any{"content": "4"})}}
		}
		return fakeprovider.Reply{Text: "no tools were offered"}
	})
	defer fp.Close()
	b := rc.backend(t, fp)
	b.bridgeDelay = 3 * time.Second
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}, Tools: []ToolSpec{ccAnswerSpec}}, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "new_answer" {
		t.Fatalf("reply %+v: the first request went out without massgen's tools", resp)
	}
}
