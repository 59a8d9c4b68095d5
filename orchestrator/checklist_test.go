package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/internal/vocab"
)

// MassGen's ChecklistGate: the documented table for four criteria, and the budget adjustment.
func TestChecklistGate(t *testing.T) {
	// _checklist_required_true for 4 items: effective threshold 0-2 -> 4, 3-7 -> 3, 8-10 -> 2.
	for et := 0; et <= 10; et++ {
		want := 3
		switch {
		case et <= 2:
			want = 4
		case et >= 8:
			want = 2
		}
		// total 0 leaves the threshold as is.
		if g := gateFromBudget(et, 0, 0, 4); g.required != want || g.effective != et || g.cutoff != max(4, 10-et/2-et%2) {
			t.Errorf("threshold %d: %+v, want required %d", et, g, want)
		}
	}
	tests := []struct {
		threshold, remaining, total int
		want                        checklistGate
	}{
		{5, 5, 5, checklistGate{effective: 4, required: 3, cutoff: 8}},    // ample budget: eased
		{5, 3, 5, checklistGate{effective: 5, required: 3, cutoff: 7}},    // moderate
		{5, 2, 5, checklistGate{effective: 7, required: 3, cutoff: 6}},    // two left: +2
		{5, 3, 10, checklistGate{effective: 6, required: 3, cutoff: 7}},   // 30% left: +1
		{9, 1, 5, checklistGate{effective: 10, required: 2, cutoff: 5}},   // clamped at 10
		{0, 10, 10, checklistGate{effective: 0, required: 4, cutoff: 10}}, // clamped at 0
	}
	for _, tt := range tests {
		if got := gateFromBudget(tt.threshold, tt.remaining, tt.total, 4); got != tt.want {
			t.Errorf("gateFromBudget(%d, %d, %d) = %+v, want %+v", tt.threshold, tt.remaining, tt.total, got, tt.want)
		}
	}
	// Six criteria: the floor is a simple majority (3).
	if g := gateFromBudget(10, 0, 0, 6); g.required != 3 {
		t.Errorf("six criteria at 10: %+v", g)
	}
}

func TestEvaluateChecklist(t *testing.T) {
	gate := checklistGate{required: 3, cutoff: 7}
	two := checklistState{items: 4, gate: gate, hasAnswers: true, labels: []string{"agent1", "agent2"}}
	one := checklistState{items: 4, gate: gate, hasAnswers: true, labels: []string{"agent1"}}
	none := checklistState{items: 4, gate: gate}
	s := func(n int) string { return fmt.Sprintf(`{"score": %d, "reasoning": "r"}`, n) }
	tests := []struct {
		name, scores string
		st           checklistState
		verdict      string // "" : a validation error
		wantText     string
		best         string
		failed       []string
	}{
		{"first answer", `{}`, none, ToolNewAnswer, "First answer", "", []string{"E1", "E2", "E3", "E4"}},
		{"flat, enough pass", `{"E1": ` + s(9) + `, "E2": ` + s(7) + `, "E3": ` + s(8) + `, "E4": ` + s(2) + `}`, one, ToolVote, "3 of 4 items passed (required: 3). Verdict: vote.", "", []string{"E4"}},
		{"flat, too few pass", `{"E1": 9, "E2": 6, "E3": {"score": 8}, "E4": 2}`, one, ToolNewAnswer, "Items that need improvement: E2, E4", "", []string{"E2", "E4"}},
		{"T prefix and clamping", `{"T1": 12, "T2": 7, "T3": 7, "T4": -3}`, one, ToolVote, "", "", []string{"E4"}},
		{"flat, incomplete", `{"E1": 9}`, one, "", "missing scores for E2, E3, E4", "", nil},
		{"flat with two answers", `{"E1": 9, "E2": 9, "E3": 9, "E4": 9}`, two, "", "You submitted flat scores, but 2 agents have answers", "", nil},
		{"per agent: the best decides", `{"agent2": {"E1": 9, "E2": 9, "E3": 9, "E4": 3}, "agent1": {"E1": 5, "E2": 5, "E3": 5, "E4": 5}}`, two, ToolVote, "", "agent2", []string{"E4"}},
		{"per agent: a tie goes to the first label", `{"agent2": {"E1": 8, "E2": 8, "E3": 8, "E4": 8}, "agent1": {"E1": 8, "E2": 8, "E3": 8, "E4": 8}}`, two, ToolVote, "", "agent1", []string{}},
		{"per agent: an agent left out", `{"agent1": {"E1": 8, "E2": 8, "E3": 8, "E4": 8}}`, two, "", "Missing scores for agents with answers: agent2", "", nil},
		{"per agent: a criterion left out", `{"agent1": {"E1": 8, "E2": 8, "E3": 8}, "agent2": {"E1": 8, "E2": 8, "E3": 8, "E4": 1}}`, two, "", "agent1: missing E4", "", nil},
		{"not an object", `[1, 2]`, two, "", "expected a JSON object", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := evaluateChecklist(json.RawMessage(tt.scores), tt.st)
			if tt.verdict == "" {
				if res.Status != "validation_error" || !strings.Contains(res.Explanation, tt.wantText) {
					t.Errorf("result %+v, want a validation error containing %q", res, tt.wantText)
				}
				return
			}
			if res.Status != "accepted" || res.Verdict != tt.verdict || !strings.Contains(res.Explanation, tt.wantText) ||
				res.BestAgent != tt.best || !reflect.DeepEqual(res.Failed, tt.failed) {
				t.Errorf("result %+v, want verdict %s, best %q, failed %v, text %q", res, tt.verdict, tt.best, tt.failed, tt.wantText)
			}
		})
	}
}

// Under checklist_gated the coordination offers submit_checklist; an agent without an answer is
// told to answer first; with one, its scores get a verdict from the gate (voting_threshold and
// the answers it has left); a second accepted call in one execution is refused; the prompt
// lists the criteria and says to follow the verdict.
func TestChecklistGatedRun(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	h.cfg.Orchestrator.VotingSensitivity = vocab.ChecklistGated
	h.cfg.Orchestrator.VotingThreshold = 5
	h.cfg.Orchestrator.MaxNewAnswersPerAgent = 5
	all := func(n int) map[string]any {
		return map[string]any{"E1": map[string]any{"score": n, "reasoning": "r"}, "E2": n, "E3": n, "E4": n}
	}
	submit := func(scores any) *backends.Response {
		b, _ := json.Marshal(map[string]any{"scores": scores})
		return &backends.Response{ToolCalls: []backends.ToolCall{{ID: "c1", Name: ToolSubmitChecklist, Arguments: b}}}
	}
	var mu sync.Mutex
	seen := map[string][]string{} // tool results each agent got from submit_checklist
	// bob answers once alice's first call was refused: an answer arriving before her first
	// reply is handled would restart her execution and drop that reply.
	refused, refusedOnce := make(chan struct{}), sync.Once{}
	record := func(id string, c fakeCall) {
		if m := c.lastMessage(); m.Role == "tool" && m.ToolName == ToolSubmitChecklist {
			if id == "alice" && strings.Contains(m.Content, "not available before your first answer") {
				refusedOnce.Do(func() { close(refused) })
			}
			mu.Lock()
			seen[id] = append(seen[id], m.Content)
			mu.Unlock()
		}
	}
	count := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen[id])
	}
	perAgent := func(c fakeCall, n map[string]int) map[string]any {
		out := map[string]any{}
		for _, l := range c.answers() {
			out[l] = all(n[l])
		}
		return out
	}
	// Both answer at once, then, seeing both answers, score them.
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		record("alice", c)
		if !hasTool(c.req, ToolSubmitChecklist) && !c.final() {
			t.Errorf("alice's request %d has no submit_checklist", c.n)
		}
		if c.n == 0 && !strings.Contains(c.req.System, "E4. Intentional craft") {
			t.Errorf("system prompt lacks the criteria:\n%s", c.req.System)
		}
		switch {
		case c.final():
			return textResp("final alice"), nil
		case c.n == 0:
			return submit(all(9)), nil // before any answer of hers: refused
		case !strings.Contains(c.req.Vars["ANSWERS"], "agent1"):
			return answerResp("alice's answer"), nil
		case len(c.answers()) < 2:
			return block(ctx)
		case count("alice") < 3:
			// the second time in the same execution: refused
			return submit(perAgent(c, map[string]int{"agent1": 9, "agent2": 8})), nil
		default:
			return voteResp("agent1", "the checklist says vote"), nil
		}
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		record("bob", c)
		switch {
		case c.final():
			return textResp("final bob"), nil
		case !strings.Contains(c.req.Vars["ANSWERS"], "agent2"):
			select {
			case <-refused:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return answerResp("bob's answer"), nil
		case len(c.answers()) < 2:
			return block(ctx)
		case count("bob") == 0:
			return submit(perAgent(c, map[string]int{"agent1": 3, "agent2": 4})), nil
		default:
			return voteResp("agent1", "the checklist says new_answer; voting anyway"), nil
		}
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalAnswer == "" {
		t.Fatalf("no final answer: %+v", res)
	}
	results := func(id string) string {
		var out []string
		for _, ev := range h.ev.of(EventToolResult, id) {
			if ev.Tool == ToolSubmitChecklist {
				out = append(out, ev.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	mu.Lock()
	defer mu.Unlock()
	a := strings.Join(seen["alice"], "\n")
	if !strings.Contains(results("alice"), "not available before your first answer") {
		t.Errorf("alice's results:\n%s", results("alice"))
	}
	for _, want := range []string{
		`"verdict":"vote"`, // 4 of 4 at 9 >= the cutoff (8, with 4 of 5 answers left)
		`"best_agent":"agent1"`,
		"already called 1 time(s) this round (max 1)",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("alice's results lack %q:\n%s", want, a)
		}
	}
	if b := strings.Join(seen["bob"], "\n"); !strings.Contains(b, `"verdict":"new_answer"`) || !strings.Contains(b, `"best_agent":"agent2"`) {
		t.Errorf("bob's results:\n%s", b)
	}
}
