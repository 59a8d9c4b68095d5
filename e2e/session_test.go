package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestInteractiveSessionOverTheWire: two tasks on stdin in interactive mode against a fake Chat
// Completions provider. Turn 2's requests carry turn 1's task and final answer as earlier
// messages, and name turn 1's kept workspace as read-only; turn 2 reads a file from it.
func TestInteractiveSessionOverTheWire(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "project")
	writeFile(t, filepath.Join(proj, "README.md"), "project")
	var mu sync.Mutex
	var prevWorkspace string // learned from turn 2's prompt (written by the provider's handler)
	p := newProvider(t, map[string]func(turn) reply{
		"m1": func(tr turn) reply {
			second := tr.has("Second task: extend the notes")
			switch {
			case !tr.final && tr.step == 0 && !second:
				return reply{calls: []toolCall{
					tc("write_file", map[string]any{"path": "notes.txt", "content": "turn one notes"}),
					tc("new_answer", map[string]any{"content": "Notes written."}),
				}}
			case !tr.final && tr.step == 0 && second:
				// The prompt names the previous turn's workspace: read notes.txt from there.
				s := string(tr.raw)
				const marker = "Previous turn's final workspace (read-only): "
				i := strings.Index(s, marker)
				if i < 0 {
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "no previous workspace in the prompt"})}}
				}
				rest := s[i+len(marker):]
				ws := rest[:strings.IndexAny(rest, `\"`)]
				mu.Lock()
				prevWorkspace = ws
				mu.Unlock()
				return reply{calls: []toolCall{tc("read_file", map[string]any{"path": ws + "/notes.txt"})}}
			case !tr.final:
				return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "Read: " + strings.Join(tr.results, " ")})}}
			case second:
				return reply{text: "Final answer two."}
			default:
				return reply{text: "Final answer one."}
			}
		},
	})
	cfg := "agents:\n" + agentYAML("solo", "m1", p.URL(), "workspace1") + fmt.Sprintf(`orchestrator:
  session_storage: sessions
  timeout_seconds: 90
  context_paths:
    - path: %s
      permission: write
`, proj)
	writeFile(t, filepath.Join(dir, "massgen.yaml"), cfg)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--config", "massgen.yaml", "--display", "plain")
	cmd.Dir, cmd.Env = dir, cleanEnv(t)
	cmd.Stdin = strings.NewReader("First task: write notes\nSecond task: extend the notes\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("massgen: %v\nstderr:\n%s", err, errb.String())
	}
	if out.String() != "Final answer one.\n--- turn 2 ---\nFinal answer two.\n" { // piped: answers separated
		t.Errorf("stdout = %q\nstderr:\n%s", out.String(), errb.String())
	}

	var turn2 []string
	for _, raw := range p.requests("m1") {
		if bytes.Contains(raw, []byte("Second task: extend the notes")) {
			turn2 = append(turn2, string(raw))
		}
	}
	if len(turn2) == 0 {
		t.Fatal("no request for turn 2")
	}
	for _, raw := range turn2 {
		// The conversation so far comes first: turn 1's task and its final answer.
		i1, ia, i2 := strings.Index(raw, "First task: write notes"), strings.Index(raw, "Final answer one."), strings.Index(raw, "Second task: extend the notes")
		if i1 < 0 || ia < 0 || !(i1 < ia && ia < i2) {
			t.Errorf("turn 2 request lacks turn 1's exchange before the new task:\n%s", raw)
		}
	}
	sessions, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "session_*"))
	if len(sessions) != 1 {
		t.Fatalf("sessions: %v", sessions)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := filepath.Join(sessions[0], "turn_1", "workspace"); prevWorkspace != want {
		t.Errorf("turn 2 was shown %q as the previous workspace, want %s", prevWorkspace, want)
	}
	// The read of turn 1's workspace was allowed (read-only root) and reached the model.
	if ans := readFile(t, filepath.Join(sessions[0], "turn_2", "answer.txt")); !strings.Contains(ans, "Final answer two.") {
		t.Errorf("turn_2/answer.txt = %q", ans)
	}
	found := false
	for _, raw := range turn2 {
		if strings.Contains(raw, "turn one notes") {
			found = true
		}
	}
	if !found {
		t.Errorf("turn 2 never read turn 1's notes.txt through its read-only workspace\nstderr:\n%s", errb.String())
	}
	meta := readFile(t, filepath.Join(sessions[0], "turn_2", "metadata.json"))
	for _, want := range []string{`"task": "Second task: extend the notes"`, `"winner": "solo"`, `"input": 300`} {
		if !strings.Contains(meta, want) {
			t.Errorf("turn_2/metadata.json lacks %s:\n%s", want, meta)
		}
	}
}
