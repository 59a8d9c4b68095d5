package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/tui/")

// liveConfig is a two-agent scripted run with something of everything the live view shows:
// streamed text, a file written, a denial, a wait (alice waits for the test's go-ahead, bob for
// a restart), an answer, a restart, votes and a delivery.
const liveConfig = `agents:
  - id: alice
    backend:
      type: scripted
      cwd: workspace1
      script:
        - phase: coordination
          text: "Planning a small page.\nI will write index.html first."
          tool_calls:
            - name: write_file
              args: {path: "${WORKSPACE}/index.html", content: "<h1>Hello</h1>\n<p>From massgen.</p>\n"}
        - phase: coordination
          wait_for: "%s"
          text: "The page is ready."
          tool_calls:
            - name: new_answer
              args: {content: "index.html: a heading and a paragraph."}
        - phase: coordination
          tool_calls:
            - name: vote
              args: {agent_id: agent1, reason: "Mine is complete."}
        - phase: final
          tool_calls:
            - name: copy_file
              args: {source_path: "${WORKSPACE}/index.html", destination_path: "${CONTEXT_0}/index.html", overwrite: true}
        - phase: final
          text: "Delivered index.html."
  - id: bob
    backend:
      type: scripted
      cwd: workspace2
      script:
        - phase: coordination
          text: "Let me look around first."
          tool_calls:
            - name: write_file
              args: {path: "/etc/massgen-live-test", content: "x"}
        - phase: coordination
          block: true
        - phase: coordination
          text: "agent1's page is good."
          tool_calls:
            - name: vote
              args: {agent_id: agent1, reason: "It has everything."}
`

// linkMassgen links the binary under test into dir: a screen that shows the binary's path then
// does not depend on where the shared build lives.
func linkMassgen(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "massgen")
	if err := os.Symlink(binary, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// liveProject is a project folder with the config (its go-ahead file at proj/go), a context
// folder site/ and a home.
func liveProject(t *testing.T, tmp string) (proj, home string) {
	t.Helper()
	proj, home = filepath.Join(tmp, "project"), filepath.Join(tmp, "home")
	for _, d := range []string{filepath.Join(proj, "site"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(liveConfig, filepath.Join(proj, "go"))
	if err := os.WriteFile(filepath.Join(proj, "c.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return proj, home
}

// tmuxPane runs a command in a detached tmux session of its own server.
type tmuxPane struct {
	t    *testing.T
	sock string
}

func newTmuxPane(t *testing.T, name string, width, height int, script string) *tmuxPane {
	t.Helper()
	p := &tmuxPane{t: t, sock: fmt.Sprintf("massgen-%s-%d", name, os.Getpid())}
	p.run("new-session", "-d", "-s", "t", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.sock, "kill-server").Run() })
	return p
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// capture is the pane's text; with escapes, its colours too.
func (p *tmuxPane) capture(escapes bool) string {
	if escapes {
		return p.run("capture-pane", "-p", "-e", "-t", "t")
	}
	return p.run("capture-pane", "-p", "-t", "t")
}

// waitFor polls the pane until every want shows (the view redraws on its own clock).
func (p *tmuxPane) waitFor(want ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var pane string
	for time.Now().Before(deadline) {
		pane = p.capture(false)
		all := true
		for _, w := range want {
			all = all && strings.Contains(pane, w)
		}
		if all {
			return pane
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("pane never showed %q:\n%s", want, pane)
	return ""
}

var clockPattern = regexp.MustCompile(`\b[0-9]+:[0-9]{2}(:[0-9]{2})?\b`)

// normalize makes a screen stable: the project folder becomes $PROJ, elapsed times m:ss,
// trailing spaces and blank lines go.
func normalize(s, proj string) string {
	s = strings.ReplaceAll(s, proj, "$PROJ")
	s = clockPattern.ReplaceAllString(s, "m:ss")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

// block is the lines of s from the first one starting with start through the first one after
// it starting with end ("" if there is none).
func block(s, start, end string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, start) {
			continue
		}
		for j := i; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], end) {
				return strings.Join(lines[i:j+1], "\n") + "\n"
			}
		}
	}
	return ""
}

// report is the tally and timeline printed at the end: from "Votes (" to the last timeline
// line.
func report(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	in := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "Votes ("):
			in = true
		case in && !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "Timeline:"):
			return strings.Join(out, "\n") + "\n"
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "tui", name)
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
		t.Fatalf("%v (run go test -run %s -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -run %s -update rewrites it)\ngot:\n%s\nwant:\n%s", path, t.Name(), got, want)
	}
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// TestLiveViewInTmux drives the real binary's live view in tmux: the screen while the agents
// work (golden), then the last frame with the vote tally and the timeline (golden); with
// colours on a terminal, and the same screens without them under NO_COLOR.
func TestLiveViewInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (.ci/run installs it)")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := linkMassgen(t, t.TempDir())
	for _, tc := range []struct {
		name, env string
		color     bool
	}{
		{"color", "", true},
		{"no_color", "NO_COLOR=1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj, home := liveProject(t, t.TempDir())
			script := fmt.Sprintf("cd %q && HOME=%q TERM=xterm-256color %s %q --config c.yaml --context site 'Make a hello page'; echo EXIT=$?; sleep 60",
				proj, home, tc.env, bin)
			pane := newTmuxPane(t, tc.name, 100, 40, script)

			running := pane.waitFor("✓ write_file index.html (36 B)", "⊘ denied: write_file /etc/massgen-live-test")
			if colored := sgr.MatchString(pane.capture(true)); colored != tc.color {
				t.Errorf("colours on screen = %v, want %v", colored, tc.color)
			}
			checkGolden(t, "live_running.golden", normalize(block(running, "• alice", "massgen "), proj))

			if err := os.WriteFile(filepath.Join(proj, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			end := pane.waitFor("EXIT=")
			if !strings.Contains(end, "EXIT=0") {
				t.Fatalf("the run failed:\n%s", end)
			}
			got := normalize(block(end, "✓ alice", "massgen ")+"\n"+report(end), proj)
			checkGolden(t, "live_end.golden", got)
			if colored := sgr.MatchString(pane.capture(true)); colored != tc.color {
				t.Errorf("colours at the end = %v, want %v", colored, tc.color)
			}
		})
	}
}

// Without a terminal the run prints plain lines with tool summaries and no escape sequence, and
// `sessions show` prints the same tally and timeline as the run's summary.
func TestPlainRunAndSessionsShow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tmp := t.TempDir()
	bin := linkMassgen(t, tmp)
	proj, home := liveProject(t, tmp)
	if err := os.WriteFile(filepath.Join(proj, "go"), nil, 0o644); err != nil { // alice does not wait
		t.Fatal(err)
	}
	massgen := func(stdin string, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("massgen %v: %v\n%s", args, err, errOut.String())
		}
		return out.String(), errOut.String()
	}
	// Interactive mode on a pipe: one turn, saved in a session.
	_, errOut := massgen("Make a hello page\n", "--config", "c.yaml", "--context", "site")
	if strings.Contains(errOut, "\x1b") {
		t.Errorf("escape sequences on a non-terminal:\n%q", errOut)
	}
	for _, want := range []string{
		"[alice] write_file index.html (36 B)",
		"[bob] DENIED write_file /etc/massgen-live-test (1 B)",
		"[alice] copy_file index.html → " + filepath.Join(proj, "site", "index.html") + " (overwrite)",
		"Votes (2 cast):\n  alice #1  ████████████████████  2/2  alice, bob  winner\n",
		"Timeline:\n",
		"answer   alice #1",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("run output lacks %q:\n%s", want, errOut)
		}
	}
	runReport := report(errOut)
	show, _ := massgen("", "sessions", "show")
	if showReport := report(show); showReport != runReport {
		t.Errorf("sessions show prints another tally or timeline:\n%s\nthe run printed:\n%s", showReport, runReport)
	}
}
