package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/configs"
)

// run does coordination, picks the winner and has it present; with
// coordination.max_orchestration_restarts the winner then evaluates the final answer and may
// have the whole coordination run again (MassGen's orchestration restart, see evaluate.go).
func (r *run) run(ctx context.Context) (*Result, error) {
	names := make([]string, len(r.agents))
	for i, a := range r.agents {
		names[i] = a.id + "=" + a.anon
	}
	r.emit(Event{Kind: EventRunStart, Phase: PhaseCoordination, Text: strings.Join(names, ", ")})
	defer r.emit(Event{Kind: EventDone})

	attempts := 1 + r.cfg.Orchestrator.Coordination.MaxOrchestrationRestarts
	delivered := map[string]bool{}
	for attempt := 1; ; attempt++ {
		res, winner, err := r.coordinate(ctx)
		if err != nil || winner == nil {
			return res, err
		}
		final, files, err := r.present(ctx, winner)
		presented := err == nil
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("run cancelled: %w", ctx.Err())
			}
			// The presentation failed: the winning answer still stands.
			r.emit(Event{Kind: EventError, Agent: winner.id, Anon: winner.anon, Phase: PhaseFinal, Text: "final presentation failed: " + err.Error()})
			if res.EndedEarly == "" {
				res.EndedEarly = "the final presentation failed (" + err.Error() + "); showing the winning answer"
			}
			final = res.Answers[winner.id]
		}
		for _, f := range files { // files delivered by a rejected attempt stay delivered
			delivered[f] = true
		}
		if presented && attempt < attempts {
			fb, err := r.evaluate(ctx, winner, final, attempt, attempts)
			if err != nil {
				return nil, fmt.Errorf("run cancelled: %w", err)
			}
			if fb != nil {
				r.restartOrchestration(fb, attempt+1, attempts)
				continue
			}
		}
		res.FinalAnswer = final
		res.Delivered = slices.Sorted(maps.Keys(delivered))
		res.FinalWorkspace = winner.workspace
		res.Attempts = attempt
		r.mu.Lock()
		for _, a := range r.agents {
			res.Usage[a.id] = a.usage
		}
		r.mu.Unlock()
		r.emit(Event{Kind: EventFinal, Agent: winner.id, Anon: winner.anon, Status: StatusDone, Phase: PhaseFinal, Text: final})
		return res, nil
	}
}

// coordinate runs one coordination (or skips it: skip_coordination_rounds makes the first agent
// the winner at once, as MassGen does) and returns its outcome and winner. The winner is nil,
// with ErrNoAnswer, when no agent answered.
func (r *run) coordinate(ctx context.Context) (*Result, *agent, error) {
	if r.cfg.Orchestrator.SkipCoordinationRounds {
		w := r.agents[0]
		r.mu.Lock()
		r.skipped = true
		r.mu.Unlock()
		res := r.result()
		res.Winner, res.WinnerAnon = w.id, w.anon
		r.emit(Event{Kind: EventDecision, Agent: w.id, Anon: w.anon, Target: w.id,
			Text: fmt.Sprintf("coordination skipped (skip_coordination_rounds): %s (%s) presents the final answer", w.id, w.anon)})
		return res, w, nil
	}
	overall := r.cfg.OverallTimeout()
	coordCtx, cancelCoord := context.WithTimeout(ctx, overall)
	defer cancelCoord()

	var wg sync.WaitGroup
	for _, a := range r.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.agentLoop(coordCtx, a)
		}()
	}
	select {
	case <-r.doneCh:
	case <-coordCtx.Done():
	}
	r.mu.Lock()
	if !r.finished && ctx.Err() == nil {
		r.ended = fmt.Sprintf("the overall timeout (%s) was reached before every agent voted; presenting the best answer so far", overall)
	}
	r.finishLocked()
	r.mu.Unlock()
	cancelCoord()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("run cancelled: %w", err)
	}

	res := r.result()
	winner := r.winner()
	if winner == nil {
		r.emit(Event{Kind: EventError, Text: "no agent produced an answer"})
		return res, nil, ErrNoAnswer
	}
	res.Winner, res.WinnerAnon = winner.id, winner.anon
	r.emit(Event{Kind: EventDecision, Agent: winner.id, Anon: winner.anon, Target: winner.id, Text: r.decisionText(winner)})
	return res, winner, nil
}

// The wake-up and restart policy. A run pays for answers, not for churn: with answers arriving
// close together its model requests grow linearly with the number of agents, where restarting
// and waking everybody on every answer made them grow with its square.
//
//   - A new answer clears every vote. An agent that is idle (it answered or voted) is not woken:
//     it runs again, seeing every answer, once the field is quiet, that is once no agent is
//     working or about to start; each waiting agent runs once per quiet period (releaseLocked).
//   - A working agent is not cancelled at once: its restart is pending. It restarts at its next
//     step (after the model reply in flight and that reply's tool calls), or is cancelled when
//     that reply is overdue (graceLocked), whichever comes first; answers arriving meanwhile
//     fold into that one restart.
//   - The reply in flight counts if it is an answer. A vote counts only when no answer came after
//     its execution's prompt was built (seenSeq): every counted vote chose among exactly the
//     answers that existed when its request was sent. A vote that came too late is set aside and
//     the agent votes again in the next quiet period.
//   - A restart saves the partial workspace as the agent's snapshot and clears the workspace; the
//     next execution's temp workspace holds every agent's latest snapshot, its own included.

// agentLoop runs an agent's executions until coordination is over. Its agent timeout bounds the
// time it spends working; time spent waiting for the others does not count.
func (r *run) agentLoop(coordCtx context.Context, a *agent) {
	limit, used := agentTimeout(r.cfg), time.Duration(0)
	for round := 0; ; round++ {
		timeout, byRound := executionLimit(r.cfg, limit, used, round) // 0: none
		execCtx, cancel, ok := r.awaitTurn(coordCtx, a, timeout)
		if !ok {
			return
		}
		start := time.Now()
		r.emit(r.agentEvent(a, EventStart, StatusWorking, PhaseCoordination))
		out := r.execute(execCtx, a)
		if out.kind == outCancelled {
			out = r.whyCancelled(coordCtx, execCtx)
			if out.kind == outStopped && byRound != "" {
				out.reason = byRound + " reached"
			}
		}
		cancel()
		used += time.Since(start)
		switch out.kind {
		case outRestart:
			r.saveAndClear(coordCtx, a)
		case outStopped:
			r.stop(a, out.reason)
		}
		r.endExecution(a, out.kind == outRestart)
		if out.kind == outStopped || out.kind == outCancelled {
			return
		}
	}
}

// awaitTurn waits until the agent's next execution is due and not deferred, and marks it
// started with its context (bounded by timeout unless 0). It returns false when coordination
// is over for the agent.
func (r *run) awaitTurn(coordCtx context.Context, a *agent, timeout time.Duration) (context.Context, context.CancelFunc, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for (!a.needsRun || a.deferred) && !r.finished && a.status != StatusStopped {
		r.mu.Unlock()
		select {
		case <-a.wake:
		case <-r.doneCh:
		case <-coordCtx.Done():
		}
		r.mu.Lock()
		if coordCtx.Err() != nil {
			return nil, nil, false
		}
	}
	if r.finished || a.status == StatusStopped {
		return nil, nil, false
	}
	a.needsRun = false
	a.executing = true
	a.status = StatusWorking
	// Created under the lock: a restart grace running out from now on cancels this execution.
	var execCtx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		execCtx, cancel = context.WithTimeout(coordCtx, timeout)
	} else {
		execCtx, cancel = context.WithCancel(coordCtx)
	}
	a.cancel = cancel
	return execCtx, cancel, true
}

// whyCancelled tells what ended a cancelled execution: the end of coordination (outCancelled),
// the agent's timeout (outStopped), or else a pending restart whose grace ran out (outRestart).
// Only the grace timer cancels an execution otherwise; it may have fired just before the
// execution started and took its pending restart over, so a.pending is not asked.
func (r *run) whyCancelled(coordCtx, execCtx context.Context) outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.finished || coordCtx.Err() != nil:
		return outcome{kind: outCancelled}
	case errors.Is(execCtx.Err(), context.DeadlineExceeded):
		return outcome{kind: outStopped, reason: r.timeoutReason()}
	}
	return outcome{kind: outRestart}
}

// endExecution marks the agent idle (due again at once after a restart) and starts a quiet
// period if it was the last one working. An answer that came after the execution had already
// voted cleared that vote: the agent votes again in the next quiet period.
func (r *run) endExecution(a *agent, restart bool) {
	r.mu.Lock()
	a.executing = false
	stopGrace(a)
	revote := false
	switch {
	case a.status == StatusStopped:
	case restart:
		a.needsRun, a.deferred = true, false
	case a.pending && !a.needsRun: // it had voted
		a.needsRun, a.deferred = true, true
		a.status = StatusWaiting
		revote = true
	}
	a.pending = false
	r.releaseLocked()
	r.mu.Unlock()
	if revote {
		ev := r.agentEvent(a, EventRestart, StatusWaiting, PhaseCoordination)
		ev.Text = "a new answer came after its vote; votes again once no agent is working"
		r.emit(ev)
	}
}

// releaseLocked starts a quiet period: when no agent is working or about to start, every agent
// waiting for one is woken to run once more, seeing every answer.
func (r *run) releaseLocked() {
	if r.finished {
		return
	}
	var waiting []*agent
	for _, a := range r.agents {
		switch {
		case a.status == StatusStopped:
		case a.executing || (a.needsRun && !a.deferred):
			return // not quiet
		case a.needsRun:
			waiting = append(waiting, a)
		}
	}
	for _, a := range waiting {
		a.deferred = false
		wake(a)
	}
}

func wake(a *agent) {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// startGraceLocked arms the cancellation of a's execution, for a restart that is still pending
// when the grace runs out.
func (r *run) startGraceLocked(a *agent) {
	var t *time.Timer
	t = time.AfterFunc(r.graceLocked(a, time.Now()), func() {
		r.mu.Lock() // held by the caller until t is stored
		defer r.mu.Unlock()
		if a.grace == t && a.executing && a.pending && a.cancel != nil {
			a.cancel()
		}
	})
	a.grace = t
}

// graceLocked is how long a's pending restart waits for the reply in flight: until that reply
// is due to end (its start plus how long the agent's replies take, or every agent's while it
// has none), at least minRestartGrace and at most maxRestartGrace. An agent with no reply in
// flight (running tools) gets minRestartGrace.
func (r *run) graceLocked(a *agent, now time.Time) time.Duration {
	if r.restartGrace > 0 {
		return r.restartGrace
	}
	start, inFlight := r.clock.started[a]
	if !inFlight {
		return minRestartGrace
	}
	typical, ok := r.clock.typical[a]
	if !ok {
		typical = r.clock.all
	}
	return min(max(typical-now.Sub(start), minRestartGrace), maxRestartGrace)
}

// replyClock keeps how long the agents' model replies take. Guarded by run.mu.
type replyClock struct {
	started map[*agent]time.Time     // the reply in flight
	typical map[*agent]time.Duration // moving average of the agent's replies
	all     time.Duration            // the same over every agent's replies
}

// replyStarted and replyEnded bracket a model call; only completed replies count.
func (r *run) replyStarted(a *agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clock.started == nil {
		r.clock.started, r.clock.typical = map[*agent]time.Time{}, map[*agent]time.Duration{}
	}
	r.clock.started[a] = time.Now()
}

func (r *run) replyEnded(a *agent, completed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.clock.started[a]
	delete(r.clock.started, a)
	if !completed {
		return
	}
	d := time.Since(start)
	r.clock.typical[a] = movingAverage(r.clock.typical[a], d)
	r.clock.all = movingAverage(r.clock.all, d)
}

// movingAverage weighs the latest sample a quarter (the first one is taken as is).
func movingAverage(avg, sample time.Duration) time.Duration {
	if avg == 0 {
		return sample
	}
	return (3*avg + sample) / 4
}

func stopGrace(a *agent) {
	if a.grace != nil {
		a.grace.Stop()
		a.grace = nil
	}
}

func (r *run) timeoutReason() string {
	return fmt.Sprintf("agent timeout (%ds) reached", r.cfg.Orchestrator.AgentTimeoutSeconds)
}

// saveAndClear is the restart sequence: the partial workspace becomes the agent's snapshot (the
// others, and the agent itself after the restart, see it in their temp workspaces), then the
// workspace is emptied for a fresh start.
func (r *run) saveAndClear(ctx context.Context, a *agent) {
	if a.workspace == "" {
		return
	}
	if _, err := r.store.Save(context.WithoutCancel(ctx), a.id, a.workspace, "restart"); err != nil {
		r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Text: "saving partial work: " + err.Error()})
		return // keep the workspace rather than lose work
	}
	if err := a.env.ClearWorkspace(); err != nil {
		r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Text: "clearing the workspace: " + err.Error()})
	}
}

// stop marks an agent stopped (it keeps its last vote, if any) and checks for the end.
func (r *run) stop(a *agent, reason string) {
	r.mu.Lock()
	if a.status == StatusStopped || r.finished {
		r.mu.Unlock()
		return
	}
	a.status = StatusStopped
	a.stopReason = reason
	r.mu.Unlock()
	ev := r.agentEvent(a, EventStopped, StatusStopped, PhaseCoordination)
	ev.Text = reason
	r.emit(ev)
	r.mu.Lock()
	r.checkDoneLocked()
	r.releaseLocked()
	r.mu.Unlock()
}

// commitAnswer records a new answer: every vote is cleared, agents still working get a pending
// restart, idle ones wait for the next quiet period to vote again. It fails when coordination is
// over (errFinished) or the answer became invalid meanwhile.
func (r *run) commitAnswer(a *agent, text string) error {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return errFinished
	}
	if msg := r.answerProblemLocked(a, text); msg != "" {
		r.mu.Unlock()
		return invalidError(msg)
	}
	r.answerSeq++
	r.answers[a.id] = &answer{agent: a.id, text: text, seq: r.answerSeq}
	a.answers++
	clear(r.votes) // a vote counts only with every answer in view
	a.status = StatusAnswered
	a.pending = false // its reply counted: nothing to restart
	stopGrace(a)
	single := len(r.agents) == 1
	var restarting, waiting []*agent
	if !single {
		a.needsRun, a.deferred = true, true // it votes (or improves) in the next quiet period
		for _, b := range r.agents {
			switch {
			case b == a || b.status == StatusStopped:
			case b.executing:
				if !b.pending { // later answers fold into the pending restart
					b.pending = true
					b.status = StatusRestarting
					r.startGraceLocked(b)
					restarting = append(restarting, b)
				}
			case b.needsRun:
				// About to start, or already waiting for a quiet period: it will see this answer.
			default: // idle after its vote
				b.needsRun, b.deferred = true, true
				b.status = StatusWaiting
				waiting = append(waiting, b)
			}
		}
	}
	// Emitted before the lock is released, so no vote for this answer can reach the event
	// stream (displays, timeline, --output json) ahead of the answer itself.
	ev := r.agentEvent(a, EventAnswer, StatusAnswered, PhaseCoordination)
	ev.Text = text
	r.emit(ev)
	for _, b := range restarting {
		ev := r.agentEvent(b, EventRestart, StatusRestarting, PhaseCoordination)
		ev.Text = "new answer from " + a.anon + "; restarts at its next step"
		r.emit(ev)
	}
	for _, b := range waiting {
		ev := r.agentEvent(b, EventRestart, StatusWaiting, PhaseCoordination)
		ev.Text = "new answer from " + a.anon + "; votes again once no agent is working"
		r.emit(ev)
	}
	r.mu.Unlock()
	if single {
		r.mu.Lock()
		r.finishLocked()
		r.mu.Unlock()
	}
	return nil
}

// commitVote records a vote and checks whether coordination is over. A vote whose execution
// started before the latest answer is set aside (errVoteSetAside): the agent votes again in the
// next quiet period.
func (r *run) commitVote(a *agent, targetAnon, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return errFinished
	}
	if a.seenSeq != r.answerSeq {
		a.needsRun, a.deferred = true, true
		a.status = StatusWaiting
		ev := r.agentEvent(a, EventRestart, StatusWaiting, PhaseCoordination)
		ev.Text = "its vote came after a new answer and is set aside; votes again once no agent is working"
		r.mu.Unlock()
		r.emit(ev)
		r.mu.Lock()
		return errVoteSetAside
	}
	t := r.byAnon[targetAnon]
	if t == nil || r.answers[t.id] == nil {
		return invalidError(fmt.Sprintf("%q has no answer to vote for; valid ids: %s", targetAnon, r.answerIDsLocked()))
	}
	r.votes[a.id] = vote{target: t.id, reason: reason}
	a.status = StatusVoted
	ev := r.agentEvent(a, EventVote, StatusVoted, PhaseCoordination)
	ev.Target, ev.Text = t.id, reason
	r.emit(ev) // under the lock: events keep the order of the commits (see commitAnswer)
	r.checkDoneLocked()
	return nil
}

// checkDoneLocked ends coordination when every agent's latest action is a vote (or it stopped).
func (r *run) checkDoneLocked() {
	if r.finished {
		return
	}
	allStopped := true
	for _, a := range r.agents {
		switch {
		case a.status == StatusStopped:
		case a.status == StatusVoted && !a.needsRun:
			allStopped = false
		default:
			return
		}
	}
	if allStopped {
		r.ended = "every agent was stopped before coordination finished; presenting the best answer so far"
	} else if r.anyStoppedLocked() {
		r.ended = "some agents were stopped: " + r.stopReasonsLocked()
	}
	r.finishLocked()
}

func (r *run) anyStoppedLocked() bool {
	for _, a := range r.agents {
		if a.status == StatusStopped {
			return true
		}
	}
	return false
}

func (r *run) stopReasonsLocked() string {
	var parts []string
	for _, a := range r.agents {
		if a.status == StatusStopped {
			parts = append(parts, a.id+" ("+a.stopReason+")")
		}
	}
	return strings.Join(parts, "; ")
}

// finishLocked ends coordination: every running execution is cancelled.
func (r *run) finishLocked() {
	if r.finished {
		return
	}
	r.finished = true
	close(r.doneCh)
	for _, a := range r.agents {
		if a.cancel != nil {
			a.cancel()
		}
	}
}

// answerProblemLocked says why a new answer from a cannot be accepted ("" if it can).
func (r *run) answerProblemLocked(a *agent, text string) string {
	if strings.TrimSpace(text) == "" {
		return "new_answer needs a non-empty content."
	}
	if len(text) > maxAnswerBytes {
		return fmt.Sprintf("the answer is %d bytes, more than the limit of %d; shorten it and put long content in files in your workspace.", len(text), maxAnswerBytes)
	}
	if max := r.cfg.Orchestrator.MaxNewAnswersPerAgent; max > 0 && a.answers >= max {
		return fmt.Sprintf("you have already posted the maximum of %d new answers; vote for the best existing answer instead.", max)
	}
	norm := strings.TrimSpace(text)
	for _, b := range r.agents { // config order, so the message is stable
		if ans := r.answers[b.id]; ans != nil && strings.TrimSpace(ans.text) == norm {
			return fmt.Sprintf("this answer is identical to %s's existing answer; give a different, better answer or vote for %s.", b.anon, b.anon)
		}
	}
	if limit, msg := noveltyLimit(r.cfg.Orchestrator.AnswerNoveltyRequirement); limit > 0 {
		for _, b := range r.agents {
			if ans := r.answers[b.id]; ans != nil && wordOverlap(text, ans.text) > limit {
				return msg
			}
		}
	}
	return ""
}

// noveltyLimit is MassGen's answer_novelty_requirement: the word overlap (Jaccard similarity of
// the sets of lower-cased words) above which a new answer is refused, and the message saying
// so; 0 for lenient (no check).
func noveltyLimit(level string) (float64, string) {
	switch level {
	case configs.Strict:
		return 0.5, "your answer is too similar to existing answers (>50% overlap). Please use a fundamentally different approach, employ different tools/techniques, or vote for an existing answer."
	case configs.Balanced:
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

// answerIDsLocked lists the anonymous ids that have an answer, in config order.
func (r *run) answerIDsLocked() string {
	ids := r.answerAnonsLocked()
	if len(ids) == 0 {
		return "(none yet)"
	}
	return strings.Join(ids, ", ")
}

func (r *run) answerAnonsLocked() []string {
	var ids []string
	for _, a := range r.agents {
		if r.answers[a.id] != nil {
			ids = append(ids, a.anon)
		}
	}
	return ids
}

// winner is the answer with most votes; ties go to the answer posted first.
func (r *run) winner() *agent {
	r.mu.Lock()
	defer r.mu.Unlock()
	count := map[string]int{}
	for _, v := range r.votes {
		count[v.target]++
	}
	var best *answer
	for _, ans := range r.answers {
		if best == nil || count[ans.agent] > count[best.agent] ||
			(count[ans.agent] == count[best.agent] && ans.seq < best.seq) {
			best = ans
		}
	}
	if best == nil {
		return nil
	}
	for _, a := range r.agents {
		if a.id == best.agent {
			return a
		}
	}
	return nil
}

func (r *run) decisionText(w *agent) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, v := range r.votes {
		if v.target == w.id {
			n++
		}
	}
	text := fmt.Sprintf("%s (%s) wins with %d of %d votes", w.id, w.anon, n, len(r.votes))
	if r.ended != "" {
		text += "; " + r.ended
	}
	return text
}

// result copies the coordination outcome.
func (r *run) result() *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &Result{
		Votes:      map[string]string{},
		Answers:    map[string]string{},
		Usage:      map[string]backends.Usage{},
		EndedEarly: r.ended,
	}
	for id, v := range r.votes {
		res.Votes[id] = v.target
	}
	for id, ans := range r.answers {
		res.Answers[id] = ans.text
	}
	for _, a := range r.agents {
		res.Usage[a.id] = a.usage
	}
	return res
}

// sortedAnswers returns the current answers in config order (anonymous ids ascending).
func (r *run) sortedAnswersLocked() []*answer {
	var out []*answer
	for _, a := range r.agents {
		if ans := r.answers[a.id]; ans != nil {
			out = append(out, ans)
		}
	}
	return out
}

var (
	errFinished     = errors.New("coordination is over")
	errVoteSetAside = errors.New("the vote came after a new answer")
)

// invalidError is a workflow call that cannot be accepted; its text goes back to the model.
type invalidError string

func (e invalidError) Error() string { return string(e) }

func (r *run) addUsage(a *agent, u backends.Usage) backends.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	a.usage.Add(u)
	return a.usage
}

func (r *run) anonOf(id string) string {
	for _, a := range r.agents {
		if a.id == id {
			return a.anon
		}
	}
	return ""
}
