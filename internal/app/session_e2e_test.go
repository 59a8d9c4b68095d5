package app

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// sessionConfig: one scripted agent that, every turn, copies what the previous turn left (its
// final workspace, read-only via ${READ_ONLY_0}, and the file it delivered into the context
// path) into its workspace, writes notes.txt, answers, and as the final agent delivers
// delivered.txt, a new version each turn (it names the turn before's workspace: a rewrite as it
// was changes nothing, so delivers nothing). In turn 1 the two copies fail (nothing before it):
// error results, not failures.
const sessionConfig = `agents:
  - id: agent_a
    backend:
      type: scripted
      cwd: workspace1
      script:
        - phase: coordination
          tool_calls:
            - name: copy_file
              args: {source_path: "${READ_ONLY_0}/notes.txt", destination_path: "${WORKSPACE}/prev_notes.txt", overwrite: true}
            - name: copy_file
              args: {source_path: "${CONTEXT_0}/delivered.txt", destination_path: "${WORKSPACE}/seen_delivered.txt", overwrite: true}
            - name: write_file
              args: {path: "${WORKSPACE}/notes.txt", content: "notes of this turn"}
            - name: new_answer
              args: {content: "Wrote notes.txt."}
        - phase: final
          tool_calls:
            - name: write_file
              args: {path: "${CONTEXT_0}/delivered.txt", content: "delivered after ${READ_ONLY_0}"}
        - phase: final
          text: "Final answer: delivered.txt is in the project."
orchestrator:
  session_storage: sessions
  context_paths:
    - path: project
      permission: write
`

// TestScriptedThreeTurnSession runs the real binary in interactive mode with three tasks on
// stdin, then resumes the session with --continue.
func TestScriptedThreeTurnSession(t *testing.T) {
	bin := testbin.For(t)
	wd := t.TempDir()
	project := filepath.Join(wd, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, "c.yaml"), []byte(sessionConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (string, string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), "HOME="+wd)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("massgen %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	stdout, stderr := run("Create the notes\nImprove the notes\nFinish the notes\n", "--config", "c.yaml", "--yes", "--display", "plain")
	if n := strings.Count(stdout, "Final answer: delivered.txt is in the project."); n != 3 {
		t.Fatalf("want 3 answers on stdout, got %d:\n%s\nstderr:\n%s", n, stdout, stderr)
	}
	const answer = "Final answer: delivered.txt is in the project.\n"
	if want := answer + "--- turn 2 ---\n" + answer + "--- turn 3 ---\n" + answer; stdout != want {
		t.Errorf("piped answers are separated by --- turn N --- lines: stdout\n%s\nwant\n%s", stdout, want)
	}
	sessions, _ := filepath.Glob(filepath.Join(wd, ".massgen", "sessions", "session_*"))
	if len(sessions) != 1 {
		t.Fatalf("sessions: %v\nstderr:\n%s", sessions, stderr)
	}
	sdir := sessions[0]
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	tasks := []string{"Create the notes", "Improve the notes", "Finish the notes"}
	for i, task := range tasks {
		td := filepath.Join(sdir, "turn_"+string(rune('1'+i)))
		if b, err := os.ReadFile(filepath.Join(td, "answer.txt")); err != nil || !strings.Contains(string(b), "Final answer") {
			t.Errorf("%s/answer.txt = %q, %v", td, b, err)
		}
		raw, err := os.ReadFile(filepath.Join(td, "metadata.json"))
		if err != nil {
			t.Errorf("metadata: %v", err)
			continue
		}
		var meta struct {
			Turn           int
			Task           string
			Winner         string
			Agents         []string
			FilesDelivered []string `json:"files_delivered"`
			Workspace      string
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
		if meta.Turn != i+1 || meta.Task != task || meta.Winner != "agent_a" || !slices.Equal(meta.Agents, []string{"agent_a"}) ||
			!slices.Contains(meta.FilesDelivered, filepath.Join(project, "delivered.txt")) {
			t.Errorf("turn %d metadata.json:\n%s", i+1, raw)
		}
		if !exists(filepath.Join(td, "workspace", "notes.txt")) {
			t.Errorf("turn %d: the final workspace was not kept", i+1)
		}
	}
	// Turn 1 had nothing before it; turn 2 read turn 1's kept workspace and the file turn 1
	// delivered.
	if exists(filepath.Join(sdir, "turn_1", "workspace", "prev_notes.txt")) || exists(filepath.Join(sdir, "turn_1", "workspace", "seen_delivered.txt")) {
		t.Error("turn 1 saw a previous turn")
	}
	for _, f := range []string{"prev_notes.txt", "seen_delivered.txt"} {
		if !exists(filepath.Join(sdir, "turn_2", "workspace", f)) {
			t.Errorf("turn 2 did not see turn 1's work: no %s in its workspace\nstderr:\n%s", f, stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(sdir, "SESSION_SUMMARY.txt")); err != nil || !strings.Contains(string(b), "Finish the notes") {
		t.Errorf("SESSION_SUMMARY.txt = %q, %v", b, err)
	}
	logs, _ := filepath.Glob(filepath.Join(wd, ".massgen", "logs", "log_*", "turn_3"))
	if len(logs) != 1 {
		t.Errorf("per-turn log folders: %v", logs)
	}

	// --continue resumes the session: turn 4 sees turn 3's workspace.
	_, stderr = run("One more turn\n", "--config", "c.yaml", "--yes", "--display", "plain", "--continue")
	if !strings.Contains(stderr, "Continuing session "+filepath.Base(sdir)+" (3 turns)") {
		t.Errorf("stderr lacks the resumed session:\n%s", stderr)
	}
	if !exists(filepath.Join(sdir, "turn_4", "workspace", "prev_notes.txt")) {
		t.Errorf("turn 4 did not see turn 3's workspace")
	}
	if again, _ := filepath.Glob(filepath.Join(wd, ".massgen", "sessions", "session_*")); len(again) != 1 {
		t.Errorf("--continue started a new session: %v", again)
	}

	out, _ := run("", "sessions", "list")
	if !strings.Contains(out, filepath.Base(sdir)) || !strings.Contains(out, "One more turn") {
		t.Errorf("sessions list:\n%s", out)
	}
	out, _ = run("", "sessions", "show", filepath.Base(sdir))
	for _, want := range []string{"Turns:   4", "--- Turn 4", "Winner:  agent_a", "Delivered: " + filepath.Join(project, "delivered.txt")} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, out)
		}
	}
}
