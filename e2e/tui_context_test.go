package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestContextPromptInTmux drives the real binary's terminal prompt (huh, not accessible mode)
// inside tmux: choose "Protected", enter one protected path, finish, and check the context-path
// list shown before the run.
func TestContextPromptInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (.ci/run installs it)")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tmp := t.TempDir()
	bin := binary
	proj := filepath.Join(tmp, "project")
	home := filepath.Join(tmp, "home")
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "agents:\n  - id: a1\n    backend: {type: openai, model: gpt-5, cwd: workspace1, base_url: \"http://127.0.0.1:9/v1\"}\n"
	if err := os.WriteFile(filepath.Join(proj, "c.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	sock := fmt.Sprintf("massgen-test-%d", os.Getpid())
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	script := fmt.Sprintf("cd %q && HOME=%q OPENAI_API_KEY=x %q --config c.yaml 'hello'; echo EXIT=$?; sleep 60", proj, home, bin)
	tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })

	// waitFor polls the pane until it shows want (the UI redraws asynchronously).
	waitFor := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second) // generous: CI machines may be loaded
		var pane string
		for time.Now().Before(deadline) {
			pane = tmux("capture-pane", "-p", "-t", "t")
			if strings.Contains(pane, want) {
				return pane
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("pane never showed %q:\n%s", want, pane)
		return ""
	}
	waitFor("Add current directory as context path?")
	waitFor(proj)
	tmux("send-keys", "-t", "t", "Down")
	waitFor("> Protected")
	tmux("send-keys", "-t", "t", "Enter")
	waitFor("Protected path 1")
	tmux("send-keys", "-t", "t", "-l", "golden")
	tmux("send-keys", "-t", "t", "Enter")
	// The question comes back for the next path; an empty answer finishes.
	waitFor("Protected path 2")
	tmux("send-keys", "-t", "t", "Enter")
	// The list is printed before the run starts (whatever the run then does).
	pane := waitFor("protected: ")
	for _, s := range []string{proj + " (write)", "protected: " + filepath.Join(proj, "golden")} {
		if !strings.Contains(pane, s) {
			t.Errorf("pane lacks %q:\n%s", s, pane)
		}
	}
	// The run goes on (and fails: its provider is unreachable); it must be over before the
	// temporary folders it writes in are removed.
	waitFor("EXIT=")
}
