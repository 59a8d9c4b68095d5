package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// Issue 26: the outcome tells the truth about files and timeouts. Each test drives the built
// binary against a fake provider (internal/testing/fakeprovider).

// massgenRun runs bin in dir with a clean environment (HOME inside the test) and stdin.
func massgenRun(t *testing.T, bin, dir, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
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

// jsonResult is the last `result` line of --output json.
func jsonResult(t *testing.T, stdout string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal([]byte(lines[i]), &m) == nil && m["type"] == "result" {
			return m
		}
	}
	t.Fatalf("no result line on stdout:\n%s", stdout)
	return nil
}

// oneAgentConfig is one chatcompletion agent with a workspace on srv, plus extra YAML.
func oneAgentConfig(srv *fakeprovider.Server, extra string) string {
	return fmt.Sprintf(`agents:
  - id: solo
    backend:
      type: chatcompletion
      model: fake-model
      base_url: %s
      cwd: workspace1
%s`, srv.BaseURL("chatcompletion"), extra)
}

// writer answers, votes for itself, and as the final agent writes greet.py in the directory
// it was started in (dir), then claims it did.
func writer(dir string) fakeprovider.Model {
	return func(r fakeprovider.Request) fakeprovider.Reply {
		if v, ok := r.Tool("vote"); ok && len(v.Enum) > 0 {
			return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: "vote", Args: map[string]string{"agent_id": v.Enum[0], "reason": "done"}}}}
		}
		if r.HasTool("new_answer") {
			return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: "new_answer", Args: map[string]string{"content": "I will update greet.py."}}}}
		}
		// The final presentation: write (three times), then claim success.
		if r.Last().Role == "tool" && strings.Count(r.Text(), "greet.py") >= 3 {
			return fakeprovider.Reply{Text: "Updated greet.py."}
		}
		var calls []fakeprovider.Call
		for i := range 3 {
			calls = append(calls, fakeprovider.Call{Name: "write_file", Args: map[string]string{
				"path": filepath.Join(dir, "greet.py"), "content": fmt.Sprintf("print('hi %d')\n", i)}})
		}
		return fakeprovider.Reply{Calls: calls}
	}
}

// TestDeniedWritesArePartial: the final agent's writes to the user's folder are all denied (a
// read-only context path): the summary says so and that nothing changed, the JSON result
// carries the count, and the run exits 4 (partial), not 0.
func TestDeniedWritesArePartial(t *testing.T) {
	t.Parallel()
	bin := testbin.For(t)
	dir := t.TempDir()
	srv := fakeprovider.New(writer(dir))
	t.Cleanup(srv.Close)
	writeFile(t, filepath.Join(dir, "c.yaml"), oneAgentConfig(srv, ""))
	writeFile(t, filepath.Join(dir, "greet.py"), "print('old')\n")

	res := massgenRun(t, bin, dir, "", "--config", "c.yaml", "--context", ".:read", "--display", "plain", "--output", "json", "Update greet.py")
	if res.code != 4 {
		t.Errorf("exit %d, want 4 (partial: the final agent's writes were denied)\nstderr:\n%s", res.code, res.stderr)
	}
	if got := readFile(t, filepath.Join(dir, "greet.py")); got != "print('old')\n" {
		t.Fatalf("greet.py changed: %q", got)
	}
	if !strings.Contains(res.stderr, "3 writes denied, no file changed; see `massgen logs`") {
		t.Errorf("stderr does not say the writes were denied and nothing changed:\n%s", res.stderr)
	}
	r := jsonResult(t, res.stdout)
	if r["denied_changes"] != float64(3) || r["exit_code"] != float64(4) {
		t.Errorf("result: denied_changes %v, exit_code %v; want 3 and 4\n%s", r["denied_changes"], r["exit_code"], res.stdout)
	}
}

// TestYesAddsCurrentDirectory: --yes takes the context-path prompt's highlighted default, the
// current directory with write access, and says so; the final agent's write then lands.
func TestYesAddsCurrentDirectory(t *testing.T) {
	t.Parallel()
	bin := testbin.For(t)
	dir := t.TempDir()
	srv := fakeprovider.New(writer(dir))
	t.Cleanup(srv.Close)
	writeFile(t, filepath.Join(dir, "c.yaml"), oneAgentConfig(srv, ""))

	res := massgenRun(t, bin, dir, "", "--config", "c.yaml", "--yes", "--display", "plain", "Write greet.py")
	if res.code != 0 {
		t.Errorf("exit %d, want 0\nstderr:\n%s", res.code, res.stderr)
	}
	if got := readFile(t, filepath.Join(dir, "greet.py")); got != "print('hi 2')\n" {
		t.Errorf("greet.py = %q: --yes did not give the final agent the current directory", got)
	}
	if !strings.Contains(res.stderr, "--yes: added the current directory as a context path with write access") {
		t.Errorf("stderr does not say what --yes chose:\n%s", res.stderr)
	}
}

// TestNothingChangedIsSaid: a run whose final agent changes nothing in a writable context path
// ends with a summary that says so (exit 0: it did not try).
func TestNothingChangedIsSaid(t *testing.T) {
	t.Parallel()
	bin := testbin.For(t)
	dir := t.TempDir()
	srv := fakeprovider.New(fakeprovider.Agreeable())
	t.Cleanup(srv.Close)
	writeFile(t, filepath.Join(dir, "c.yaml"), oneAgentConfig(srv, ""))

	res := massgenRun(t, bin, dir, "", "--config", "c.yaml", "--context", ".", "--display", "plain", "Explain")
	if res.code != 0 {
		t.Errorf("exit %d, want 0\nstderr:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "No file changed in context paths.") {
		t.Errorf("the summary does not say nothing changed:\n%s", res.stderr)
	}
}

// TestQuickModeRefusesContext: quick mode's agent has no file tools, so --context is refused
// with a message (exit 2) instead of being shown as "(write)" and ignored.
func TestQuickModeRefusesContext(t *testing.T) {
	t.Parallel()
	bin := testbin.For(t)
	dir := t.TempDir()
	srv := fakeprovider.New(fakeprovider.Agreeable())
	t.Cleanup(srv.Close)
	res := massgenRun(t, bin, dir, "", "--backend", "chatcompletion", "--model", "fake-model", "--base-url", srv.BaseURL("chatcompletion"),
		"--context", ".", "Explain")
	if res.code != 2 || !strings.Contains(res.stderr, "quick mode's agent has no file tools") {
		t.Errorf("exit %d, want 2 with a message about quick mode and --context\nstderr:\n%s", res.code, res.stderr)
	}
	if srv.Count() != 0 {
		t.Errorf("%d model requests: the run started", srv.Count())
	}
}

// TestTimeoutWithoutAnswer: the overall timeout ends a run before any answer: stderr, the log
// and the JSON result say it was the timeout, with its value and config key, and the run
// exits 3 (timeout), not 1 with "no agent produced an answer".
func TestTimeoutWithoutAnswer(t *testing.T) {
	t.Parallel()
	bin := testbin.For(t)
	dir := t.TempDir()
	srv := fakeprovider.New(func(fakeprovider.Request) fakeprovider.Reply {
		return fakeprovider.Reply{Text: "too late", Delay: time.Minute} // cancelled by the timeout
	})
	t.Cleanup(srv.Close)
	writeFile(t, filepath.Join(dir, "c.yaml"), oneAgentConfig(srv, "orchestrator:\n  timeout_seconds: 1\n"))

	res := massgenRun(t, bin, dir, "", "--config", "c.yaml", "--display", "plain", "--output", "json", "Think hard")
	if res.code != 3 {
		t.Errorf("exit %d, want 3 (timeout)\nstderr:\n%s", res.code, res.stderr)
	}
	const want = "the overall timeout (orchestrator.timeout_seconds: 1s) was reached before any agent answered"
	if !strings.Contains(res.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
	}
	r := jsonResult(t, res.stdout)
	to, _ := r["timeout"].(map[string]any)
	if r["stopped_by"] != "timeout" || to["key"] != "orchestrator.timeout_seconds" || to["seconds"] != float64(1) || !strings.Contains(fmt.Sprint(r["error"]), "timeout") {
		t.Errorf("result does not name the timeout: %v", r)
	}
	log := readFile(t, filepath.Join(runDir(t, dir), "massgen.log"))
	if !strings.Contains(log, `"timeout_key":"orchestrator.timeout_seconds"`) {
		t.Errorf("the log does not name the timeout:\n%s", log)
	}
}

// TestProjectFoundFromSubfolder: from a folder below the project (here a git repository's
// root), a run keeps its state in the project's .massgen/ (said on stderr), which git ignores;
// sessions, diff, logs, --continue and undo from any folder below find it.
func TestProjectFoundFromSubfolder(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Parallel()
	bin := testbin.For(t)
	proj := t.TempDir()
	src, deep := filepath.Join(proj, "src"), filepath.Join(proj, "src", "deep")
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	srv := fakeprovider.New(writer(src))
	t.Cleanup(srv.Close)
	writeFile(t, filepath.Join(proj, "c.yaml"), oneAgentConfig(srv, ""))
	writeFile(t, filepath.Join(deep, "keep.txt"), "x\n")

	res := massgenRun(t, bin, src, "", "--config", "../c.yaml", "--context", ".", "--display", "plain", "Write greet.py")
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "Project: "+proj+" ") {
		t.Errorf("the run does not say which project it uses:\n%s", res.stderr)
	}
	if exists(filepath.Join(src, ".massgen")) {
		t.Errorf("the run started a second .massgen/ in %s", src)
	}
	if got := readFile(t, filepath.Join(proj, ".massgen", ".gitignore")); !strings.Contains(got, "*\n") {
		t.Errorf(".massgen/.gitignore = %q", got)
	}
	status, err := exec.Command("git", "-C", proj, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
	if err != nil || strings.Contains(string(status), ".massgen") {
		t.Errorf("git status shows .massgen/ (%v):\n%s", err, status)
	}

	for _, c := range []struct {
		dir  string
		args []string
		want string
	}{
		{deep, []string{"sessions", "list"}, "session_"},
		{deep, []string{"diff"}, "greet.py"},
		{src, []string{"logs"}, "turn outcome"},
	} {
		r := massgenRun(t, bin, c.dir, "", c.args...)
		if r.code != 0 || !strings.Contains(r.stdout+r.stderr, c.want) || !strings.Contains(r.stderr, "Project: "+proj) {
			t.Errorf("massgen %s from %s: exit %d, want %q and the project named\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), c.dir, r.code, c.want, r.stdout, r.stderr)
		}
	}
	r := massgenRun(t, bin, deep, "", "--continue", "--display", "plain", "Once more")
	if r.code != 0 || !strings.Contains(r.stderr, "Continuing session") {
		t.Errorf("--continue from %s: exit %d\n%s", deep, r.code, r.stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(proj, ".massgen", "sessions", "session_*")); len(m) != 1 {
		t.Errorf("sessions: %v", m)
	}
	r = massgenRun(t, bin, deep, "", "undo", "--turn", "1")
	if r.code != 0 || exists(filepath.Join(src, "greet.py")) {
		t.Errorf("undo from %s: exit %d, greet.py still there: %v\n%s", deep, r.code, exists(filepath.Join(src, "greet.py")), r.stderr)
	}
	for _, d := range []string{src, deep} {
		if exists(filepath.Join(d, ".massgen")) {
			t.Errorf("a command started a .massgen/ in %s", d)
		}
	}
}

// TestEndSummaryFits80Columns: with long agent names, run from a deep folder, every line of
// the end summary (from the vote tally to the last line on stderr) fits in 80 columns.
func TestEndSummaryFits80Columns(t *testing.T) {
	t.Parallel()
	bin := testbin.For(t)
	dir := filepath.Join(t.TempDir(), "a-project-folder-with-a-rather-long-name", "and-one-of-its-subfolders")
	srv := fakeprovider.New(writer(dir))
	t.Cleanup(srv.Close)
	var cfg strings.Builder
	cfg.WriteString("agents:\n")
	for i, id := range []string{"architect-with-a-long-name", "implementer-with-a-long-name", "reviewer-with-a-long-name"} {
		fmt.Fprintf(&cfg, "  - id: %s\n    backend: {type: chatcompletion, model: fake-model, base_url: %q, cwd: workspace%d}\n", id, srv.BaseURL("chatcompletion"), i+1)
	}
	writeFile(t, filepath.Join(dir, "c.yaml"), cfg.String())

	res := massgenRun(t, bin, dir, "", "--config", "c.yaml", "--context", ".", "--display", "plain", "Write greet.py")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	_, summary, ok := strings.Cut(res.stderr, "\nVotes (")
	if !ok {
		t.Fatalf("no summary on stderr:\n%s", res.stderr)
	}
	for _, l := range strings.Split("Votes ("+summary, "\n") {
		if w := runewidth.StringWidth(l); w > 80 {
			t.Errorf("summary line of %d columns: %s", w, l)
		}
	}
	if t.Failed() {
		t.Logf("summary:\nVotes (%s", summary)
	}
}
