package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// promptConfig: one scripted agent whose final step waits for a trigger file (so the live view
// is on screen first), then writes, edits and runs a command in the context path, all asked
// (mode: default).
const promptConfig = `agents:
  - id: agent_a
    backend:
      type: scripted
      cwd: workspace1
      script:
        - phase: coordination
          tool_calls:
            - name: new_answer
              args: {content: "ok"}
        - phase: final
          wait_for: %s
          tool_calls:
            - name: write_file
              args: {path: "${CONTEXT_0}/index.html", content: "<h1>new</h1>\n<p>kept</p>\n"}
            - name: edit_file
              args: {path: "${CONTEXT_0}/style.css", edits: [{oldText: "red", newText: "blue"}]}
            - name: execute_command
              args: {command: "echo built > out.txt", work_dir: "${CONTEXT_0}"}
        - phase: final
          text: "Final answer."
permissions:
  mode: default
`

// TestPermissionPromptInTmux drives the real binary in tmux through three permission prompts
// and compares the screens with golden files (testdata/tui/*.golden; -update rewrites them):
// each prompt shows the change (a diff for the write and the edit, the command), every option
// is on screen at once, the agent panel is erased while asking and drawn once afterwards, and
// the user's denial is in the summary.
func TestPermissionPromptInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (.ci/run installs it)")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// A base folder of fixed length: the screens must not depend on the temp dir's name.
	base := filepath.Join(os.TempDir(), fmt.Sprintf("mgtui-%08x", rand.Uint32()))
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	bin := linkMassgen(t, base)
	proj, home, trigger := filepath.Join(base, "project"), filepath.Join(base, "home"), filepath.Join(base, "trigger")
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(proj, "index.html"): "<h1>old</h1>\n<p>kept</p>\n",
		filepath.Join(proj, "style.css"):  "body { color: red; }\n",
		filepath.Join(base, "c.yaml"):     fmt.Sprintf(promptConfig, trigger),
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	sock := fmt.Sprintf("massgen-prompt-%d", os.Getpid())
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	script := fmt.Sprintf("cd %q && HOME=%q NO_COLOR=1 %q --config c.yaml --context project 'go'; echo EXIT=$?; sleep 60", base, home, bin)
	tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })

	// screen polls the pane until it shows every want, and returns it normalised.
	screen := func(want ...string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		var pane string
		for time.Now().Before(deadline) {
			pane = tmux("capture-pane", "-p", "-t", "t")
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(pane, w)
			}
			if ok {
				return normalizeScreen(pane, base)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("pane never showed %q:\n%s", want, pane)
		return ""
	}
	keys := func(k ...string) { tmux(append([]string{"send-keys", "-t", "t"}, k...)...) }
	const panel = "agent_a (agent1)  " // the panel's header (the timeline names the agent too, once)

	screen(panel, "presents the final answer") // the live view is up
	if err := os.WriteFile(trigger, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		golden string
		want   []string
		keys   []string // the answer: Deny is first and the default
	}{
		{"prompt_write", []string{"wants to run write_file", "enter submit"}, []string{"Enter"}},
		{"prompt_edit", []string{"wants to run edit_file", "enter submit"}, []string{"Down", "Enter"}},
		{"prompt_command", []string{"wants to run execute_command", "enter submit"}, []string{"Down", "Down", "Enter"}},
	}
	for _, st := range steps {
		s := screen(st.want...)
		if strings.Contains(s, panel) {
			t.Errorf("%s: the agent panel is still on screen under the prompt:\n%s", st.golden, s)
		}
		for _, opt := range []string{"> Deny", "Allow once", "Allow for this run"} {
			if !strings.Contains(s, opt) {
				t.Errorf("%s: option %q not on screen:\n%s", st.golden, opt, s)
			}
		}
		golden(t, st.golden, s)
		keys(st.keys...)
	}
	final := screen("EXIT=0")
	if n := strings.Count(final, panel); n != 1 {
		t.Errorf("the agent panel is on the final screen %d times, want once:\n%s", n, final)
	}
	golden(t, "prompt_done", final)
}

var (
	timeRE  = regexp.MustCompile(`(log|session)_[0-9]{8}_[0-9]{6}`)
	trailRE = regexp.MustCompile(`[ \t]+\n`)
)

// normalizeScreen replaces what changes from run to run: the base folder and timestamps.
func normalizeScreen(s, base string) string {
	s = strings.ReplaceAll(s, base, "$BASE")
	s = timeRE.ReplaceAllString(s, "${1}_<time>")
	s = trailRE.ReplaceAllString(s, "\n")
	return strings.TrimRight(s, "\n") + "\n"
}

// golden compares a screen with testdata/tui/<name>.golden (-update writes it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "tui", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("screen %s differs from %s:\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}
