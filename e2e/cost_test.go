//go:build linux || darwin

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 24: the user decides when the answer is good enough (Ctrl-C answers now), and what the
// run may cost (cost in money, --max-cost). Every test drives the real binary against the
// scripted Chat Completions provider; Ctrl-C is a SIGINT to the process.

// resultLine is the --output json result of a turn.
type resultLine struct {
	Type        string            `json:"type"`
	FinalAnswer string            `json:"final_answer"`
	Winner      string            `json:"winner"`
	StoppedBy   string            `json:"stopped_by"`
	ExitCode    int               `json:"exit_code"`
	Session     string            `json:"session"`
	Turn        int               `json:"turn"`
	CostUSD     *float64          `json:"cost_usd"`
	Tokens      map[string]tokens `json:"tokens"`
	Files       []struct {
		Path string `json:"path"`
	} `json:"files_changed"`
}

type tokens struct {
	Input       int64    `json:"input_tokens"`
	CachedInput int64    `json:"cached_input_tokens"`
	Output      int64    `json:"output_tokens"`
	Reasoning   int64    `json:"reasoning_tokens"`
	CostUSD     *float64 `json:"cost_usd"`
}

// lastResult is the last result line of a JSON Lines stdout.
func lastResult(t *testing.T, stdout string) resultLine {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var r resultLine
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Type != "result" {
		t.Fatalf("the last stdout line is not a result: %v\n%s", err, stdout)
	}
	return r
}

// sessionTurn is the folder of turn n of the only session in dir.
func sessionTurn(t *testing.T, dir string, n int) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "session_*"))
	if len(m) != 1 {
		t.Fatalf("sessions: %v", m)
	}
	return filepath.Join(m[0], fmt.Sprintf("turn_%d", n))
}

// stopScene is two agents that each write a file and answer (beta only after alpha's answer
// restarted it), then never vote: only the user can end their coordination. alpha, the first
// to answer, is the leader; as the final agent it delivers page.html into the project, its
// second step blocking when final blocks.
type stopScene struct {
	dir, proj string
	p         *provider
	voting    chan string // an agent is in a vote request, seeing both answers
	presented chan struct{}
}

func newStopScene(t *testing.T, finalBlocks bool) *stopScene {
	s := &stopScene{dir: t.TempDir(), voting: make(chan string, 8), presented: make(chan struct{}, 4)}
	s.proj = filepath.Join(s.dir, "project")
	writeFile(t, filepath.Join(s.proj, "README.md"), "readme\n")
	ws := func(i int) string {
		return filepath.Join(s.dir, ".massgen", "workspaces", fmt.Sprintf("workspace%d", i))
	}
	next := func(tr turn) (reply, bool) { // the second task (--continue): plain coordination
		switch {
		case !tr.has("Second task"):
			return reply{}, false
		case tr.final:
			return reply{text: "second final"}, true
		case len(tr.answers) > 0:
			return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": tr.answers[0], "reason": "fine"})}}, true
		}
		return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "second answer of " + tr.model})}}, true
	}
	s.p = newProvider(t, map[string]func(turn) reply{
		"model-a": func(tr turn) reply {
			if r, ok := next(tr); ok {
				return r
			}
			switch {
			case tr.final && tr.step == 0:
				s.presented <- struct{}{}
				return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(s.proj, "page.html"), "content": "alpha page"})}}
			case tr.final && finalBlocks:
				s.presented <- struct{}{}
				return reply{block: true}
			case tr.final:
				return reply{text: "alpha presents its page"}
			case len(tr.answers) == 2:
				s.voting <- "alpha"
				return reply{block: true}
			case tr.step == 0:
				return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(ws(1), "page.html"), "content": "alpha page"})}}
			}
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "alpha's answer: page.html"})}}
		},
		"model-b": func(tr turn) reply {
			if r, ok := next(tr); ok {
				return r
			}
			switch {
			case len(tr.answers) == 2:
				s.voting <- "beta"
				return reply{block: true}
			case len(tr.answers) == 0:
				return reply{block: true} // restarted by alpha's answer
			case tr.step == 0:
				return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(ws(2), "notes.md"), "content": "beta notes"})}}
			}
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "beta's answer: notes.md"})}}
		},
	})
	writeFile(t, filepath.Join(s.dir, "cfg.yaml"), "agents:\n"+agentYAML("alpha", "model-a", s.p.URL(), "workspace1")+
		agentYAML("beta", "model-b", s.p.URL(), "workspace2")+"orchestrator:\n  timeout_seconds: 300\n")
	return s
}

// start runs the first task and waits until both agents sit in a vote request.
func (s *stopScene) start(t *testing.T, args ...string) *started {
	t.Helper()
	proc := start(t, s.dir, "", append([]string{"--config", "cfg.yaml", "--context", "project", "--display", "plain"}, append(args, "Make a page")...)...)
	for range 2 {
		select {
		case <-s.voting:
		case <-proc.done:
			t.Fatalf("massgen ended early: %v\n%s", proc.err, proc.stderr)
		case <-time.After(time.Minute):
			t.Fatalf("the agents never both answered\n%s", proc.stderr)
		}
	}
	return proc
}

// One Ctrl-C with two answers posted: the leader presents through the normal final
// presentation and delivers its files, exit 0, stopped_by "user"; the session keeps every
// agent's work and answer (sessions show lists them), and --continue starts from them.
func TestCtrlCAnswersNow(t *testing.T) {
	s := newStopScene(t, false)
	proc := s.start(t, "--output", "json")
	if err := proc.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := proc.wait(t, time.Minute); code != 0 {
		t.Fatalf("exit %d after one Ctrl-C, want 0\n%s", code, proc.stderr)
	}
	stderr := proc.stderr.String()
	if !strings.Contains(stderr, "answering now with alpha's answer; Ctrl-C again to cancel") {
		t.Errorf("no answer-now line on stderr:\n%s", stderr)
	}
	res := lastResult(t, proc.stdout.String())
	if res.StoppedBy != "user" || res.ExitCode != 0 || res.Winner != "alpha" || res.FinalAnswer != "alpha presents its page" {
		t.Errorf("result %+v", res)
	}
	if got := readFile(t, filepath.Join(s.proj, "page.html")); got != "alpha page" {
		t.Errorf("delivered page.html = %q", got)
	}
	if len(res.Files) != 1 || filepath.Base(res.Files[0].Path) != "page.html" {
		t.Errorf("files_changed = %+v", res.Files)
	}
	turn1 := sessionTurn(t, s.dir, 1)
	for rel, want := range map[string]string{"agents/agent1/page.html": "alpha page", "agents/agent2/notes.md": "beta notes"} {
		if got := readFile(t, filepath.Join(turn1, rel)); got != want {
			t.Errorf("session %s = %q, want %q", rel, got, want)
		}
	}
	show := run2(t, s.dir, "sessions", "show")
	for _, want := range []string{"Ended:   stopped by the user", "alpha (agent1): answer: alpha's answer: page.html; " + filepath.Join(turn1, "agents", "agent1"),
		"beta (agent2): answer: beta's answer: notes.md; " + filepath.Join(turn1, "agents", "agent2")} {
		if !strings.Contains(show, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, show)
		}
	}

	// --continue: the next turn's agents see every saved answer and the kept work.
	before := len(s.p.requests("model-b"))
	next := run(t, s.dir, "--continue", "--display", "plain", "Second task")
	if next.code != 0 || next.stdout != "second final\n" {
		t.Fatalf("--continue: exit %d, stdout %q\n%s", next.code, next.stdout, next.stderr)
	}
	reqs := s.p.requests("model-b")[before:]
	if len(reqs) == 0 {
		t.Fatal("beta made no request in the second turn")
	}
	body := string(reqs[0])
	for _, want := range []string{"beta's answer: notes.md", "alpha's answer: page.html", "<ANSWERS SO FAR>", filepath.Join(turn1, "agents")} {
		if !strings.Contains(body, want) {
			t.Errorf("the second turn's request lacks %q", want)
		}
	}
}

// run2 runs a read-only massgen command and returns its stdout.
func run2(t *testing.T, dir string, args ...string) string {
	t.Helper()
	res := run(t, dir, args...)
	if res.code != 0 {
		t.Fatalf("massgen %s: exit %d\n%s", strings.Join(args, " "), res.code, res.stderr)
	}
	return res.stdout
}

// A second Ctrl-C (here during the final presentation the first one started) cancels: exit
// 130 within a second.
func TestSecondCtrlCCancels(t *testing.T) {
	s := newStopScene(t, true)
	run := s.start(t)
	if err := run.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range 2 { // alpha delivered its page and now blocks in the presentation
		select {
		case <-s.presented:
		case <-run.done:
			t.Fatalf("massgen ended before presenting: %v\n%s", run.err, run.stderr)
		case <-time.After(time.Minute):
			t.Fatal("the final presentation never started")
		}
	}
	second := time.Now()
	if err := run.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := run.wait(t, 30*time.Second)
	if took := time.Since(second); code != 130 || took > time.Second {
		t.Errorf("exit %d %v after the second Ctrl-C, want 130 within 1s\n%s", code, took, run.stderr)
	}
	if run.stdout.String() != "" {
		t.Errorf("stdout = %q", run.stdout)
	}
}

// Ctrl-C before any answer cancels (130); the cancelled turn keeps every agent's work in the
// session.
func TestCtrlCWithoutAnswerCancels(t *testing.T) {
	dir := t.TempDir()
	ws1 := filepath.Join(dir, ".massgen", "workspaces", "workspace1")
	blocked := make(chan string, 4)
	p := newProvider(t, map[string]func(turn) reply{
		"model-a": func(tr turn) reply {
			if tr.step == 0 {
				return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(ws1, "draft.md"), "content": "half done"})}}
			}
			blocked <- "a"
			return reply{block: true}
		},
		"model-b": func(tr turn) reply { blocked <- "b"; return reply{block: true} },
	})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("alpha", "model-a", p.URL(), "workspace1")+agentYAML("beta", "model-b", p.URL(), "workspace2"))
	run := start(t, dir, "", "--config", "cfg.yaml", "--display", "plain", "--output", "json", "Write")
	for range 2 {
		select {
		case <-blocked:
		case <-run.done:
			t.Fatalf("ended early: %v\n%s", run.err, run.stderr)
		case <-time.After(time.Minute):
			t.Fatal("the agents never reached the model")
		}
	}
	if err := run.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := run.wait(t, 30*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, run.stderr)
	}
	if strings.Contains(run.stderr.String(), "answering now") {
		t.Errorf("answered now without an answer:\n%s", run.stderr)
	}
	if res := lastResult(t, run.stdout.String()); res.ExitCode != 130 || res.Turn != 1 {
		t.Errorf("result %+v", res)
	}
	turn1 := sessionTurn(t, dir, 1)
	if got := readFile(t, filepath.Join(turn1, "agents", "agent1", "draft.md")); got != "half done" {
		t.Errorf("the cancelled turn's work = %q", got)
	}
	if show := run2(t, dir, "sessions", "show"); !strings.Contains(show, "Ended:   cancelled") {
		t.Errorf("sessions show:\n%s", show)
	}
}

// pricesFile is a test catalogue: model-a at $2 input, $0.50 cached input, $10 output, $20
// reasoning per million tokens; model-b at $1, $0.10, $5 (reasoning at the output rate).
const pricesFile = `date: 2026-01-15
models:
  model-a: {input: 2, cached_input: 0.5, output: 10, reasoning: 20, context_window: 200000}
  model-b: {input: 1, cached_input: 0.1, output: 5}
`

// healthyUsage answers (an answer of its own), votes for the first answer and presents, each
// reply reporting u.
func healthyUsage(final string, u usage) func(turn) reply {
	return func(tr turn) reply {
		r := healthyScript(final)(tr)
		if !tr.final && len(tr.answers) == 0 {
			r = reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "the answer of " + tr.model})}}
		}
		r.usage = &u
		return r
	}
}

// A provider reporting usage with cached and reasoning tokens gives each agent's cost and the
// total in the summary, `sessions show` and the JSON result, to the cent, from a catalogue entry
// of the config's pricing file; a model without a price is "unknown" (null in JSON), never 0.
func TestCostInMoney(t *testing.T) {
	u := usage{prompt: 1_000_000, cached: 400_000, completion: 100_000, reasoning: 50_000}
	// model-a: 0.6M×$2 + 0.4M×$0.5 + 0.05M×$10 + 0.05M×$20 = $2.90 a reply;
	// model-b: 0.6M×$1 + 0.4M×$0.1 + 0.1M×$5 = $1.14 a reply.
	perReply := map[string]float64{"model-a": 2.90, "model-b": 1.14}
	t.Run("priced", func(t *testing.T) {
		dir := t.TempDir()
		p := newProvider(t, map[string]func(turn) reply{"model-a": healthyUsage("done", u), "model-b": healthyUsage("done", u)})
		writeFile(t, filepath.Join(dir, "prices.yaml"), pricesFile)
		writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("alpha", "model-a", p.URL(), "workspace1")+
			agentYAML("beta", "model-b", p.URL(), "workspace2")+"pricing:\n  file: prices.yaml\n")
		res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "--output", "json", "Answer")
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		want := map[string]float64{}
		for agent, model := range map[string]string{"alpha": "model-a", "beta": "model-b"} {
			want[agent] = float64(len(p.requests(model))) * perReply[model]
		}
		total := want["alpha"] + want["beta"]
		r := lastResult(t, res.stdout)
		for agent, usd := range want {
			got := r.Tokens[agent]
			if got.CostUSD == nil || math.Abs(*got.CostUSD-usd) > 0.005 || got.CachedInput == 0 || got.Reasoning == 0 {
				t.Errorf("JSON %s: %+v, want cost %.2f and the token kinds", agent, got, usd)
			}
		}
		if r.CostUSD == nil || math.Abs(*r.CostUSD-total) > 0.005 {
			t.Errorf("JSON total cost %v, want %.2f", r.CostUSD, total)
		}
		line := fmt.Sprintf("Cost: $%.2f (alpha $%.2f, beta $%.2f; prices of 2025-12-01)", total, want["alpha"], want["beta"])
		if !strings.Contains(res.stderr, line) {
			t.Errorf("the summary lacks %q:\n%s", line, res.stderr)
		}
		n := int64(len(p.requests("model-a")))
		kinds := fmt.Sprintf("alpha %d in (%d cached) / %d out (%d reasoning)", n*u.prompt, n*u.cached, n*u.completion, n*u.reasoning)
		if !strings.Contains(res.stderr, kinds) {
			t.Errorf("the summary lacks the token kinds %q:\n%s", kinds, res.stderr)
		}
		if show := run2(t, dir, "sessions", "show"); !strings.Contains(show, line) {
			t.Errorf("sessions show lacks %q:\n%s", line, show)
		}
	})
	t.Run("unknown model", func(t *testing.T) {
		dir := t.TempDir()
		p := newProvider(t, map[string]func(turn) reply{"model-u": healthyUsage("done", u)})
		writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("solo", "model-u", p.URL(), "workspace1"))
		res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "--output", "json", "Answer")
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		r := lastResult(t, res.stdout)
		if r.CostUSD != nil || r.Tokens["solo"].CostUSD != nil || r.Tokens["solo"].Input == 0 {
			t.Errorf("JSON: cost %v, solo %+v; want null costs and the tokens", r.CostUSD, r.Tokens["solo"])
		}
		const line = "Cost: unknown (solo unknown (no price for its model)"
		if !strings.Contains(res.stderr, line) {
			t.Errorf("the summary lacks %q:\n%s", line, res.stderr)
		}
		if show := run2(t, dir, "sessions", "show"); !strings.Contains(show, line) || strings.Contains(show, "$0.00") {
			t.Errorf("sessions show:\n%s", show)
		}
	})
}

// --max-cost stops a run whose scripted usage crosses the cap: warnings at 50, 75 and 90% once
// each, no model request after the cap, the leader's answer presented as it is, stopped_by
// "budget", exit 6.
func TestMaxCost(t *testing.T) {
	dir := t.TempDir()
	fifth := usage{prompt: 200_000} // $0.20 a reply at $1 per million
	p := newProvider(t, map[string]func(turn) reply{
		"model-b": func(tr turn) reply { // alpha: answers, then would vote
			if tr.final {
				return reply{text: "presented", usage: &fifth}
			}
			if len(tr.answers) > 0 {
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": tr.answers[0], "reason": "x"})}, usage: &fifth}
			}
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "alpha's answer"})}, usage: &fifth}
		},
		"model-c": func(tr turn) reply { // beta: once alpha has answered, works without end
			if len(tr.answers) == 0 {
				return reply{block: true} // restarted by alpha's answer
			}
			return reply{calls: []toolCall{tc("list_directory", map[string]any{"path": "."})}, usage: &fifth}
		},
	})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("alpha", "model-b", p.URL(), "workspace1")+
		agentYAML("beta", "model-c", p.URL(), "workspace2")+"pricing:\n  models:\n    model-b: {input: 1, output: 1}\n    model-c: {input: 1, output: 1}\n")
	res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "--output", "json", "--max-cost", "1", "Answer")
	if res.code != 6 {
		t.Fatalf("exit %d, want 6\n%s", res.code, res.stderr)
	}
	r := lastResult(t, res.stdout)
	if r.StoppedBy != "budget" || r.ExitCode != 6 || r.Winner != "alpha" || r.FinalAnswer != "alpha's answer" {
		t.Errorf("result %+v", r)
	}
	if r.CostUSD == nil || math.Abs(*r.CostUSD-1) > 1e-6 {
		t.Errorf("cost %v, want 1.00", r.CostUSD)
	}
	for _, share := range []string{"(50%)", "(75%)", "(90%)"} {
		if n := strings.Count(res.stderr, share); n != 1 {
			t.Errorf("warning %s on stderr %d times, want once:\n%s", share, n, res.stderr)
		}
	}
	if !strings.Contains(res.stderr, "massgen: the turn's budget of $1.00 was spent before every agent voted") {
		t.Errorf("stderr does not say the budget stopped the run:\n%s", res.stderr)
	}
	// alpha's answer ($0.20) and beta's four replies ($0.80) reach the cap; beta's first request
	// was cancelled unanswered; nothing after, not even a final presentation.
	if a, b := len(p.requests("model-b")), len(p.requests("model-c")); a != 1 || b != 5 {
		t.Errorf("requests: alpha %d, beta %d; want 1 and 5", a, b)
	}
	if _, err := os.Stat(sessionTurn(t, dir, 1)); err != nil {
		t.Errorf("the stopped turn was not saved: %v", err)
	}
}

// A budget over a model without a price is refused before any model call: exit 2, naming the
// model and where to price it.
func TestMaxCostNeedsPrices(t *testing.T) {
	dir := t.TempDir()
	p := newProvider(t, map[string]func(turn) reply{"model-u": healthyScript("done")})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("solo", "model-u", p.URL(), "workspace1"))
	res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "--max-cost", "0.5", "Answer")
	if res.code != 2 || !strings.Contains(res.stderr, `"model-u"`) || !strings.Contains(res.stderr, "pricing.models") {
		t.Errorf("exit %d\n%s", res.code, res.stderr)
	}
	if n := len(p.requests("model-u")); n != 0 {
		t.Errorf("%d model requests", n)
	}
	if res := run(t, dir, "--config", "cfg.yaml", "--max-cost", "-1", "Answer"); res.code != 2 || !strings.Contains(res.stderr, "--max-cost -1") {
		t.Errorf("--max-cost -1: exit %d\n%s", res.code, res.stderr)
	}
}
