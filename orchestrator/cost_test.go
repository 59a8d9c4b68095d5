package orchestrator

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
)

// "Answer now": before any answer it does nothing (the caller cancels instead); after one it
// stops coordination at once, the leader presents through the normal final presentation, and
// the result says the user stopped it. During the presentation it does nothing.
func TestAnswerNow(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	ctl := NewControl()
	started, release := make(chan struct{}, 2), make(chan struct{})
	answered := make(chan struct{})
	h.ev.on = func(ev Event) {
		if ev.Kind == EventAnswer && ev.Agent == "alice" {
			close(answered)
		}
	}
	presenting := false
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if c.final() {
			if _, ok := ctl.AnswerNow(); ok {
				t.Error("AnswerNow acted during the final presentation")
			}
			presenting = true
			return textResp("alice presents"), nil
		}
		if c.n == 0 {
			started <- struct{}{}
			<-release
			return answerResp("alice's answer"), nil
		}
		return block(ctx)
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		started <- struct{}{}
		return block(ctx) // never answers: coordination would go on until the timeout
	}
	o := h.options(context.Background())
	o.Control = ctl
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.runOptions(context.Background(), o)
		done <- outcome{res, err}
	}()
	<-started
	<-started
	if leader, ok := ctl.AnswerNow(); ok {
		t.Fatalf("AnswerNow with no answer yet = %q, true", leader)
	}
	close(release)
	<-answered
	leader, ok := ctl.AnswerNow()
	if !ok || leader != "alice" {
		t.Fatalf("AnswerNow = %q, %v; want alice", leader, ok)
	}
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	res := out.res
	if res.StoppedBy != StoppedByUser || res.Winner != "alice" || res.FinalAnswer != "alice presents" || !presenting {
		t.Errorf("result: stopped by %q, winner %q, final %q (presented %v)", res.StoppedBy, res.Winner, res.FinalAnswer, presenting)
	}
	if !strings.Contains(res.EndedEarly, "stopped by the user") {
		t.Errorf("EndedEarly = %q", res.EndedEarly)
	}
	// A stopped turn lists every agent's work for the session.
	if len(res.Work) != 2 || res.Work[0].Answer != "alice's answer" || res.Work[1].Anon != "agent2" {
		t.Errorf("work = %+v", res.Work)
	}
	if len(h.rec.get("bob")) != 1 {
		t.Errorf("bob made %d requests, want 1 (cancelled by the stop)", len(h.rec.get("bob")))
	}
}

// Costs: each agent's calls priced from the catalogue by kind (cached input and reasoning at
// their own rates), a provider-reported cost standing for the calls since its last report, and
// an agent without a price unknown, never 0: the turn's total is then unknown too.
func TestCostPerAgent(t *testing.T) {
	h := newHarness(t, "a", "b", "c")
	usage := backends.Usage{InputTokens: 1_000_000, CachedInputTokens: 400_000, OutputTokens: 100_000, ReasoningTokens: 50_000}
	answerThenVote := func(u func(n int) backends.Usage) script {
		return func(ctx context.Context, c fakeCall) (*backends.Response, error) {
			var r *backends.Response
			switch {
			case c.final():
				r = textResp("final")
			case len(c.answers()) == 3:
				r = voteResp("agent1", "first")
			default:
				r = answerResp("answer " + c.req.Vars["AGENT_ANON"])
			}
			r.Usage = u(c.n)
			return r, nil
		}
	}
	h.scripts["a"] = answerThenVote(func(int) backends.Usage { return usage })
	h.scripts["b"] = answerThenVote(func(int) backends.Usage { return usage })
	// c's provider reports a cost on its second call, for both calls.
	h.scripts["c"] = answerThenVote(func(n int) backends.Usage {
		if n == 1 {
			return backends.Usage{InputTokens: 10, CostUSD: 0.7}
		}
		return backends.Usage{InputTokens: 10}
	})
	// Wait for every answer before voting, so each agent makes exactly two calls.
	o := h.options(context.Background())
	o.Pricing = pricing.Default().With(map[string]pricing.Price{"fake-a": {Input: 2, CachedInput: 0.5, Output: 10, Reasoning: 20}})
	res, err := h.runOptions(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	callsA := len(h.rec.get("a"))
	want := float64(callsA) * (0.6*2 + 0.4*0.5 + 0.05*10 + 0.05*20)
	if c := res.Cost["a"]; !c.Known || math.Abs(c.USD-want) > 1e-9 {
		t.Errorf("a's cost = %+v, want %v for %d calls", c, want, callsA)
	}
	if c := res.Cost["b"]; c.Known || c.String() != "unknown" {
		t.Errorf("b (no price) costs %+v %q, want unknown", c, c)
	}
	if c := res.Cost["c"]; !c.Known || c.USD != 0.7 {
		t.Errorf("c's reported cost = %+v, want 0.7", c)
	}
	if res.TotalCost.Known || math.Abs(res.TotalCost.USD-(want+0.7)) > 1e-9 {
		t.Errorf("total = %+v, want unknown, at least %v", res.TotalCost, want+0.7)
	}
	if u := res.Usage["a"]; u.CachedInputTokens != int64(callsA)*400_000 || u.ReasoningTokens != int64(callsA)*50_000 {
		t.Errorf("a's usage = %+v", u)
	}
	last := h.ev.of(EventUsage, "a")
	if ev := last[len(last)-1]; ev.Cost != res.Cost["a"] {
		t.Errorf("the last usage event's cost %+v differs from the result's %+v", ev.Cost, res.Cost["a"])
	}
}

// The turn's budget: warnings at 50, 75 and 90% once each; at the cap no model request starts,
// coordination stops and the leader's answer is presented as it is (a presentation would be
// another request); the result says the budget stopped it.
func TestTurnBudget(t *testing.T) {
	h := newHarness(t, "a", "b")
	h.cfg.Orchestrator.MaxCostUSD = 1
	fifth := backends.Usage{InputTokens: 200_000} // $0.20 at $1 per million
	h.scripts["a"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		r := answerResp("a's answer")
		if c.final() {
			t.Error("a presented although the budget was spent")
			r = textResp("final")
		}
		r.Usage = fifth
		return r, nil
	}
	answered := make(chan struct{})
	h.ev.on = func(ev Event) {
		if ev.Kind == EventAnswer {
			close(answered)
		}
	}
	h.scripts["b"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if c.n == 0 {
			<-answered // a answers first: a leader exists when the budget runs out
		}
		r := &backends.Response{ToolCalls: []backends.ToolCall{call("w", "list_directory", map[string]string{"path": "."})}, Usage: fifth}
		return r, nil // works forever
	}
	o := h.options(context.Background())
	price := pricing.Price{Input: 1, Output: 1}
	o.Pricing = pricing.Default().With(map[string]pricing.Price{"fake-a": price, "fake-b": price})
	res, err := h.runOptions(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.StoppedBy != StoppedByBudget || res.Winner != "a" || res.FinalAnswer != "a's answer" {
		t.Errorf("stopped by %q, winner %q, final %q", res.StoppedBy, res.Winner, res.FinalAnswer)
	}
	if n := len(h.rec.get("a")) + len(h.rec.get("b")); n != 5 {
		t.Errorf("%d model requests, want 5 ($0.20 each up to the $1 cap, none after)", n)
	}
	if !res.TotalCost.Known || math.Abs(res.TotalCost.USD-1) > 1e-9 {
		t.Errorf("total = %+v", res.TotalCost)
	}
	var texts []string
	for _, ev := range h.ev.of(EventBudget, "") {
		texts = append(texts, ev.Text)
	}
	all := strings.Join(texts, "\n")
	for _, share := range []string{"(50%)", "(75%)", "(90%)"} {
		if n := strings.Count(all, share); n != 1 {
			t.Errorf("warning %s given %d times:\n%s", share, n, all)
		}
	}
	if !strings.Contains(all, "the turn's budget of $1.00 was spent") {
		t.Errorf("no event says the budget was spent:\n%s", all)
	}
}

// An agent's own budget stops that agent only: it makes no request after its cap and is marked
// stopped by its budget (a limit, not a failure); the others finish the run.
func TestAgentBudget(t *testing.T) {
	h := newHarness(t, "a", "b")
	h.cfg.Agents[1].MaxCostUSD = 0.3
	h.scripts["a"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("final"), nil
		case len(c.answers()) > 0:
			return voteResp("agent1", "mine"), nil
		}
		return answerResp("a's answer"), nil
	}
	h.scripts["b"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		return &backends.Response{ToolCalls: []backends.ToolCall{call("w", "list_directory", map[string]string{"path": "."})},
			Usage: backends.Usage{InputTokens: 200_000}}, nil
	}
	o := h.options(context.Background())
	price := pricing.Price{Input: 1, Output: 1}
	o.Pricing = pricing.Default().With(map[string]pricing.Price{"fake-a": price, "fake-b": price})
	res, err := h.runOptions(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.rec.get("b")); n != 2 {
		t.Errorf("b made %d requests, want 2 ($0.20 each, cap $0.30)", n)
	}
	stops := h.ev.of(EventStopped, "b")
	if len(stops) != 1 || !stops[0].Budget || !strings.Contains(stops[0].Text, "its budget of $0.3000 was spent") {
		t.Errorf("b's stop = %+v", stops)
	}
	if res.Winner != "a" || res.FinalAnswer != "final" || res.StoppedBy != "" {
		t.Errorf("winner %q, final %q, stopped by %q", res.Winner, res.FinalAnswer, res.StoppedBy)
	}
	warned := 0
	for _, ev := range h.ev.of(EventBudget, "b") {
		if strings.HasPrefix(ev.Text, "its budget") {
			warned++
		}
	}
	if warned != 3 {
		t.Errorf("%d warnings of b's budget, want 3 (50, 75, 90%%)", warned)
	}
}

// A budget needs every agent priced: an unpriced model is refused before anything starts.
func TestBudgetNeedsPrices(t *testing.T) {
	h := newHarness(t, "a")
	h.cfg.Orchestrator.MaxCostUSD = 1
	h.scripts["a"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		t.Error("a model request started")
		return textResp("x"), nil
	}
	_, err := h.run(context.Background())
	if !errors.Is(err, ErrUnpriced) || !strings.Contains(err.Error(), `"fake-a"`) || !strings.Contains(err.Error(), "pricing.models") {
		t.Errorf("err = %v", err)
	}
}

// A previous turn that ended early is shown to the next turn's agents: its answers so far under
// their anonymous ids, and the folder of every agent's kept work.
func TestInterruptedTurnIsShown(t *testing.T) {
	h := newHarness(t, "a")
	h.cfg.Agents[0].Backend.CWD = filepath.Join(h.cfg.BaseDir, ".massgen", "workspaces", "a")
	if err := os.MkdirAll(h.cfg.Agents[0].Backend.CWD, 0o755); err != nil {
		t.Fatal(err)
	}
	h.scripts["a"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if c.final() {
			return textResp("final"), nil
		}
		return answerResp("new"), nil
	}
	o := h.options(context.Background())
	o.History = []Exchange{{User: "first task", Interrupted: "it was cancelled before a final answer",
		Answers: []PriorAnswer{{Anon: "agent2", Text: "beta's draft answer"}}}}
	o.PriorWork = t.TempDir()
	if _, err := h.runOptions(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	req := h.rec.get("a")[0]
	var all strings.Builder
	for _, m := range req.Messages {
		all.WriteString(m.Content + "\n")
	}
	for _, want := range []string{"(This turn ended early: it was cancelled before a final answer.", "<ANSWERS SO FAR>\n<agent2>\nbeta's draft answer\n<end of agent2>",
		"Every agent's work from the previous turn, which ended early (read-only, one folder per anonymous id): " + o.PriorWork} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the request lacks %q:\n%s", want, all.String())
		}
	}
	if req.Vars["PRIOR_WORK"] != o.PriorWork {
		t.Errorf("PRIOR_WORK = %q", req.Vars["PRIOR_WORK"])
	}
}

// A winner whose own budget is spent presents nothing (a presentation would be a request): its
// answer stands as it is, and the turn is not marked stopped by the budget.
func TestWinnerBudgetSpent(t *testing.T) {
	h := newHarness(t, "a")
	h.cfg.Agents[0].MaxCostUSD = 0.1
	h.scripts["a"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if c.final() {
			t.Error("a presented although its budget was spent")
		}
		r := answerResp("a's answer")
		r.Usage = backends.Usage{InputTokens: 200_000}
		return r, nil
	}
	o := h.options(context.Background())
	o.Pricing = pricing.Default().With(map[string]pricing.Price{"fake-a": {Input: 1, Output: 1}})
	res, err := h.runOptions(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalAnswer != "a's answer" || res.StoppedBy != "" || !strings.Contains(res.EndedEarly, "its budget of $0.1000 was spent") {
		t.Errorf("final %q, stopped by %q, ended early %q", res.FinalAnswer, res.StoppedBy, res.EndedEarly)
	}
}
