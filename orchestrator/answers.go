package orchestrator

import (
	"errors"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/internal/vocab"
)

// Helpers over a coordination's answers and votes: what may be posted (answerProblem and the
// novelty check) and who leads (leader). All read a state; none changes it.

var (
	errFinished     = errors.New("coordination is over")
	errVoteSetAside = errors.New("the vote came after a new answer")
	errNoAnswerYet  = errors.New("no agent has answered yet")
)

// invalidError is a workflow call that cannot be accepted; its text goes back to the model.
type invalidError string

func (e invalidError) Error() string { return string(e) }

// answerProblem says why a new answer from agent i cannot be accepted ("" if it can).
func (s *state) answerProblem(i int, text string) string {
	if strings.TrimSpace(text) == "" {
		return "new_answer needs a non-empty content."
	}
	if len(text) > maxAnswerBytes {
		return fmt.Sprintf("the answer is %d bytes, more than the limit of %d; shorten it and put long content in files in your workspace.", len(text), maxAnswerBytes)
	}
	if max := s.rules.maxAnswers; max > 0 && s.agents[i].answers >= max {
		return fmt.Sprintf("you have already posted the maximum of %d new answers; vote for the best existing answer instead.", max)
	}
	norm := strings.TrimSpace(text)
	for _, b := range s.agents { // config order, so the message is stable
		if b.answer != nil && strings.TrimSpace(b.answer.text) == norm {
			return fmt.Sprintf("this answer is identical to %s's existing answer; give a different, better answer or vote for %s.", b.anon, b.anon)
		}
	}
	if limit, msg := noveltyLimit(s.rules.novelty); limit > 0 {
		for _, b := range s.agents {
			if b.answer != nil && wordOverlap(text, b.answer.text) > limit {
				return msg
			}
		}
	}
	return ""
}

// noveltyLimit is MassGen's answer_novelty_requirement: the word overlap (Jaccard similarity of
// the sets of lower-cased words) above which a new answer is refused, and the message saying
// so; 0 for lenient (no check).
func noveltyLimit(level vocab.Strictness) (float64, string) {
	switch level {
	case vocab.Strict:
		return 0.5, "your answer is too similar to existing answers (>50% overlap). Please use a fundamentally different approach, employ different tools/techniques, or vote for an existing answer."
	case vocab.Balanced:
		return 0.7, "your answer is too similar to existing answers (>70% overlap). Please provide a meaningfully different solution with new insights, approaches, or tools, or vote for an existing answer."
	}
	return 0, ""
}

// wordOverlap is the Jaccard similarity of the two texts' sets of lower-cased,
// whitespace-separated words, as MassGen computes it.
func wordOverlap(a, b string) float64 {
	wa, wb := wordSet(a), wordSet(b)
	switch {
	case len(wa) == 0 && len(wb) == 0:
		return 1
	case len(wa) == 0 || len(wb) == 0:
		return 0
	}
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(wa)+len(wb)-inter)
}

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(s)) {
		set[w] = true
	}
	return set
}

// leader is the index of the answer with most votes, ties going to the answer posted first;
// -1 when no agent has an answer. It is the winner when coordination ends, however it ends
// (every agent voted, the overall timeout, a stop).
func (s *state) leader() int {
	count := make([]int, len(s.agents))
	for _, a := range s.agents {
		if a.vote != nil {
			count[a.vote.target]++
		}
	}
	best := -1
	for i, a := range s.agents {
		if a.answer == nil {
			continue
		}
		if b := best; b < 0 || count[i] > count[b] || (count[i] == count[b] && a.answer.seq < s.agents[b].answer.seq) {
			best = i
		}
	}
	return best
}

// decisionText says why agent w won.
func (s *state) decisionText(w int) string {
	n, all := 0, 0
	for _, a := range s.agents {
		if a.vote != nil {
			all++
			if a.vote.target == w {
				n++
			}
		}
	}
	text := fmt.Sprintf("%s (%s) wins with %d of %d votes", s.agents[w].id, s.agents[w].anon, n, all)
	if s.ended != "" {
		text += "; " + s.ended
	}
	return text
}

// shownAnswers are the current answers in config order (anonymous ids ascending).
func (s *state) shownAnswers() []shownAnswer {
	var out []shownAnswer
	for _, a := range s.agents {
		if a.answer != nil {
			out = append(out, shownAnswer{anon: a.anon, text: a.answer.text})
		}
	}
	return out
}

// answerAnons lists the anonymous ids that have an answer, in config order.
func (s *state) answerAnons() []string {
	return anonsOf(s.shownAnswers())
}

func anonsOf(answers []shownAnswer) []string {
	var ids []string
	for _, a := range answers {
		ids = append(ids, a.anon)
	}
	return ids
}

// answerIDs is answerAnons for a message to a model.
func (s *state) answerIDs() string {
	ids := s.answerAnons()
	if len(ids) == 0 {
		return "(none yet)"
	}
	return strings.Join(ids, ", ")
}

func (s *state) byAnon(anon string) int {
	for i, a := range s.agents {
		if a.anon == anon {
			return i
		}
	}
	return -1
}

func (s *state) stopReasons() string {
	var parts []string
	for _, a := range s.agents {
		if a.status == StatusStopped {
			parts = append(parts, a.id+" ("+a.stopReason+")")
		}
	}
	return strings.Join(parts, "; ")
}
