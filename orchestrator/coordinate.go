package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/snapshots"
)

// run does coordination, picks the winner and has it present.
func (r *run) run(ctx context.Context) (*Result, error) {
	names := make([]string, len(r.agents))
	for i, a := range r.agents {
		names[i] = a.id + "=" + a.anon
	}
	r.emit(Event{Kind: EventRunStart, Phase: PhaseCoordination, Text: strings.Join(names, ", ")})
	defer r.emit(Event{Kind: EventDone})

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
		return nil, fmt.Errorf("run cancelled: %w", err)
	}

	res := r.result()
	winner := r.winner()
	if winner == nil {
		r.emit(Event{Kind: EventError, Text: "no agent produced an answer"})
		return res, ErrNoAnswer
	}
	res.Winner, res.WinnerAnon = winner.id, winner.anon
	r.emit(Event{Kind: EventDecision, Agent: winner.id, Anon: winner.anon, Target: winner.id, Text: r.decisionText(winner)})

	final, delivered, err := r.present(ctx, winner)
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
	res.FinalAnswer = final
	res.Delivered = delivered
	res.FinalWorkspace = winner.workspace
	r.mu.Lock()
	for _, a := range r.agents {
		res.Usage[a.id] = a.usage
	}
	r.mu.Unlock()
	r.emit(Event{Kind: EventFinal, Agent: winner.id, Anon: winner.anon, Status: StatusDone, Phase: PhaseFinal, Text: final})
	return res, nil
}

// agentLoop runs an agent's executions until coordination is over.
func (r *run) agentLoop(coordCtx context.Context, a *agent) {
	// However it ends, a restart save it owed no longer holds the others back.
	defer r.saveFinished(a)
	ctx := coordCtx
	if d := agentTimeout(r.cfg); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(coordCtx, d)
		defer cancel()
	}
	for {
		r.mu.Lock()
		for !a.needsRun && !r.finished && a.status != StatusStopped {
			r.mu.Unlock()
			select {
			case <-a.wake:
			case <-ctx.Done():
				if coordCtx.Err() == nil {
					r.agentTimedOut(coordCtx, a)
				}
				return
			case <-r.doneCh:
				return
			}
			r.mu.Lock()
		}
		if r.finished || a.status == StatusStopped {
			r.mu.Unlock()
			return
		}
		a.needsRun = false
		gen := a.gen
		execCtx, cancel := context.WithCancel(ctx)
		a.cancel = cancel
		a.status = StatusWorking
		r.mu.Unlock()

		r.emit(r.agentEvent(a, EventStart, StatusWorking, PhaseCoordination))
		out := r.execute(execCtx, a, gen)
		cancel()

		switch out.kind {
		case outDone:
			// answered or voted: the commit already updated the state
		case outRestart:
			r.saveAndClear(coordCtx, a)
		case outStopped:
			r.stop(a, out.reason)
			return
		case outCancelled:
			r.mu.Lock()
			restarted := a.gen != gen
			r.mu.Unlock()
			switch {
			case restarted && coordCtx.Err() == nil:
				r.saveAndClear(coordCtx, a)
			case coordCtx.Err() == nil && ctx.Err() != nil:
				r.stop(a, r.timeoutReason())
				return
			default:
				return
			}
		}
	}
}

// agentTimedOut handles an agent whose time ran out while it was idle: a vote it already cast
// stands until a new answer would need another one from it.
func (r *run) agentTimedOut(coordCtx context.Context, a *agent) {
	r.mu.Lock()
	voted := a.status == StatusVoted && !a.needsRun
	r.mu.Unlock()
	if voted {
		select {
		case <-a.wake:
		case <-r.doneCh:
			return
		case <-coordCtx.Done():
			return
		}
	}
	r.stop(a, r.timeoutReason())
}

func (r *run) timeoutReason() string {
	return fmt.Sprintf("agent timeout (%ds) reached", r.cfg.Orchestrator.AgentTimeoutSeconds)
}

// saveAndClear is the restart sequence: the partial workspace becomes the agent's snapshot (so
// the others see the partial work), then the workspace is emptied for a fresh start.
func (r *run) saveAndClear(ctx context.Context, a *agent) {
	defer r.saveFinished(a)
	if a.workspace == "" {
		return
	}
	if _, err := r.store.Save(context.WithoutCancel(ctx), a.id, a.workspace, "restart"); err != nil {
		r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Text: "saving partial work: " + err.Error()})
		return // keep the workspace rather than lose work
	}
	if err := snapshots.ClearWorkspace(a.workspace); err != nil {
		r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Text: "clearing the workspace: " + err.Error()})
	}
}

func (r *run) saveFinished(a *agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a.savePending = false
	delete(r.saves, a.id)
	if len(r.saves) == 0 && r.savesDone != nil {
		close(r.savesDone)
		r.savesDone = nil
	}
}

// waitSaves waits until every restarting agent has saved its partial work, so the temp
// workspace filled next shows it.
func (r *run) waitSaves(ctx context.Context) {
	r.mu.Lock()
	ch := r.savesDone
	r.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
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
	r.mu.Unlock()
}

// commitAnswer records a new answer and restarts every other agent. It fails when the
// execution was superseded by a restart (errSuperseded) or the answer became invalid meanwhile.
func (r *run) commitAnswer(a *agent, gen int, text string) error {
	r.mu.Lock()
	if r.finished || a.gen != gen {
		r.mu.Unlock()
		return errSuperseded
	}
	if msg := r.answerProblemLocked(a, text); msg != "" {
		r.mu.Unlock()
		return invalidError(msg)
	}
	r.answerSeq++
	r.answers[a.id] = &answer{agent: a.id, text: text, seq: r.answerSeq}
	a.answers++
	clear(r.votes) // a new answer invalidates every vote: everybody looks again
	a.status = StatusAnswered
	var restarted []*agent
	single := len(r.agents) == 1
	if !single {
		a.needsRun = true // it votes (or improves) next, seeing every answer
		for _, b := range r.agents {
			if b == a || b.status == StatusStopped {
				continue
			}
			b.gen++
			b.needsRun = true
			switch b.status {
			case StatusWorking:
				b.status = StatusRestarting
				if !b.savePending {
					b.savePending = true
					if len(r.saves) == 0 {
						r.savesDone = make(chan struct{})
					}
					r.saves[b.id] = true
				}
				b.cancel()
			case StatusWaiting:
				continue // not started yet: it starts with the new answer anyway
			case StatusRestarting:
			default: // answered or voted and idle: just run again
				b.status = StatusRestarting
				select {
				case b.wake <- struct{}{}:
				default:
				}
			}
			restarted = append(restarted, b)
		}
	}
	r.mu.Unlock()

	ev := r.agentEvent(a, EventAnswer, StatusAnswered, PhaseCoordination)
	ev.Text = text
	r.emit(ev)
	for _, b := range restarted {
		ev := r.agentEvent(b, EventRestart, StatusRestarting, PhaseCoordination)
		ev.Text = "new answer from " + a.anon
		r.emit(ev)
	}
	if single {
		r.mu.Lock()
		r.finishLocked()
		r.mu.Unlock()
	}
	return nil
}

// commitVote records a vote and checks whether coordination is over.
func (r *run) commitVote(a *agent, gen int, targetAnon, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished || a.gen != gen {
		return errSuperseded
	}
	t := r.byAnon[targetAnon]
	if t == nil || r.answers[t.id] == nil {
		return invalidError(fmt.Sprintf("%q has no answer to vote for; valid ids: %s", targetAnon, r.answerIDsLocked()))
	}
	r.votes[a.id] = vote{target: t.id, reason: reason}
	a.status = StatusVoted
	ev := r.agentEvent(a, EventVote, StatusVoted, PhaseCoordination)
	ev.Target, ev.Text = t.id, reason
	r.mu.Unlock()
	r.emit(ev)
	r.mu.Lock()
	if !r.finished {
		r.checkDoneLocked()
	}
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
	return ""
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

var errSuperseded = errors.New("superseded by a restart")

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
