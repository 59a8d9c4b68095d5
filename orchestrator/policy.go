package orchestrator

import (
	"fmt"
	"slices"
	"time"

	"github.com/massgen-go/massgen/internal/vocab"
)

// The wake-up and restart policy. A run pays for answers, not for churn: with answers arriving
// close together its model requests grow linearly with the number of agents, where restarting
// and waking everybody on every answer made them grow with its square.
//
//   - A new answer clears every vote. An agent that is idle (it answered or voted) is not woken:
//     it runs again, seeing every answer, once the field is quiet, that is once no agent is
//     working or about to start; each waiting agent runs once per quiet period (release).
//   - A working agent is not cancelled at once: its restart is pending. It restarts at its next
//     step (after the model reply in flight and that reply's tool calls), or is cancelled when
//     that reply is overdue (grace), whichever comes first; answers arriving meanwhile fold into
//     that one restart.
//   - The reply in flight counts if it is an answer. A vote counts only when no answer came after
//     its execution's prompt was built (seenSeq): every counted vote chose among exactly the
//     answers that existed when its request was sent. A vote that came too late is set aside and
//     the agent votes again in the next quiet period.
//   - A restart saves the partial workspace as the agent's snapshot and clears the workspace; the
//     next execution's temp workspace holds every agent's latest snapshot, its own included.
//   - Coordination ends when every agent's latest action is a counted vote (or it was stopped),
//     or when it is told to stop (stopCoordination: the overall timeout); the leader then is the
//     answer with most votes, ties going to the answer posted first (see leader).
//
// The policy is one pure function, next(state, message) → (state, effects): no clock, no
// goroutine, no I/O. The owner (owner.go) is the one goroutine that holds the state, feeds it
// the agents' messages one at a time and carries out the effects.

// state is one coordination's state. It is a value: next returns a new one and never changes
// the one it was given (answers and votes are immutable once made).
type state struct {
	agents    []agentState // config order; messages name an agent by its index here
	answerSeq int          // answers posted so far (the latest answer's seq)
	finished  bool
	ended     string // why coordination ended early ("" when every agent voted)
	stoppedBy string // who ended it early: StoppedByUser, StoppedByBudget, StoppedByTimeout ("" otherwise)
	rules     rules
	clock     replyClock
}

// rules are the configured limits the policy applies.
type rules struct {
	maxAnswers int              // max_new_answers_per_agent (0: no limit)
	novelty    vocab.Strictness // answer_novelty_requirement
	// grace, when set (tests, benchmarks), is a fixed restart grace instead of the estimate
	// from the reply clock.
	grace time.Duration
}

// agentState is one agent's part of the state.
type agentState struct {
	id, anon   string
	status     Status
	needsRun   bool // another execution is due
	deferred   bool // ... and it waits for a quiet field (no agent working)
	executing  bool
	pending    bool // a new answer arrived during the execution: restart at its next step
	seenSeq    int  // answerSeq when the execution's prompt was built
	graces     int  // restart graces armed so far: graceExpired names the one it is for
	answers    int  // new answers posted
	stopReason string
	answer     *answer // its latest answer (nil: none)
	vote       *vote   // its counted vote (nil: none)
}

type answer struct {
	text string
	seq  int // order posted (ties go to the lowest)
}

type vote struct {
	target int // the index of the agent voted for
	reason string
}

func (s state) clone() state {
	s.agents = slices.Clone(s.agents)
	s.clock = s.clock.clone()
	return s
}

// Messages: what the agents (and the owner's timers and context) tell the owner.
type message interface{ isMessage() }

// begin opens coordination: every agent due starts.
type begin struct{}

// answerCheck asks, before an answer's snapshot is taken, whether the answer would be
// accepted now; replied to with nil, errFinished or an invalidError.
type answerCheck struct {
	agent int
	text  string
}

// answerPosted commits a new answer; replied to with nil, errFinished or an invalidError.
type answerPosted struct {
	agent int
	text  string
	at    time.Time
}

// votePosted commits a vote for the agent whose anonymous id is target; replied to with nil,
// errFinished, errVoteSetAside or an invalidError.
type votePosted struct {
	agent  int
	target string // anonymous id
	reason string
}

// replyStarted and replyEnded bracket a model call (the reply clock).
type replyStarted struct {
	agent int
	at    time.Time
}

type replyEnded struct {
	agent     int
	at        time.Time
	completed bool
}

// executionEnded says how an agent's execution ended: outDone (answered or voted), outRestart
// (its pending restart; the workspace is already saved and cleared), outStopped (reason says
// why) or outCancelled (coordination is over for it).
type executionEnded struct {
	agent  int
	kind   outcomeKind
	reason string
	budget bool // outStopped: its budget was spent
}

// graceExpired is the restart grace of agent's pending restart running out.
type graceExpired struct {
	agent int
	grace int // agentState.graces when it was armed
}

// stopCoordination ends coordination now; the leader is presented as after the overall
// timeout. reason, when not "", is why coordination ended early (Result.EndedEarly); "" for a
// cancelled run. by is who stopped it (Result.StoppedBy). The overall timeout sends it, and so
// does a spent budget.
type stopCoordination struct {
	reason string
	by     string
}

// answerNow is the user's "answer now": coordination stops as with stopCoordination, but only
// when some agent has answered; replied to with the leader (reply.leader), or errFinished or
// errNoAnswerYet (nothing changes then).
type answerNow struct {
	reason string
}

func (begin) isMessage()            {}
func (answerCheck) isMessage()      {}
func (answerPosted) isMessage()     {}
func (votePosted) isMessage()       {}
func (replyStarted) isMessage()     {}
func (replyEnded) isMessage()       {}
func (executionEnded) isMessage()   {}
func (graceExpired) isMessage()     {}
func (stopCoordination) isMessage() {}
func (answerNow) isMessage()        {}

// Effects: what the owner does after a message, in order.
type effect interface{ isEffect() }

// emitEvent publishes an event (the owner stamps its time).
type emitEvent struct{ ev Event }

// startExecution starts an execution of agent, which sees view.
type startExecution struct {
	agent int
	view  turnView
}

// turnView is what an execution is shown: the answers when its prompt was built.
type turnView struct {
	answers     []shownAnswer // config order
	answersLeft bool          // it may still post a new answer (max_new_answers_per_agent)
	ownAnswers  int           // the answers it has posted so far
}

type shownAnswer struct {
	anon, text string
}

// restartPending tells agent's execution that a restart is pending (it restarts at its next
// step) and arms the grace: after that long, graceExpired{agent, grace} is due.
type restartPending struct {
	agent int
	grace int
	after time.Duration
}

// disarmGrace stops agent's restart grace: the restart is no longer pending.
type disarmGrace struct{ agent int }

// cancelExecution cancels agent's current execution.
type cancelExecution struct{ agent int }

// finish ends coordination: every execution is cancelled, no other starts.
type finish struct{}

// reply answers the message's sender (answerCheck, answerPosted, votePosted, answerNow);
// leader is the index of answerNow's leader.
type reply struct {
	err    error
	leader int
}

func (emitEvent) isEffect()       {}
func (startExecution) isEffect()  {}
func (restartPending) isEffect()  {}
func (disarmGrace) isEffect()     {}
func (cancelExecution) isEffect() {}
func (finish) isEffect()          {}
func (reply) isEffect()           {}

// newState is the state of a coordination about to begin: every agent waiting to start, the
// reply clock carried over from what the run measured so far.
func newState(ids, anons []string, r rules, clock replyClock) state {
	s := state{agents: make([]agentState, len(ids)), rules: r, clock: clock.clone()}
	for i := range ids {
		s.agents[i] = agentState{id: ids[i], anon: anons[i], status: StatusWaiting, needsRun: true}
	}
	s.clock.grow(len(ids))
	return s
}

// next is the policy: the state after m, and what the owner is to do about it.
func next(s state, m message) (state, []effect) {
	s = s.clone()
	var fx effects
	switch m := m.(type) {
	case begin:
	case answerCheck:
		fx.reply(s.checkAnswer(m.agent, m.text))
	case answerPosted:
		s.postAnswer(m, &fx)
	case votePosted:
		s.postVote(m, &fx)
	case replyStarted:
		s.clock.replyStarted(m.agent, m.at)
	case replyEnded:
		s.clock.replyEnded(m.agent, m.at, m.completed)
	case executionEnded:
		s.endExecution(m, &fx)
	case graceExpired:
		if a := s.agents[m.agent]; a.graces == m.grace && a.executing && a.pending {
			fx = append(fx, cancelExecution{agent: m.agent})
		}
	case stopCoordination:
		if !s.finished {
			if m.reason != "" {
				s.ended, s.stoppedBy = m.reason, m.by
			}
			s.finish(&fx)
		}
	case answerNow:
		switch w := s.leader(); {
		case s.finished:
			fx.reply(errFinished)
		case w < 0:
			fx.reply(errNoAnswerYet)
		default:
			s.ended, s.stoppedBy = m.reason, StoppedByUser
			s.finish(&fx)
			fx = append(fx, reply{leader: w})
		}
	default:
		panic(fmt.Sprintf("orchestrator: unknown coordination message %T", m))
	}
	s.dispatch(&fx)
	return s, fx
}

type effects []effect

func (fx *effects) emit(ev Event)   { *fx = append(*fx, emitEvent{ev: ev}) }
func (fx *effects) reply(err error) { *fx = append(*fx, reply{err: err}) }
func (fx *effects) add(e ...effect) { *fx = append(*fx, e...) }

// checkAnswer is answerCheck's reply: whether an answer from agent i would be accepted now.
func (s *state) checkAnswer(i int, text string) error {
	if s.finished {
		return errFinished
	}
	if p := s.answerProblem(i, text); p != "" {
		return invalidError(p)
	}
	return nil
}

// postAnswer records a new answer: every vote is cleared, agents still working get a pending
// restart, idle ones wait for the next quiet period to vote again. With a single agent the
// answer ends coordination.
func (s *state) postAnswer(m answerPosted, fx *effects) {
	if err := s.checkAnswer(m.agent, m.text); err != nil {
		fx.reply(err)
		return
	}
	a := &s.agents[m.agent]
	s.answerSeq++
	a.answer = &answer{text: m.text, seq: s.answerSeq}
	a.answers++
	for i := range s.agents { // a vote counts only with every answer in view
		s.agents[i].vote = nil
	}
	a.status = StatusAnswered
	s.clearPending(m.agent, fx) // its reply counted: nothing to restart
	single := len(s.agents) == 1
	var restarting, waiting []int
	if !single {
		a.needsRun, a.deferred = true, true // it votes (or improves) in the next quiet period
		for i := range s.agents {
			b := &s.agents[i]
			switch {
			case i == m.agent || b.status == StatusStopped:
			case b.executing:
				if !b.pending { // later answers fold into the pending restart
					b.pending = true
					b.status = StatusRestarting
					b.graces++
					fx.add(restartPending{agent: i, grace: b.graces, after: s.grace(i, m.at)})
					restarting = append(restarting, i)
				}
			case b.needsRun:
				// About to start, or already waiting for a quiet period: it will see this answer.
			default: // idle after its vote
				b.needsRun, b.deferred = true, true
				b.status = StatusWaiting
				waiting = append(waiting, i)
			}
		}
	}
	// The answer's event comes before any vote for it: events keep the order of the commits.
	ev := s.event(m.agent, EventAnswer, StatusAnswered)
	ev.Text = m.text
	fx.emit(ev)
	for _, i := range restarting {
		ev := s.event(i, EventRestart, StatusRestarting)
		ev.Text = "new answer from " + a.anon + "; restarts at its next step"
		fx.emit(ev)
	}
	for _, i := range waiting {
		ev := s.event(i, EventRestart, StatusWaiting)
		ev.Text = "new answer from " + a.anon + "; votes again once no agent is working"
		fx.emit(ev)
	}
	if single {
		s.finish(fx)
	}
	fx.reply(nil)
}

// postVote records a vote and checks whether coordination is over. A vote whose execution
// started before the latest answer is set aside (errVoteSetAside): the agent votes again in the
// next quiet period.
func (s *state) postVote(m votePosted, fx *effects) {
	if s.finished {
		fx.reply(errFinished)
		return
	}
	a := &s.agents[m.agent]
	if a.seenSeq != s.answerSeq {
		a.needsRun, a.deferred = true, true
		a.status = StatusWaiting
		ev := s.event(m.agent, EventRestart, StatusWaiting)
		ev.Text = "its vote came after a new answer and is set aside; votes again once no agent is working"
		fx.emit(ev)
		fx.reply(errVoteSetAside)
		return
	}
	t := s.byAnon(m.target)
	if t < 0 || s.agents[t].answer == nil {
		fx.reply(invalidError(fmt.Sprintf("%q has no answer to vote for; valid ids: %s", m.target, s.answerIDs())))
		return
	}
	a.vote = &vote{target: t, reason: m.reason}
	a.status = StatusVoted
	ev := s.event(m.agent, EventVote, StatusVoted)
	ev.Target, ev.Text = s.agents[t].id, m.reason
	fx.emit(ev)
	s.checkDone(fx)
	fx.reply(nil)
}

// endExecution records how an execution ended: a stopped agent is marked so (it keeps its
// last vote, if any) and coordination may be over; a restarted one is due again at once. An
// answer that came after the execution had already voted cleared that vote: the agent votes
// again in the next quiet period. The field may then be quiet.
func (s *state) endExecution(m executionEnded, fx *effects) {
	a := &s.agents[m.agent]
	if m.kind == outStopped && a.status != StatusStopped && !s.finished {
		a.status, a.stopReason = StatusStopped, m.reason
		ev := s.event(m.agent, EventStopped, StatusStopped)
		ev.Text, ev.Budget = m.reason, m.budget
		fx.emit(ev)
		s.checkDone(fx)
	}
	a.executing = false
	pending := a.pending
	s.clearPending(m.agent, fx)
	revote := false
	switch {
	case a.status == StatusStopped:
	case m.kind == outRestart:
		a.needsRun, a.deferred = true, false
	case pending && !a.needsRun: // it had voted
		a.needsRun, a.deferred = true, true
		a.status = StatusWaiting
		revote = true
	}
	s.release()
	if revote {
		ev := s.event(m.agent, EventRestart, StatusWaiting)
		ev.Text = "a new answer came after its vote; votes again once no agent is working"
		fx.emit(ev)
	}
}

// clearPending drops agent i's pending restart, if any, and its grace.
func (s *state) clearPending(i int, fx *effects) {
	if a := &s.agents[i]; a.pending {
		a.pending = false
		fx.add(disarmGrace{agent: i})
	}
}

// release starts a quiet period: when no agent is working or about to start, every agent
// waiting for one may run once more (dispatch starts it), seeing every answer.
func (s *state) release() {
	if s.finished {
		return
	}
	var waiting []int
	for i, a := range s.agents {
		switch {
		case a.status == StatusStopped:
		case a.executing || (a.needsRun && !a.deferred):
			return // not quiet
		case a.needsRun:
			waiting = append(waiting, i)
		}
	}
	for _, i := range waiting {
		s.agents[i].deferred = false
	}
}

// dispatch starts every agent that is due: another execution is due and not deferred, and it
// is neither working nor stopped. Its execution sees every answer so far (seenSeq).
func (s *state) dispatch(fx *effects) {
	if s.finished {
		return
	}
	for i := range s.agents {
		a := &s.agents[i]
		if a.status == StatusStopped || a.executing || !a.needsRun || a.deferred {
			continue
		}
		a.needsRun, a.executing = false, true
		a.status = StatusWorking
		a.seenSeq = s.answerSeq
		fx.emit(s.event(i, EventStart, StatusWorking))
		fx.add(startExecution{agent: i, view: turnView{
			answers:     s.shownAnswers(),
			answersLeft: s.rules.maxAnswers <= 0 || a.answers < s.rules.maxAnswers,
			ownAnswers:  a.answers,
		}})
	}
}

// checkDone ends coordination when every agent's latest action is a vote (or it stopped).
func (s *state) checkDone(fx *effects) {
	if s.finished {
		return
	}
	allStopped := true
	for _, a := range s.agents {
		switch {
		case a.status == StatusStopped:
		case a.status == StatusVoted && !a.needsRun:
			allStopped = false
		default:
			return
		}
	}
	if allStopped {
		s.ended = "every agent was stopped before coordination finished; presenting the best answer so far"
	} else if reasons := s.stopReasons(); reasons != "" {
		s.ended = "some agents were stopped: " + reasons
	}
	s.finish(fx)
}

func (s *state) finish(fx *effects) {
	s.finished = true
	fx.add(finish{})
}

// grace is how long agent i's pending restart waits for the reply in flight: until that reply
// is due to end (its start plus how long the agent's replies take, or every agent's while it
// has none), at least minRestartGrace and at most maxRestartGrace. An agent with no reply in
// flight (running tools) gets minRestartGrace.
func (s *state) grace(i int, now time.Time) time.Duration {
	if s.rules.grace > 0 {
		return s.rules.grace
	}
	start := s.clock.start[i]
	if start.IsZero() {
		return minRestartGrace
	}
	typical := s.clock.typical[i]
	if typical == 0 {
		typical = s.clock.all
	}
	return min(max(typical-now.Sub(start), minRestartGrace), maxRestartGrace)
}

func (s *state) event(i int, kind EventKind, status Status) Event {
	a := s.agents[i]
	return Event{Kind: kind, Agent: a.id, Anon: a.anon, Status: status, Phase: PhaseCoordination}
}

// replyClock keeps how long the agents' model replies take, for the restart grace. It is
// carried from one coordination to the next (and through the presentations between them).
type replyClock struct {
	start   []time.Time     // per agent: when the reply in flight started (zero: none)
	typical []time.Duration // per agent: moving average of its completed replies (0: none yet)
	all     time.Duration   // the same over every agent's replies
}

func (c replyClock) clone() replyClock {
	c.start, c.typical = slices.Clone(c.start), slices.Clone(c.typical)
	return c
}

// grow makes room for n agents.
func (c *replyClock) grow(n int) {
	for len(c.start) < n {
		c.start = append(c.start, time.Time{})
	}
	for len(c.typical) < n {
		c.typical = append(c.typical, 0)
	}
}

// replyStarted and replyEnded bracket a model call of agent i; only completed replies count.
// Outside coordination the run's goroutine calls them on the run's clock.
func (c *replyClock) replyStarted(i int, at time.Time) { c.start[i] = at }

func (c *replyClock) replyEnded(i int, at time.Time, completed bool) {
	start := c.start[i]
	c.start[i] = time.Time{}
	if !completed || start.IsZero() {
		return
	}
	d := at.Sub(start)
	c.typical[i] = movingAverage(c.typical[i], d)
	c.all = movingAverage(c.all, d)
}

// movingAverage weighs the latest sample a quarter (the first one is taken as is).
func movingAverage(avg, sample time.Duration) time.Duration {
	if avg == 0 {
		return sample
	}
	return (3*avg + sample) / 4
}
