package orchestrator

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/vocab"
)

// MassGen's voting_sensitivity checklist_gated (0.1.50): before deciding, an agent scores the
// answers against a checklist of criteria (0-10 each) with the submit_checklist tool; the tool
// answers a verdict, vote or new_answer, from a gate the agent does not see: how many criteria
// must reach a confidence cutoff, both tightening as the agent's answers run out. The verdict is
// advice the prompt tells the agent to follow, as in MassGen: vote and new_answer stay open.
// This file holds the tool's declaration, its pure evaluation and the prompt section; execute
// offers the tool and answers its calls.

// checklistCriteria are MassGen's default evaluation criteria (E1-E4), in MassGen's sense.
var checklistCriteria = []string{
	"Requirements fidelity: the output does what was asked, each stated requirement met as described, not approximated, reinterpreted or quietly left out.",
	"Multi-level correctness: the output works as experienced, not only as inspected: structurally valid and runnable, correct in content, and right when used or rendered.",
	"Per-part depth: every significant part meets the quality bar on its own; judge the weakest part, not the average: no filler, placeholders or stubs carried by the strong parts.",
	"Intentional craft: the output reads as authored, not generated: its structure, style and details show deliberate choices beyond the first adequate option.",
}

// checklistGate is MassGen's ChecklistGate: from one 0-10 strictness scale, how many criteria
// must pass and the score (0-10) at which one passes.
type checklistGate struct {
	effective, required, cutoff int
}

// gateFromBudget is MassGen's ChecklistGate.from_budget: voting_threshold (0-10) raised as the
// agent's answers run out (remaining of total), lowered while most are left; the criteria
// required relax from all of them towards a simple majority as it rises, and the cutoff falls.
func gateFromBudget(threshold, remaining, total, items int) checklistGate {
	et := threshold
	if total > 0 {
		ratio := float64(remaining) / float64(total)
		switch {
		case remaining <= 2:
			et += 2
		case ratio <= 0.4:
			et++
		}
		if ratio >= 0.7 {
			et--
		}
	}
	et = min(max(et, 0), 10)
	floor := max(1, (items+1)/2)
	relax := int(math.RoundToEven(float64((items-floor)*et) / 10))
	return checklistGate{effective: et, required: max(floor, items-relax), cutoff: max(4, int(10-float64(et)*0.5))}
}

// checklistState is what the evaluation of one submission knows of the agent and the run.
type checklistState struct {
	items      int
	gate       checklistGate
	hasAnswers bool     // some answer exists to evaluate
	labels     []string // the anonymous ids with an answer
}

// checklistItem is one criterion of a verdict.
type checklistItem struct {
	ID     string `json:"id"`
	Score  int    `json:"score"`
	Passed bool   `json:"passed"`
}

// checklistResult is submit_checklist's answer.
type checklistResult struct {
	Status        string                    `json:"status"` // accepted | validation_error
	Verdict       string                    `json:"verdict,omitempty"`
	Explanation   string                    `json:"explanation"`
	TrueCount     int                       `json:"true_count"`
	Required      int                       `json:"required"`
	Items         []checklistItem           `json:"items"`
	Failed        []string                  `json:"failed_criteria"`
	BestAgent     string                    `json:"best_agent,omitempty"`
	PerAgentScore map[string]map[string]int `json:"per_agent_scores,omitempty"`
}

var criterionRE = regexp.MustCompile(`^[ET][0-9]+$`)

// evaluateChecklist is MassGen's evaluate_checklist_submission without its diagnostic report:
// scores are flat ({"E1": {"score": 8, "reasoning": "..."}}) or per agent ({"agent1": {"E1":
// ...}, "agent2": {...}}, required when there are two answers or more: every agent with an
// answer, every criterion; the best total wins, ties to the first label). Before any answer
// exists the verdict is new_answer; then vote when enough criteria reach the cutoff.
func evaluateChecklist(raw json.RawMessage, st checklistState) checklistResult {
	invalid := func(format string, args ...any) checklistResult {
		return checklistResult{Status: "validation_error", Explanation: fmt.Sprintf(format, args...), Required: st.gate.required, Items: []checklistItem{}, Failed: []string{}}
	}
	var scores map[string]json.RawMessage
	if err := json.Unmarshal(raw, &scores); err != nil || scores == nil {
		return invalid("Invalid `scores`: expected a JSON object.")
	}
	ids := make([]string, st.items)
	for i := range ids {
		ids[i] = fmt.Sprintf("E%d", i+1)
	}
	flat, perAgent := true, false
	for k := range scores {
		if !criterionRE.MatchString(k) {
			flat, perAgent = false, true
		}
	}
	res := checklistResult{Status: "accepted", Required: st.gate.required, Items: []checklistItem{}, Failed: []string{}}
	chosen := map[string]int{}
	switch {
	case perAgent:
		res.PerAgentScore = map[string]map[string]int{}
		labels := make([]string, 0, len(scores))
		for l := range scores {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		var incomplete []string
		best, bestTotal := "", -1
		for _, l := range labels {
			var agentScores map[string]json.RawMessage
			if err := json.Unmarshal(scores[l], &agentScores); err != nil {
				return invalid("Invalid scores for %s: expected an object of criteria (E1, E2, ...).", l)
			}
			got, total, missing := criterionScores(agentScores, ids)
			if len(missing) > 0 {
				incomplete = append(incomplete, l+": missing "+strings.Join(missing, ", "))
			}
			res.PerAgentScore[l] = got
			if total > bestTotal {
				best, bestTotal, chosen = l, total, got
			}
		}
		if st.hasAnswers && len(incomplete) > 0 {
			return invalid("Incomplete per-agent submission: %s. Score ALL %d criteria for EVERY agent and resubmit.", strings.Join(incomplete, "; "), st.items)
		}
		if st.hasAnswers {
			var missing []string
			for _, l := range st.labels {
				if _, ok := scores[l]; !ok {
					missing = append(missing, l)
				}
			}
			if len(missing) > 0 {
				return invalid("Missing scores for agents with answers: %s. Score every one of %s and resubmit.", strings.Join(missing, ", "), strings.Join(st.labels, ", "))
			}
		}
		res.BestAgent = best
	case flat && len(st.labels) >= 2 && st.hasAnswers:
		return invalid(`You submitted flat scores, but %d agents have answers (%s): score each, as {"%s": {"E1": {"score": N, "reasoning": "..."}, ...}, "%s": {...}}.`,
			len(st.labels), strings.Join(st.labels, ", "), st.labels[0], st.labels[1])
	default:
		got, _, missing := criterionScores(scores, ids)
		if st.hasAnswers && len(missing) > 0 {
			return invalid("Incomplete submission: missing scores for %s. Score ALL %d criteria (E1-E%d) and resubmit.", strings.Join(missing, ", "), st.items, st.items)
		}
		chosen = got
	}
	for _, id := range ids {
		it := checklistItem{ID: id, Score: chosen[id], Passed: chosen[id] >= st.gate.cutoff}
		if it.Passed {
			res.TrueCount++
		} else {
			res.Failed = append(res.Failed, id)
		}
		res.Items = append(res.Items, it)
	}
	switch {
	case !st.hasAnswers:
		res.Verdict = ToolNewAnswer
		res.Explanation = "First answer: there is no existing answer to evaluate. Verdict: new_answer."
	case res.TrueCount >= st.gate.required:
		res.Verdict = ToolVote
		res.Explanation = fmt.Sprintf("%d of %d items passed (required: %d). Verdict: vote.", res.TrueCount, st.items, st.gate.required)
	default:
		res.Verdict = ToolNewAnswer
		res.Explanation = fmt.Sprintf("%d of %d items passed (required: %d). Verdict: new_answer. Items that need improvement: %s. Improve them, then call new_answer.",
			res.TrueCount, st.items, st.gate.required, strings.Join(res.Failed, ", "))
	}
	return res
}

// criterionScores reads the scores of ids (E or T prefix; a number or {"score": N}; 0-10),
// their total, and the ids missing.
func criterionScores(m map[string]json.RawMessage, ids []string) (map[string]int, int, []string) {
	got, total := map[string]int{}, 0
	var missing []string
	for _, id := range ids {
		raw, ok := m[id]
		if !ok {
			raw, ok = m["T"+id[1:]]
		}
		if !ok {
			missing = append(missing, id)
			continue
		}
		s := scoreOf(raw)
		got[id] = s
		total += s
	}
	return got, total, missing
}

// scoreOf is MassGen's extract_score: a number, or an object's "score"; 0 otherwise; 0-10.
func scoreOf(raw json.RawMessage) int {
	var f float64
	if json.Unmarshal(raw, &f) != nil {
		var obj struct {
			Score *float64 `json:"score"`
		}
		if json.Unmarshal(raw, &obj) != nil || obj.Score == nil {
			return 0
		}
		f = *obj.Score
	}
	return int(min(max(f, 0), 10))
}

// checklistGated reports whether the run uses MassGen's checklist_gated voting.
func (r *run) checklistGated() bool {
	return r.cfg.Orchestrator.VotingSensitivity == vocab.ChecklistGated
}

// checklistTurn keeps, for one execution, the accepted submissions so far.
type checklistTurn struct{ accepted int }

// answerChecklist answers every submit_checklist call of a reply (results[i], left to the reply
// handler by the loop): validation errors may be resubmitted; accepted ones count against
// orchestrator.max_checklist_calls_per_round (default 1) for the execution; without
// checklist_first_answer an agent scores only once it has an answer of its own.
func (r *run) answerChecklist(a *agent, ct *checklistTurn, answered int, anons []string, calls []backends.ToolCall, results []*filesystem.Result) {
	o := r.cfg.Orchestrator
	for i, tc := range calls {
		if tc.Name != ToolSubmitChecklist {
			continue
		}
		var res filesystem.Result
		maxCalls := max(o.MaxChecklistCallsPerRound, 1)
		switch {
		case !r.checklistGated():
			res = errorResult("submit_checklist is offered only with voting_sensitivity checklist_gated")
		case !o.ChecklistFirstAnswer && answered == 0:
			res = errorResult("submit_checklist is not available before your first answer: build your answer, then call new_answer. Checklist evaluation begins once you have an answer.")
		case ct.accepted >= maxCalls:
			res = errorResult(fmt.Sprintf("submit_checklist already called %d time(s) this round (max %d): follow its verdict: improve and call new_answer, or vote.", ct.accepted, maxCalls))
		default:
			p, _ := checklistTool.BindJSON(tc.Arguments) // scores that do not bind are judged missing
			v := evaluateChecklist(p.Scores, r.checklistState(answered, anons))
			if v.Status == "accepted" {
				ct.accepted++
			}
			b, _ := json.Marshal(v)
			res = filesystem.Result{Content: string(b), IsError: v.Status != "accepted", Message: v.Explanation}
		}
		ev := r.agentEvent(a, EventToolCall, StatusWorking, PhaseCoordination)
		ev.Tool, ev.Args = tc.Name, shorten(string(tc.Arguments), 200)
		r.emit(ev)
		rev := r.agentEvent(a, EventToolResult, StatusWorking, PhaseCoordination)
		rev.Tool, rev.Args, rev.IsError, rev.Text = ev.Tool, ev.Args, res.IsError, shorten(res.Message, 300)
		r.emit(rev)
		results[i] = &res
	}
}

// checklistState is the gate for agent a now: voting_threshold (default 5) adjusted by its
// answers left of max_new_answers_per_agent (default 5, as MassGen counts them).
func (r *run) checklistState(answered int, anons []string) checklistState {
	o := r.cfg.Orchestrator
	threshold := o.VotingThreshold
	if threshold == 0 {
		threshold = 5
	}
	total := o.MaxNewAnswersPerAgent
	if total == 0 {
		total = 5
	}
	remaining := max(0, total-answered)
	return checklistState{
		items:      len(checklistCriteria),
		gate:       gateFromBudget(threshold, remaining, total, len(checklistCriteria)),
		hasAnswers: len(anons) > 0,
		labels:     anons,
	}
}

// checklistCriteriaPrompt is the evaluation section of the coordination prompt under
// checklist_gated: the criteria, how to score them, and to follow the tool's verdict. The gate
// itself (how many must pass, at what score) stays hidden, as in MassGen.
func checklistCriteriaPrompt() string {
	var b strings.Builder
	b.WriteString("Evaluate the CURRENT ANSWERS against these criteria, each scored 0-10:\n")
	for i, c := range checklistCriteria {
		fmt.Fprintf(&b, "  E%d. %s\n", i+1, c)
	}
	b.WriteString(`Calibrate your scores: 9-10 a professional would publish it as is; 7-8 good with real gaps you can name; 5-6 adequate but uninspired (most first drafts); 3-4 significant problems; 1-2 wrong direction or not working.
Once you have an answer of your own, call submit_checklist with your scores (per agent when several agents have answers) before deciding, and follow its verdict: vote for the best answer when it says vote; otherwise improve the failing criteria and call new_answer. If it reports a validation error, fix the scores and submit again.
`)
	return b.String()
}
