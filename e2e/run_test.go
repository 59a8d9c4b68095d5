package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// project makes a context path with an existing file, a default-excluded .env, a protected
// file and a node_modules folder.
func project(t *testing.T, dir string) string {
	p := filepath.Join(dir, "project")
	writeFile(t, filepath.Join(p, "index.html"), "original index")
	writeFile(t, filepath.Join(p, ".env"), "SECRET=1")
	writeFile(t, filepath.Join(p, "keep.txt"), "protected")
	writeFile(t, filepath.Join(p, "node_modules", "lib.js"), "lib")
	return p
}

func agentYAML(id, model, url, cwd string) string {
	return fmt.Sprintf(`  - id: %s
    backend:
      type: chatcompletion
      model: %s
      base_url: %s
      cwd: %s
`, id, model, url, cwd)
}

func configYAML(p *provider, proj string, agents ...[2]string) string {
	var b strings.Builder
	b.WriteString("agents:\n")
	for i, a := range agents {
		b.WriteString(agentYAML(a[0], a[1], p.URL(), fmt.Sprintf("workspace%d", i+1)))
	}
	fmt.Fprintf(&b, `orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: temp_workspaces
  timeout_seconds: 90
  context_paths:
    - path: %s
      permission: write
      protected_paths: [keep.txt]
`, proj)
	return b.String()
}

// Two agents over a real streaming protocol: alpha answers (with tool calls in the same reply,
// one a denied write into the context path), beta is interrupted and restarted with its partial
// work saved, both vote for alpha, and alpha delivers into the context path as the final agent
// while protected and excluded files stay untouched.
func TestTwoAgentsDeliver(t *testing.T) {
	dir := t.TempDir()
	proj := project(t, dir)
	ms := filepath.Join(dir, ".massgen")
	wsA, wsB := filepath.Join(ms, "workspaces", "workspace1"), filepath.Join(ms, "workspaces", "workspace2")
	tempA, tempB := filepath.Join(ms, "temp_workspaces", "alpha_real"), filepath.Join(ms, "temp_workspaces", "beta_real")
	betaWrote := newSignal()

	p := newProvider(t, map[string]func(turn) reply{
		"model-a": func(tr turn) reply {
			switch {
			case tr.final && tr.step == 0:
				return reply{calls: []toolCall{
					tc("write_file", map[string]any{"path": filepath.Join(proj, "page.html"), "content": "<h1>delivered</h1>"}),
					tc("write_file", map[string]any{"path": filepath.Join(proj, ".env"), "content": "SECRET=stolen"}),
					tc("write_file", map[string]any{"path": filepath.Join(proj, "keep.txt"), "content": "overwritten"}),
					tc("write_file", map[string]any{"path": filepath.Join(proj, "node_modules", "lib.js"), "content": "pwned"}),
				}}
			case tr.final:
				return reply{text: "Final: delivered page.html"}
			case len(tr.answers) == 0:
				if !wait(tr, betaWrote.C()) {
					return reply{block: true}
				}
				return reply{text: "Here is my page.", calls: []toolCall{
					tc("write_file", map[string]any{"path": filepath.Join(wsA, "page.html"), "content": "<h1>draft</h1>"}),
					tc("write_file", map[string]any{"path": filepath.Join(proj, "coordination.txt"), "content": "not allowed yet"}),
					tc("new_answer", map[string]any{"content": "page.html with a heading"}),
				}}
			case tr.step == 0:
				return reply{calls: []toolCall{tc("read_file", map[string]any{"path": filepath.Join(tempA, "agent2", "partial.txt")})}}
			default:
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": "agent1", "reason": "complete"})}}
			}
		},
		"model-b": func(tr turn) reply {
			switch {
			case len(tr.answers) == 0 && tr.step == 0:
				return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(wsB, "partial.txt"), "content": "half done"})}}
			case len(tr.answers) == 0:
				betaWrote.fire()
				return reply{block: true} // interrupted by alpha's answer
			case tr.step == 0:
				return reply{calls: []toolCall{tc("read_file", map[string]any{"path": filepath.Join(tempB, "agent1", "page.html")})}}
			default:
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": "agent1", "reason": "agent1's page works"})}}
			}
		},
	})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), configYAML(p, proj, [2]string{"alpha_real", "model-a"}, [2]string{"beta_real", "model-b"}))

	res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "Make a page")
	// The final agent's writes to .env, keep.txt and node_modules were refused: partial.
	if res.code != 4 || !strings.Contains(res.stderr, "Final agent: 3 writes denied, 1 file changed") {
		t.Fatalf("exit %d, want 4 (partial) saying the 3 refused writes\nstderr:\n%s", res.code, res.stderr)
	}
	if res.stdout != "Final: delivered page.html\n" {
		t.Errorf("stdout = %q, want only the final answer", res.stdout)
	}
	for _, want := range []string{"DENIED write_file", "[beta_real] restarting", "[alpha_real] answered", "wins with 2 of 2 votes", "Winner: alpha_real"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}

	// The context path.
	if got := readFile(t, filepath.Join(proj, "page.html")); got != "<h1>delivered</h1>" {
		t.Errorf("delivered page.html = %q", got)
	}
	if exists(filepath.Join(proj, "coordination.txt")) {
		t.Error("a coordination agent wrote into the context path")
	}
	for f, want := range map[string]string{".env": "SECRET=1", "keep.txt": "protected", "node_modules/lib.js": "lib", "index.html": "original index"} {
		if got := readFile(t, filepath.Join(proj, f)); got != want {
			t.Errorf("%s = %q, want %q (untouched)", f, got, want)
		}
	}
	// Snapshots: alpha's answer (its tool calls ran next to new_answer), beta's partial work.
	if got := readFile(t, filepath.Join(ms, "snapshots", "alpha_real", "page.html")); got != "<h1>draft</h1>" {
		t.Errorf("alpha's snapshot = %q", got)
	}
	if got := readFile(t, filepath.Join(ms, "snapshots", "beta_real", "partial.txt")); got != "half done" {
		t.Errorf("beta's partial snapshot = %q", got)
	}
	if exists(filepath.Join(wsB, "partial.txt")) {
		t.Error("beta's workspace was not cleared on restart")
	}
	logs := runDir(t, dir)
	if m, _ := filepath.Glob(filepath.Join(logs, "snapshots", "beta_real", "*_restart", "partial.txt")); len(m) != 1 {
		t.Errorf("no timestamped restart snapshot of beta in the log folder: %v", m)
	}
	// Anonymised temp workspaces; the final agent also sees its own work.
	for _, p := range []string{
		filepath.Join(tempB, "agent1", "page.html"),
		filepath.Join(tempA, "agent2", "partial.txt"),
		filepath.Join(tempA, "agent1", "page.html"),
	} {
		if !exists(p) {
			t.Errorf("%s missing", p)
		}
	}
	for _, temp := range []string{tempA, tempB} {
		ents, _ := os.ReadDir(temp)
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "agent") {
				t.Errorf("%s holds %q, not an anonymous id", temp, e.Name())
			}
		}
	}
	// alpha, after restarting itself, read beta's partial work.
	found := false
	for _, body := range p.requests("model-a") {
		found = found || strings.Contains(string(body), "half done")
	}
	if !found {
		t.Error("alpha never saw beta's partial work")
	}
	// The final workspace is kept; logs and the audit trail are in the run folder.
	if !exists(filepath.Join(wsA, "page.html")) {
		t.Error("the final agent's workspace was not kept")
	}
	audit := readFile(t, filepath.Join(logs, "permissions.jsonl"))
	if n := strings.Count(audit, "\n"); n < 8 {
		t.Errorf("permissions.jsonl has %d lines", n)
	}
	if log := readFile(t, filepath.Join(logs, "massgen.log")); !strings.Contains(log, `"event":"restart"`) || !strings.Contains(log, `"event":"final"`) {
		t.Errorf("massgen.log lacks the events")
	}
	assertNoLeak(t, p, map[string]string{"model-a": "alpha_real", "model-b": "beta_real"})
}

// Three agents: gamma, interrupted with partial work, posts a better answer after beta voted;
// alpha and beta vote again, gamma wins and delivers.
func TestThreeAgentsRevote(t *testing.T) {
	dir := t.TempDir()
	proj := project(t, dir)
	ms := filepath.Join(dir, ".massgen")
	ws := func(i int) string { return filepath.Join(ms, "workspaces", fmt.Sprintf("workspace%d", i)) }
	gammaWrote, betaVoted := newSignal(), newSignal()
	voteFor := func(tr turn, id string) reply {
		return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": id, "reason": "best so far"})}}
	}
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	p := newProvider(t, map[string]func(turn) reply{
		"model-a": func(tr turn) reply {
			switch {
			case len(tr.answers) == 0:
				if !wait(tr, gammaWrote.C()) {
					return reply{block: true}
				}
				return reply{calls: []toolCall{
					tc("write_file", map[string]any{"path": filepath.Join(ws(1), "page.html"), "content": "v1"}),
					tc("new_answer", map[string]any{"content": "first page"}),
				}}
			case has(tr.answers, "agent3"):
				return voteFor(tr, "agent3")
			default:
				return voteFor(tr, "agent1")
			}
		},
		"model-b": func(tr turn) reply {
			switch {
			case len(tr.answers) == 0:
				return reply{block: true}
			case has(tr.answers, "agent3"):
				return voteFor(tr, "agent3")
			default:
				defer betaVoted.fire()
				return voteFor(tr, "agent1")
			}
		},
		"model-c": func(tr turn) reply {
			switch {
			case tr.final && tr.step == 0:
				return reply{calls: []toolCall{tc("copy_file", map[string]any{
					"source_path": filepath.Join(ws(3), "page.html"), "destination_path": filepath.Join(proj, "page.html"), "overwrite": true})}}
			case tr.final:
				return reply{text: "gamma delivered page.html"}
			case len(tr.answers) == 0 && tr.step == 0:
				return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(ws(3), "notes.txt"), "content": "gamma notes"})}}
			case len(tr.answers) == 0:
				gammaWrote.fire()
				return reply{block: true}
			case has(tr.answers, "agent3"):
				return voteFor(tr, "agent3")
			default:
				if !wait(tr, betaVoted.C()) {
					return reply{block: true}
				}
				return reply{calls: []toolCall{
					tc("write_file", map[string]any{"path": filepath.Join(ws(3), "page.html"), "content": "v2"}),
					tc("new_answer", map[string]any{"content": "improved page"}),
				}}
			}
		},
	})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), configYAML(p, proj,
		[2]string{"alpha_real", "model-a"}, [2]string{"beta_real", "model-b"}, [2]string{"gamma_real", "model-c"}))

	res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "Make a page")
	if res.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", res.code, res.stderr)
	}
	if res.stdout != "gamma delivered page.html\n" {
		t.Errorf("stdout = %q", res.stdout)
	}
	if got := readFile(t, filepath.Join(proj, "page.html")); got != "v2" {
		t.Errorf("delivered page = %q", got)
	}
	if n := strings.Count(res.stderr, "[beta_real] voted"); n != 2 {
		t.Errorf("beta voted %d times, want 2 (again after the new answer):\n%s", n, res.stderr)
	}
	if !strings.Contains(res.stderr, "wins with 3 of 3 votes") {
		t.Errorf("stderr:\n%s", res.stderr)
	}
	logs := runDir(t, dir)
	if m, _ := filepath.Glob(filepath.Join(logs, "snapshots", "gamma_real", "*_restart", "notes.txt")); len(m) != 1 {
		t.Errorf("gamma's partial work was not saved on restart: %v", m)
	}
	assertNoLeak(t, p, map[string]string{"model-a": "alpha_real", "model-b": "beta_real", "model-c": "gamma_real"})
}

// Ctrl-C stops every agent, keeps what was written, prints nothing on stdout and exits 130.
func TestInterruptExits130(t *testing.T) {
	dir := t.TempDir()
	proj := project(t, dir)
	ws1 := filepath.Join(dir, ".massgen", "workspaces", "workspace1")
	both := make(chan string, 4)
	slow := func(name string) func(turn) reply {
		return func(tr turn) reply {
			if tr.step == 0 && !tr.final {
				return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(ws1, name+".txt"), "content": "kept"})}}
			}
			both <- name
			return reply{block: true}
		}
	}
	p := newProvider(t, map[string]func(turn) reply{"model-a": slow("a"), "model-b": func(tr turn) reply { both <- "b"; return reply{block: true} }})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), configYAML(p, proj, [2]string{"alpha_real", "model-a"}, [2]string{"beta_real", "model-b"}))

	cmd := exec.Command(binary, "--config", "cfg.yaml", "--display", "plain", "Make a page")
	cmd.Dir, cmd.Env = dir, cleanEnv(t)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for range 2 { // both agents are inside a model call
		select {
		case <-both:
		case err := <-done:
			t.Fatalf("massgen ended early: %v\n%s", err, errb.String())
		case <-time.After(time.Minute):
			t.Fatal("agents never reached the model")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 130 {
			t.Fatalf("exit = %v, want 130\n%s", err, errb.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("massgen did not stop after SIGINT")
	}
	if out.String() != "" {
		t.Errorf("stdout = %q, want nothing", out.String())
	}
	if got := readFile(t, filepath.Join(ws1, "a.txt")); got != "kept" {
		t.Errorf("the agent's file = %q", got)
	}
	if ents, _ := os.ReadDir(proj); len(ents) != 4 {
		t.Errorf("the context path changed: %v", ents)
	}
}

// The built-in scripted demo runs end to end with no API key: files written, a denied write,
// a restart with partial work saved, votes, and the delivery into the context path.
func TestScriptedDemo(t *testing.T) {
	for _, tt := range []struct {
		name, config, wantAnswer string
	}{
		{"two agents", "@examples/demo/two_agents_deliver", "Delivered hello.html into "},
		{"three agents", "@examples/demo/three_agents_restart", "Delivered hello.html into "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			site := filepath.Join(dir, "site")
			if err := os.Mkdir(site, 0o755); err != nil {
				t.Fatal(err)
			}
			res := run(t, dir, "--config", tt.config, "--context", "site", "--display", "plain", "Make a hello page")
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stderr)
			}
			if !strings.HasPrefix(res.stdout, tt.wantAnswer+site) || strings.Count(res.stdout, "\n") != 1 {
				t.Errorf("stdout = %q", res.stdout)
			}
			if page := readFile(t, filepath.Join(site, "hello.html")); !strings.Contains(page, "<h1>Hello") {
				t.Errorf("hello.html = %q", page)
			}
			if ents, _ := os.ReadDir(site); len(ents) != 1 {
				t.Errorf("site holds %v, want only hello.html", ents)
			}
			if !strings.Contains(res.stderr, "restarting") {
				t.Errorf("no restart:\n%s", res.stderr)
			}
			logs := runDir(t, dir)
			if m, _ := filepath.Glob(filepath.Join(logs, "snapshots", "*", "*_restart", "*")); len(m) == 0 {
				t.Error("no partial work saved on restart")
			}
		})
	}
	t.Run("without a context path", func(t *testing.T) {
		dir := t.TempDir()
		res := run(t, dir, "--config", "@examples/demo/two_agents_deliver", "--display", "plain", "Make a hello page")
		if res.code != 1 || !strings.Contains(res.stderr, "--context") || res.stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("silent", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "site"), 0o755); err != nil {
			t.Fatal(err)
		}
		res := run(t, dir, "--config", "@examples/demo/two_agents_deliver", "--context", "site", "--display", "silent", "Make a hello page")
		if res.code != 0 || res.stderr != "" || !strings.HasPrefix(res.stdout, "Delivered hello.html") {
			t.Errorf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
		}
	})
}

// A missing API key is one clear error before any prompt or agent start (exit 2, the preflight):
// nothing runs, nothing is created.
func TestMissingKeyBeforeStart(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cfg.yaml"), `agents:
  - id: a
    backend:
      type: scripted
      cwd: workspace1
      script: [{text: hi}]
  - id: b
    backend: {type: openai, model: gpt-5, cwd: workspace2}
`)
	res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "task")
	if res.code != 2 || !strings.Contains(res.stderr, "cfg.yaml:8: agents[1].backend.api_key: agent \"b\": backend \"openai\": no API key: set OPENAI_API_KEY") || res.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if strings.Contains(res.stderr, "working") {
		t.Errorf("an agent started:\n%s", res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".massgen")); !os.IsNotExist(err) {
		t.Errorf(".massgen/ was created: %v", err)
	}
}

// With the project itself as the context path (`--context .`), .massgen/ is inside it: listing
// the temp workspace, snapshot and workspace roots must not reveal other agents' real ids.
func TestContextDotHidesRealIDs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "index.html"), "original")
	ms := filepath.Join(dir, ".massgen")
	p := newProvider(t, map[string]func(turn) reply{
		"model-a": func(tr turn) reply {
			switch {
			case tr.final:
				return reply{text: "done"}
			case len(tr.answers) == 0 && tr.step == 0:
				var calls []toolCall
				for _, sub := range []string{"temp_workspaces", "snapshots", "workspaces", "logs", ""} {
					calls = append(calls, tc("list_directory", map[string]any{"path": filepath.Join(ms, sub)}))
				}
				return reply{calls: calls}
			case len(tr.answers) == 0:
				return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "listed"})}}
			default:
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": "agent1", "reason": "only one"})}}
			}
		},
		"model-b": func(tr turn) reply {
			if len(tr.answers) == 0 {
				return reply{block: true}
			}
			return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": "agent1", "reason": "fine"})}}
		},
	})
	cfg := "agents:\n" + agentYAML("alpha_real", "model-a", p.URL(), "workspace1") + agentYAML("beta_real", "model-b", p.URL(), "workspace2") +
		"orchestrator:\n  snapshot_storage: snapshots\n  agent_temporary_workspace: temp_workspaces\n  timeout_seconds: 90\n"
	writeFile(t, filepath.Join(dir, "cfg.yaml"), cfg)
	res := run(t, dir, "--config", "cfg.yaml", "--context", ".", "--display", "plain", "List things")
	if res.code != 0 || res.stdout != "done\n" {
		t.Fatalf("exit %d, stdout %q\n%s", res.code, res.stdout, res.stderr)
	}
	assertNoLeak(t, p, map[string]string{"model-a": "alpha_real", "model-b": "beta_real"})
}
