package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/fakeclaude"
)

// Two claude_code agents, each a claude CLI (the fake, re-executing this test binary) that only
// has massgen's tools: they write in their workspaces, try to write into the context path during
// coordination (denied: it is read-only until the final presentation), answer, vote, and the
// winner delivers into the context path. The real massgen binary runs it all.
func TestClaudeCodeAgentsDeliver(t *testing.T) {
	dir := t.TempDir()
	proj := project(t, dir)
	script := fakeclaude.Script{
		Coordination: []fakeclaude.Step{
			{Tool: "write_file", Args: map[string]any{"path": "notes.txt", "content": "draft"}},
			{Tool: "write_file", Args: map[string]any{"path": filepath.Join(proj, "index.html"), "content": "hacked"}},
			{Tool: "new_answer", Args: map[string]any{"content": "Answer: 42"}},
		},
		Vote: []fakeclaude.Step{{Tool: "vote", Args: map[string]any{"agent_id": "$VOTE", "reason": "it is right"}}},
		Final: []fakeclaude.Step{
			{Tool: "write_file", Args: map[string]any{"path": filepath.Join(proj, "result.txt"), "content": "delivered"}},
			{Text: "Final: 42"},
		},
	}
	fakeEnv, logPath, err := fakeclaude.Setup(filepath.Join(dir, "fake"), script)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "cfg.yaml"), fmt.Sprintf(`agents:
  - id: alpha
    backend: {type: claude_code, cwd: workspace1, model: sonnet}
  - id: beta
    backend: {type: claude_code, cwd: workspace2, model: sonnet}
orchestrator:
  timeout_seconds: 90
  context_paths:
    - path: %s
      permission: write
`, proj))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--config", "cfg.yaml", "--yes", "--display", "plain", "What is 6*7?")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(t), fakeEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("massgen: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if strings.TrimSpace(out.String()) != "Final: 42" {
		t.Errorf("stdout %q, want the final answer", out.String())
	}
	if got := readFile(t, filepath.Join(proj, "index.html")); got != "original index" {
		t.Errorf("index.html = %q: a coordination write into the context path went through", got)
	}
	if got := readFile(t, filepath.Join(proj, "result.txt")); got != "delivered" {
		t.Errorf("result.txt = %q, want the final agent's delivery", got)
	}
	// A CLI final agent writes through massgen's tools (the bridge): the turn's record of
	// changes, which the summary's Delivered reads, has its file.
	if !strings.Contains(errb.String(), "Delivered:\n  project/result.txt\n") {
		t.Errorf("the summary does not show result.txt delivered:\n%s", errb.String())
	}

	recs, err := fakeclaude.ReadLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	denied, votes, notes := 0, 0, 0
	for _, r := range recs {
		switch {
		case r.Event == "call" && r.Tool == "write_file" && strings.Contains(r.Input, "notes.txt"):
			if r.IsError {
				t.Errorf("a write into the agent's own workspace failed: %s", r.Output)
			}
			notes++
		case r.Event == "call" && r.Tool == "write_file" && strings.Contains(r.Input, "index.html"):
			if !r.IsError || !strings.Contains(r.Output, "denied") {
				t.Errorf("the model was told %q (error %v) for a write into the read-only context path", r.Output, r.IsError)
			}
			denied++
		case r.Event == "calling" && r.Tool == "vote":
			votes++
		case r.Event == "start":
			for _, tool := range r.Tools {
				if tool == "Bash" || tool == "Write" {
					t.Errorf("the CLI was offered %s", tool)
				}
			}
		}
	}
	// Which agent answers first varies; one restarted early goes straight to voting. Each
	// agent votes in the end, and some agent wrote its workspace and tried the context path.
	if denied < 1 || notes < 1 || votes < 2 {
		t.Errorf("%d denied writes, %d workspace writes and %d votes in the CLIs' log:\n%+v", denied, notes, votes, recs)
	}
}
