// Package e2e runs the real massgen binary against fake providers: httptest servers speaking the
// Chat Completions streaming protocol (the only thing faked), and checks files on disk, stdout
// and exit codes. It holds tests only.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/fakeclaude"
	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// binary is the massgen built for these tests; xdgConfig holds their trust store (see TestMain).
var binary, xdgConfig string

func TestMain(m *testing.M) {
	if fakeclaude.IsInvoked() { // a claude_code agent's CLI (claudecode_test.go)
		os.Exit(fakeclaude.Main())
	}
	if os.Getenv(notesServerEnv) == "1" { // an agent's MCP server (differential_test.go)
		os.Exit(serveNotes())
	}
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: every test drives the real binary; skipped with -short (make test runs them)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "massgen-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// One trust store for the whole test binary (cleanEnv gives every process a fresh HOME):
	// a test approves the rule files it writes there, as `massgen permissions trust` would.
	xdgConfig = filepath.Join(dir, "xdg-config")
	if binary, err = testbin.Path(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ---- the fake provider -------------------------------------------------------------------

// chatRequest is the part of a Chat Completions request the fake model looks at.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// turn is what a scripted model sees: its phase, the vote enum, how many replies it already
// gave in this execution, and the tool results of its last reply.
type turn struct {
	ctx     context.Context
	model   string
	final   bool
	answers []string // the vote enum ("" when vote is not offered)
	step    int      // assistant replies since the last user message
	results []string // tool results sent back for the previous reply
	raw     []byte
}

func (t turn) has(s string) bool { return bytes.Contains(t.raw, []byte(s)) }

// reply is one model reply: text and/or tool calls.
type reply struct {
	text  string
	calls []toolCall
	block bool // never answer: a slow model, until the client cancels the request
	// usage, when set, is the usage the reply reports (default: 100 prompt, 20 completion).
	usage *usage
}

// usage is a Chat Completions usage: prompt tokens (cached ones included), completion tokens
// (reasoning ones included).
type usage struct {
	prompt, cached, completion, reasoning int64
}

type toolCall struct {
	name string
	args map[string]any
}

func tc(name string, args map[string]any) toolCall { return toolCall{name, args} }

// provider is a Chat Completions server whose replies are scripted per model, deciding from
// the request content alone.
type provider struct {
	*httptest.Server
	t       testing.TB
	scripts map[string]func(turn) reply

	mu   sync.Mutex
	reqs map[string][][]byte // model -> raw request bodies
	seen map[string]chan struct{}
}

func newProvider(t testing.TB, scripts map[string]func(turn) reply) *provider {
	p := &provider{t: t, scripts: scripts, reqs: map[string][][]byte{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.handle))
	t.Cleanup(p.Close)
	return p
}

func (p *provider) URL() string { return p.Server.URL + "/v1" }

func (p *provider) requests(model string) [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.reqs[model]...)
}

func (p *provider) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil || !req.Stream {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.reqs[req.Model] = append(p.reqs[req.Model], body)
	p.mu.Unlock()

	t := turn{ctx: r.Context(), model: req.Model, final: true, raw: body}
	for _, tool := range req.Tools {
		switch tool.Function.Name {
		case "new_answer":
			t.final = false
		case "vote":
			enum, _ := tool.Function.Parameters["properties"].(map[string]any)["agent_id"].(map[string]any)["enum"].([]any)
			for _, e := range enum {
				t.answers = append(t.answers, fmt.Sprint(e))
			}
		}
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			t.step, t.results = 0, nil
		case "assistant":
			t.step++
			t.results = nil
		case "tool":
			t.results = append(t.results, string(m.Content))
		}
	}
	script := p.scripts[req.Model]
	if script == nil {
		http.Error(w, `{"error":{"message":"unknown model"}}`, http.StatusNotFound)
		return
	}
	rep := script(t)
	if rep.block {
		<-r.Context().Done()
		return
	}
	writeStream(w, rep)
}

// writeStream sends a reply as Chat Completions SSE, splitting every tool call's arguments
// over three chunks.
func writeStream(w http.ResponseWriter, rep reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if rep.text != "" {
		half := len(rep.text) / 2
		send(chunk(map[string]any{"content": rep.text[:half]}, nil))
		send(chunk(map[string]any{"content": rep.text[half:]}, nil))
	}
	for i, c := range rep.calls {
		args, _ := json.Marshal(c.args)
		s := string(args)
		send(chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""},
		}}}, nil))
		for _, piece := range []string{s[:len(s)/3], s[len(s)/3 : 2*len(s)/3], s[2*len(s)/3:]} {
			send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": piece}}}}, nil))
		}
	}
	finish := "stop"
	if len(rep.calls) > 0 {
		finish = "tool_calls"
	}
	send(chunk(map[string]any{}, finish))
	u := usage{prompt: 100, completion: 20}
	if rep.usage != nil {
		u = *rep.usage
	}
	send(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": u.prompt, "completion_tokens": u.completion, "total_tokens": u.prompt + u.completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.cached}, "completion_tokens_details": map[string]any{"reasoning_tokens": u.reasoning}}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// wait blocks until ch is closed or the request is cancelled (then the reply is a block).
func wait(t turn, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// closeOnce closes a channel the first time.
type signal struct {
	once sync.Once
	ch   chan struct{}
}

func newSignal() *signal             { return &signal{ch: make(chan struct{})} }
func (s *signal) fire()              { s.once.Do(func() { close(s.ch) }) }
func (s *signal) C() <-chan struct{} { return s.ch }

// ---- running the binary ------------------------------------------------------------------

type result struct {
	code           int
	stdout, stderr string
}

// run runs massgen in dir with a clean environment (no API keys, HOME inside the test).
func run(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runIn(t, dir, "", args...)
}

// runIn runs massgen in dir with stdin and a clean environment (no API keys, HOME inside the
// test).
func runIn(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, cleanEnv(t), strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running massgen: %v", err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func cleanEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + os.TempDir(), "XDG_CONFIG_HOME=" + xdgConfig}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("reading %s: %v", path, err)
		return ""
	}
	return string(b)
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// runDir is the single log folder under .massgen/logs.
func runDir(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".massgen", "logs", "log_*"))
	if len(m) != 1 {
		t.Fatalf("log folders: %v", m)
	}
	return m[0]
}

// assertNoLeak checks no request to a model names another agent's real id.
func assertNoLeak(t *testing.T, p *provider, models map[string]string) {
	t.Helper()
	for model, self := range models {
		reqs := p.requests(model)
		if len(reqs) == 0 {
			t.Errorf("no requests for %s", model)
		}
		for i, body := range reqs {
			for _, other := range models {
				if other != self && bytes.Contains(body, []byte(other)) {
					t.Errorf("request %d to %s (%s) mentions %s", i, model, self, other)
				}
			}
		}
	}
}
