package orchestrator

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/vocab"
)

// The policy, rule by rule: a state, a message, the state after it and the effects, in order.
// Agents are alice, bob, carol and dave (agent1 to agent4); the restart grace is a fixed 5s
// unless a case clears it.

var testNames = []string{"alice", "bob", "carol", "dave"}

const (
	alice = iota
	bob
	carol
	dave
)

const testGraceFixed = 5 * time.Second

// fresh is the state of a coordination of n agents about to begin.
func fresh(n int) state {
	anons := make([]string, n)
	for i := range anons {
		anons[i] = fmt.Sprintf("agent%d", i+1)
	}
	return newState(testNames[:n], anons, rules{grace: testGraceFixed}, replyClock{})
}

// with is s changed by each f, in order (s itself stays as it is).
func with(s state, fs ...func(*state)) state {
	s = s.clone()
	for _, f := range fs {
		f(&s)
	}
	return s
}

// State changes, as a test writes them.
func working(i, seen int) func(*state) {
	return func(s *state) {
		a := &s.agents[i]
		a.status, a.executing, a.needsRun, a.deferred, a.seenSeq = StatusWorking, true, false, false, seen
	}
}

func everyoneWorking(s *state) {
	for i := range s.agents {
		working(i, s.answerSeq)(s)
	}
}

func posted(i int, text string) func(*state) {
	return func(s *state) {
		s.answerSeq++
		s.agents[i].answer = &answer{text: text, seq: s.answerSeq}
		s.agents[i].answers++
	}
}

// waitsForQuiet: idle (after an answer, or told to vote again) until the field is quiet.
func waitsForQuiet(i int, status Status) func(*state) {
	return func(s *state) {
		a := &s.agents[i]
		a.status, a.executing, a.needsRun, a.deferred = status, false, true, true
	}
}

func votedFor(i, target int, reason string) func(*state) {
	return func(s *state) {
		a := &s.agents[i]
		a.status, a.needsRun, a.deferred = StatusVoted, false, false
		a.vote = &vote{target: target, reason: reason}
	}
}

func idle(i int) func(*state) {
	return func(s *state) { s.agents[i].executing = false }
}

func restartIsPending(i, graces int) func(*state) {
	return func(s *state) {
		a := &s.agents[i]
		a.pending, a.status, a.graces = true, StatusRestarting, graces
	}
}

func stopped(i int, reason string) func(*state) {
	return func(s *state) {
		a := &s.agents[i]
		a.status, a.stopReason, a.executing = StatusStopped, reason, false
	}
}

func finished(ended string) func(*state) {
	return func(s *state) { s.finished, s.ended = true, ended }
}

func maxAnswers(n int) func(*state)               { return func(s *state) { s.rules.maxAnswers = n } }
func novelty(level vocab.Strictness) func(*state) { return func(s *state) { s.rules.novelty = level } }

// Effects, as a test expects them.
func ev(s state, i int, kind EventKind, status Status, text string) effect {
	a := s.agents[i]
	return emitEvent{ev: Event{Kind: kind, Agent: a.id, Anon: a.anon, Status: status, Phase: PhaseCoordination, Text: text}}
}

func voteEv(s state, i, target int, reason string) effect {
	e := ev(s, i, EventVote, StatusVoted, reason).(emitEvent)
	e.ev.Target = s.agents[target].id
	return e
}

func start(s state, i int, answersLeft bool, answers ...shownAnswer) []effect {
	return []effect{ev(s, i, EventStart, StatusWorking, ""), startExecution{agent: i, view: turnView{answers: answers, answersLeft: answersLeft, ownAnswers: s.agents[i].answers}}}
}

func shown(anon, text string) shownAnswer { return shownAnswer{anon: anon, text: text} }

func effs(parts ...any) []effect {
	var out []effect
	for _, p := range parts {
		switch p := p.(type) {
		case effect:
			out = append(out, p)
		case []effect:
			out = append(out, p...)
		default:
			panic(fmt.Sprintf("effs: %T", p))
		}
	}
	return out
}

type policyCase struct {
	name   string
	before state
	msg    message
	after  []func(*state) // the changes next makes to before
	want   []effect
}

func runPolicyCases(t *testing.T, cases []policyCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			kept := with(tt.before)
			got, fx := next(tt.before, tt.msg)
			if !reflect.DeepEqual(tt.before, kept) {
				t.Errorf("next changed the state it was given")
			}
			if want := with(tt.before, tt.after...); !reflect.DeepEqual(got, want) {
				t.Errorf("state after %T:\n got %s\nwant %s", tt.msg, dumpState(got), dumpState(want))
			}
			if !reflect.DeepEqual(fx, tt.want) {
				t.Errorf("effects of %T:\n got %s\nwant %s", tt.msg, dumpEffects(fx), dumpEffects(tt.want))
			}
			replies := 0
			for _, e := range fx {
				if _, ok := e.(reply); ok {
					replies++
				}
			}
			switch tt.msg.(type) {
			case answerCheck, answerPosted, votePosted:
				if replies != 1 {
					t.Errorf("%d replies to %T, want 1", replies, tt.msg)
				}
			default:
				if replies != 0 {
					t.Errorf("%d replies to %T, which nobody waits for", replies, tt.msg)
				}
			}
		})
	}
}

func dumpState(s state) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seq %d finished %v ended %q clock %v/%v/%v", s.answerSeq, s.finished, s.ended, s.clock.start, s.clock.typical, s.clock.all)
	for _, a := range s.agents {
		fmt.Fprintf(&b, "\n  %s %s needsRun %v deferred %v executing %v pending %v seen %d graces %d answers %d stop %q",
			a.id, a.status, a.needsRun, a.deferred, a.executing, a.pending, a.seenSeq, a.graces, a.answers, a.stopReason)
		if a.answer != nil {
			fmt.Fprintf(&b, " answer %+v", *a.answer)
		}
		if a.vote != nil {
			fmt.Fprintf(&b, " vote %+v", *a.vote)
		}
	}
	return b.String()
}

func dumpEffects(fx []effect) string {
	var b strings.Builder
	for _, e := range fx {
		fmt.Fprintf(&b, "\n  %T %+v", e, e)
	}
	return b.String()
}

func TestPolicyStartsAndAnswers(t *testing.T) {
	at := time.Unix(1000, 0)
	two := with(fresh(2), everyoneWorking)
	three := with(fresh(3), everyoneWorking)
	// carol answered and waits for a quiet field; bob voted for her; dave was stopped.
	four := with(fresh(4), everyoneWorking, posted(carol, "carol's answer"), waitsForQuiet(carol, StatusAnswered),
		votedFor(bob, carol, "fine"), idle(bob), stopped(dave, "backend error: x"), working(alice, 1))
	runPolicyCases(t, []policyCase{
		{
			name:   "begin starts every agent, seeing no answer",
			before: fresh(3),
			msg:    begin{},
			after:  []func(*state){everyoneWorking},
			want:   effs(start(three, alice, true), start(three, bob, true), start(three, carol, true)),
		},
		{
			name:   "an answer clears every vote; an idle voter waits for a quiet field; one waiting already and a stopped one are left as they are",
			before: four,
			msg:    answerPosted{agent: alice, text: "alice's answer", at: at},
			after: []func(*state){posted(alice, "alice's answer"), func(s *state) {
				s.agents[alice].status, s.agents[alice].needsRun, s.agents[alice].deferred = StatusAnswered, true, true
				s.agents[bob].vote = nil
			}, waitsForQuiet(bob, StatusWaiting)},
			want: effs(
				ev(four, alice, EventAnswer, StatusAnswered, "alice's answer"),
				ev(four, bob, EventRestart, StatusWaiting, "new answer from agent1; votes again once no agent is working"),
				reply{}),
		},
		{
			name:   "a working agent gets a pending restart with a grace",
			before: two,
			msg:    answerPosted{agent: alice, text: "hello", at: at},
			after: []func(*state){posted(alice, "hello"), func(s *state) {
				s.agents[alice].status, s.agents[alice].needsRun, s.agents[alice].deferred = StatusAnswered, true, true
			}, restartIsPending(bob, 1)},
			want: effs(
				restartPending{agent: bob, grace: 1, after: testGraceFixed},
				ev(two, alice, EventAnswer, StatusAnswered, "hello"),
				ev(two, bob, EventRestart, StatusRestarting, "new answer from agent1; restarts at its next step"),
				reply{}),
		},
		{
			name: "the grace lasts until the reply in flight is due (the agent's replies take 10s, this one started 4s ago)",
			before: with(two, func(s *state) {
				s.rules.grace = 0
				s.clock.start[bob] = at.Add(-4 * time.Second)
				s.clock.typical[bob] = 10 * time.Second
			}),
			msg: answerPosted{agent: alice, text: "hello", at: at},
			after: []func(*state){posted(alice, "hello"), func(s *state) {
				s.agents[alice].status, s.agents[alice].needsRun, s.agents[alice].deferred = StatusAnswered, true, true
			}, restartIsPending(bob, 1)},
			want: effs(
				restartPending{agent: bob, grace: 1, after: 6 * time.Second},
				ev(two, alice, EventAnswer, StatusAnswered, "hello"),
				ev(two, bob, EventRestart, StatusRestarting, "new answer from agent1; restarts at its next step"),
				reply{}),
		},
		{
			name:   "answers arriving meanwhile fold into the pending restart; the poster's own pending restart is dropped",
			before: with(three, posted(alice, "first"), restartIsPending(bob, 1), restartIsPending(carol, 1)),
			msg:    answerPosted{agent: carol, text: "second", at: at},
			after: []func(*state){posted(carol, "second"), func(s *state) {
				c := &s.agents[carol]
				c.status, c.needsRun, c.deferred, c.pending = StatusAnswered, true, true, false
			}, restartIsPending(alice, 1)},
			want: effs(
				disarmGrace{agent: carol},
				restartPending{agent: alice, grace: 1, after: testGraceFixed},
				ev(three, carol, EventAnswer, StatusAnswered, "second"),
				ev(three, alice, EventRestart, StatusRestarting, "new answer from agent3; restarts at its next step"),
				reply{}),
		},
		{
			name:   "a single agent's answer ends coordination",
			before: with(fresh(1), everyoneWorking),
			msg:    answerPosted{agent: alice, text: "only", at: at},
			after: []func(*state){posted(alice, "only"), func(s *state) {
				s.agents[alice].status = StatusAnswered
			}, finished("")},
			want: effs(ev(fresh(1), alice, EventAnswer, StatusAnswered, "only"), finish{}, reply{}),
		},
		{
			name:   "an execution sees every answer so far; one past max_new_answers_per_agent is told to vote",
			before: with(two, maxAnswers(1), posted(alice, "a1"), restartIsPending(alice, 1), posted(bob, "b1"), waitsForQuiet(bob, StatusAnswered)),
			msg:    executionEnded{agent: alice, kind: outRestart},
			after:  []func(*state){func(s *state) { s.agents[alice].pending = false }, working(alice, 2)},
			want: effs(disarmGrace{agent: alice},
				start(with(two, posted(alice, "a1")), alice, false, shown("agent1", "a1"), shown("agent2", "b1"))),
		},
	})
}

func TestPolicyRefusesAnswers(t *testing.T) {
	two := with(fresh(2), everyoneWorking, posted(bob, "  Hello there, the answer is 42  "), waitsForQuiet(bob, StatusAnswered))
	tests := []struct {
		name   string
		before state
		text   string
		want   error
	}{
		{name: "coordination is over", before: with(two, finished("")), text: "late", want: errFinished},
		{name: "empty", before: two, text: " \n ", want: invalidError("new_answer needs a non-empty content.")},
		{name: "too long", before: two, text: strings.Repeat("x", maxAnswerBytes+1),
			want: invalidError(fmt.Sprintf("the answer is %d bytes, more than the limit of %d; shorten it and put long content in files in your workspace.", maxAnswerBytes+1, maxAnswerBytes))},
		{name: "past max_new_answers_per_agent", before: with(two, maxAnswers(1), posted(alice, "mine")), text: "another",
			want: invalidError("you have already posted the maximum of 1 new answers; vote for the best existing answer instead.")},
		{name: "identical to an existing answer (spaces aside)", before: two, text: "Hello there, the answer is 42",
			want: invalidError("this answer is identical to agent2's existing answer; give a different, better answer or vote for agent2.")},
		{name: "strict novelty: more than half the words shared", before: with(two, novelty(vocab.Strict)), text: "hello there, the answer is 43",
			want: invalidError("your answer is too similar to existing answers (>50% overlap). Please use a fundamentally different approach, employ different tools/techniques, or vote for an existing answer.")},
		{name: "balanced novelty: more than 70% shared", before: with(two, novelty(vocab.Balanced)), text: "hello there, the answer is 42 indeed",
			want: invalidError("your answer is too similar to existing answers (>70% overlap). Please provide a meaningfully different solution with new insights, approaches, or tools, or vote for an existing answer.")},
	}
	var cases []policyCase
	for _, tt := range tests {
		cases = append(cases,
			policyCase{name: tt.name + "/check", before: tt.before, msg: answerCheck{agent: alice, text: tt.text}, want: effs(reply{err: tt.want})},
			policyCase{name: tt.name + "/post", before: tt.before, msg: answerPosted{agent: alice, text: tt.text}, want: effs(reply{err: tt.want})})
	}
	// What novelty lets through, and what a check accepts, changes nothing either.
	cases = append(cases,
		policyCase{name: "balanced novelty: 55% shared is new enough/check", before: with(two, novelty(vocab.Balanced)),
			msg: answerCheck{agent: alice, text: "hello there, the answer is 41 or so"}, want: effs(reply{})},
		policyCase{name: "lenient: no novelty check/check", before: two, msg: answerCheck{agent: alice, text: "hello there, the answer is 43"}, want: effs(reply{})})
	runPolicyCases(t, cases)
}

func TestPolicyVotes(t *testing.T) {
	// alice answered and waits for a quiet field; bob and carol work, having seen her answer.
	three := with(fresh(3), everyoneWorking, posted(alice, "alice's answer"), waitsForQuiet(alice, StatusAnswered), working(bob, 1), working(carol, 1))
	allButCarol := with(three, votedFor(alice, alice, "mine"), votedFor(bob, alice, "good"), idle(bob))
	runPolicyCases(t, []policyCase{
		{
			name:   "a vote made with every answer in view counts",
			before: three,
			msg:    votePosted{agent: bob, target: "agent1", reason: "good"},
			after:  []func(*state){votedFor(bob, alice, "good"), func(s *state) { s.agents[bob].executing = true }},
			want:   effs(voteEv(three, bob, alice, "good"), reply{}),
		},
		{
			name:   "the last vote ends coordination",
			before: allButCarol,
			msg:    votePosted{agent: carol, target: "agent1", reason: "best"},
			after:  []func(*state){votedFor(carol, alice, "best"), func(s *state) { s.agents[carol].executing = true }, finished("")},
			want:   effs(voteEv(three, carol, alice, "best"), finish{}, reply{}),
		},
		{
			name:   "the last vote with a stopped agent ends coordination, saying who stopped",
			before: with(allButCarol, stopped(bob, "agent timeout (5s) reached"), working(carol, 1)),
			msg:    votePosted{agent: carol, target: "agent1", reason: "best"},
			after: []func(*state){votedFor(carol, alice, "best"), func(s *state) { s.agents[carol].executing = true },
				finished("some agents were stopped: bob (agent timeout (5s) reached)")},
			want: effs(voteEv(three, carol, alice, "best"), finish{}, reply{}),
		},
		{
			name:   "a vote whose execution started before the latest answer is set aside: it votes again once the field is quiet",
			before: with(three, working(carol, 0)),
			msg:    votePosted{agent: carol, target: "agent1", reason: "stale"},
			after: []func(*state){func(s *state) {
				c := &s.agents[carol]
				c.status, c.needsRun, c.deferred = StatusWaiting, true, true
			}},
			want: effs(ev(three, carol, EventRestart, StatusWaiting, "its vote came after a new answer and is set aside; votes again once no agent is working"),
				reply{err: errVoteSetAside}),
		},
		{
			name:   "a vote for an agent without an answer is refused, naming the valid ids",
			before: three,
			msg:    votePosted{agent: bob, target: "agent3", reason: "x"},
			want:   effs(reply{err: invalidError(`"agent3" has no answer to vote for; valid ids: agent1`)}),
		},
		{
			name:   "a vote for no agent is refused",
			before: three,
			msg:    votePosted{agent: bob, target: "agent9", reason: "x"},
			want:   effs(reply{err: invalidError(`"agent9" has no answer to vote for; valid ids: agent1`)}),
		},
		{
			name:   "a vote after the end is refused",
			before: with(three, finished("the overall timeout (1s) was reached")),
			msg:    votePosted{agent: bob, target: "agent1", reason: "late"},
			want:   effs(reply{err: errFinished}),
		},
	})
}

func TestPolicyEndsExecutions(t *testing.T) {
	// alice and bob answered; alice waits for a quiet field, bob's execution (which answered)
	// is ending.
	two := with(fresh(2), everyoneWorking, posted(alice, "a"), waitsForQuiet(alice, StatusAnswered),
		posted(bob, "b"), func(s *state) {
			s.agents[bob].status, s.agents[bob].needsRun, s.agents[bob].deferred = StatusAnswered, true, true
		})
	both := []shownAnswer{shown("agent1", "a"), shown("agent2", "b")}
	// The same with carol still working.
	three := with(fresh(3), everyoneWorking, posted(alice, "a"), waitsForQuiet(alice, StatusAnswered),
		posted(bob, "b"), func(s *state) {
			s.agents[bob].status, s.agents[bob].needsRun, s.agents[bob].deferred = StatusAnswered, true, true
		})
	// alice answered, bob voted for her and its execution is ending when carol's answer came.
	revote := with(fresh(2), everyoneWorking, posted(alice, "a"), waitsForQuiet(alice, StatusAnswered),
		func(s *state) { s.agents[bob].seenSeq = 1 }, restartIsPending(bob, 1))
	runPolicyCases(t, []policyCase{
		{
			name:   "the last execution ends: the field is quiet, every waiting agent runs once, seeing every answer",
			before: two,
			msg:    executionEnded{agent: bob, kind: outDone},
			after:  []func(*state){working(alice, 2), working(bob, 2)},
			want:   effs(start(two, alice, true, both...), start(two, bob, true, both...)),
		},
		{
			name:   "while another agent works, the waiting ones wait",
			before: three,
			msg:    executionEnded{agent: bob, kind: outDone},
			after:  []func(*state){idle(bob)},
			want:   nil,
		},
		{
			name:   "a restarted agent runs again at once, seeing every answer; the others still wait",
			before: with(three, restartIsPending(carol, 2)),
			msg:    executionEnded{agent: carol, kind: outRestart},
			after:  []func(*state){func(s *state) { s.agents[carol].pending = false }, working(carol, 2)},
			want:   effs(disarmGrace{agent: carol}, start(three, carol, true, both...)),
		},
		{
			name:   "an answer that came after its vote: it votes again in the next quiet period",
			before: revote,
			msg:    executionEnded{agent: bob, kind: outDone},
			after:  []func(*state){func(s *state) { s.agents[bob].pending = false }, working(alice, 1), working(bob, 1)},
			want: effs(disarmGrace{agent: bob},
				ev(revote, bob, EventRestart, StatusWaiting, "a new answer came after its vote; votes again once no agent is working"),
				start(revote, alice, true, shown("agent1", "a")), start(revote, bob, true, shown("agent1", "a"))),
		},
		{
			name:   "an agent stops; with every other one voted, coordination ends",
			before: with(fresh(2), everyoneWorking, posted(alice, "a"), votedFor(alice, alice, "mine"), idle(alice), working(bob, 1)),
			msg:    executionEnded{agent: bob, kind: outStopped, reason: "backend error: x"},
			after: []func(*state){stopped(bob, "backend error: x"),
				finished("some agents were stopped: bob (backend error: x)")},
			want: effs(ev(fresh(2), bob, EventStopped, StatusStopped, "backend error: x"), finish{}),
		},
		{
			name:   "every agent stopped: coordination ends",
			before: with(fresh(2), everyoneWorking, stopped(alice, "backend error: y")),
			msg:    executionEnded{agent: bob, kind: outStopped, reason: "3 model calls without new_answer or vote"},
			after: []func(*state){stopped(bob, "3 model calls without new_answer or vote"),
				finished("every agent was stopped before coordination finished; presenting the best answer so far")},
			want: effs(ev(fresh(2), bob, EventStopped, StatusStopped, "3 model calls without new_answer or vote"), finish{}),
		},
		{
			name:   "the last one working stops: the field is quiet",
			before: with(three, idle(bob)),
			msg:    executionEnded{agent: carol, kind: outStopped, reason: "agent timeout (5s) reached"},
			after:  []func(*state){stopped(carol, "agent timeout (5s) reached"), working(alice, 2), working(bob, 2)},
			want: effs(ev(three, carol, EventStopped, StatusStopped, "agent timeout (5s) reached"),
				start(three, alice, true, both...), start(three, bob, true, both...)),
		},
		{
			name:   "after the end a stop is not recorded and nothing starts",
			before: with(three, finished("")),
			msg:    executionEnded{agent: carol, kind: outStopped, reason: "late"},
			after:  []func(*state){idle(carol)},
			want:   nil,
		},
		{
			name:   "after the end a restart starts nothing",
			before: with(three, restartIsPending(carol, 1), finished("")),
			msg:    executionEnded{agent: carol, kind: outRestart},
			after:  []func(*state){idle(carol), func(s *state) { s.agents[carol].pending, s.agents[carol].needsRun = false, true }},
			want:   effs(disarmGrace{agent: carol}),
		},
	})
}

func TestPolicyGraceClockAndStop(t *testing.T) {
	at := time.Unix(1000, 0)
	pending := with(fresh(2), everyoneWorking, posted(alice, "a"), waitsForQuiet(alice, StatusAnswered), restartIsPending(bob, 2))
	timed := with(fresh(2), everyoneWorking, func(s *state) {
		s.clock.start[bob] = at
		s.clock.typical[bob] = 8 * time.Second
		s.clock.all = 4 * time.Second
	})
	runPolicyCases(t, []policyCase{
		{name: "the grace of the pending restart runs out: the execution is cancelled", before: pending,
			msg: graceExpired{agent: bob, grace: 2}, want: effs(cancelExecution{agent: bob})},
		{name: "an earlier grace does nothing", before: pending, msg: graceExpired{agent: bob, grace: 1}},
		{name: "a grace whose restart is no longer pending does nothing", before: with(pending, func(s *state) { s.agents[bob].pending = false }),
			msg: graceExpired{agent: bob, grace: 2}},
		{name: "a grace after the execution ended does nothing", before: with(pending, idle(bob)), msg: graceExpired{agent: bob, grace: 2}},
		{name: "a reply starts", before: with(fresh(2), everyoneWorking), msg: replyStarted{agent: bob, at: at},
			after: []func(*state){func(s *state) { s.clock.start[bob] = at }}},
		{name: "a completed reply counts a quarter in the averages", before: timed, msg: replyEnded{agent: bob, at: at.Add(12 * time.Second), completed: true},
			after: []func(*state){func(s *state) {
				s.clock.start[bob], s.clock.typical[bob], s.clock.all = time.Time{}, 9*time.Second, 6*time.Second
			}}},
		{name: "an agent's first reply is its average", before: with(timed, func(s *state) { s.clock.typical[bob] = 0 }),
			msg: replyEnded{agent: bob, at: at.Add(12 * time.Second), completed: true},
			after: []func(*state){func(s *state) {
				s.clock.start[bob], s.clock.typical[bob], s.clock.all = time.Time{}, 12*time.Second, 6*time.Second
			}}},
		{name: "a failed reply does not count", before: timed, msg: replyEnded{agent: bob, at: at.Add(time.Minute)},
			after: []func(*state){func(s *state) { s.clock.start[bob] = time.Time{} }}},
		{name: "a stop (the overall timeout) ends coordination, saying why", before: pending,
			msg:   stopCoordination{reason: "the overall timeout (1s) was reached before every agent voted; presenting the best answer so far"},
			after: []func(*state){finished("the overall timeout (1s) was reached before every agent voted; presenting the best answer so far")},
			want:  effs(finish{})},
		{name: "a stop of a cancelled run ends coordination", before: pending, msg: stopCoordination{},
			after: []func(*state){finished("")}, want: effs(finish{})},
		{name: "a stop after the end changes nothing", before: with(pending, finished("some agents were stopped: x")),
			msg: stopCoordination{reason: "the overall timeout"}},
	})
}

// The leader (the winner however coordination ends): most votes; a tie goes to the answer
// posted first; no answer, no leader.
func TestLeader(t *testing.T) {
	tests := []struct {
		name string
		s    state
		want int
	}{
		{name: "no answer", s: fresh(3), want: -1},
		{name: "answers and no vote: the first posted", s: with(fresh(3), posted(carol, "c"), posted(alice, "a")), want: carol},
		{name: "most votes", s: with(fresh(3), posted(alice, "a"), posted(bob, "b"), votedFor(alice, bob, ""), votedFor(carol, bob, ""), votedFor(bob, alice, "")), want: bob},
		{name: "a tie: the first posted", s: with(fresh(4), posted(bob, "b"), posted(alice, "a"), votedFor(alice, alice, ""), votedFor(bob, bob, "")), want: bob},
		{name: "votes for an agent without an answer cannot lead", s: with(fresh(2), posted(alice, "a"), votedFor(bob, bob, ""), votedFor(alice, bob, "")), want: alice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.leader(); got != tt.want {
				t.Errorf("leader = %d, want %d", got, tt.want)
			}
		})
	}
}
