package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
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
	for attempt := 1; ; attempt++ {
		res, winner, err := r.coordinate(ctx)
		if err != nil || winner == nil {
			return r.interrupted(ctx, res, err)
		}
		var final string
		if spent := r.ledger.allows(winner.index); spent != nil {
			// No model request starts once the budget is spent: the winning answer, as it is.
			err = spent
		} else {
			final, err = r.present(ctx, winner)
		}
		presented := err == nil
		if err != nil {
			if ctx.Err() != nil {
				return r.interrupted(ctx, res, fmt.Errorf("run cancelled: %w", ctx.Err()))
			}
			r.presentationFailed(res, winner, err)
			final = res.Answers[winner.id]
		}
		if presented && attempt < attempts && res.StoppedBy == "" { // "answer now" means now
			fb, err := r.evaluate(ctx, winner, final, attempt, attempts)
			if err != nil {
				return r.interrupted(ctx, res, fmt.Errorf("run cancelled: %w", err))
			}
			if fb != nil {
				r.restartOrchestration(fb, attempt+1, attempts)
				continue
			}
		}
		res.FinalAnswer = final
		res.FinalWorkspace = winner.workspace
		res.Attempts = attempt
		r.account(res)
		r.emit(Event{Kind: EventFinal, Agent: winner.id, Anon: winner.anon, Status: StatusDone, Phase: PhaseFinal, Text: final})
		if res.StoppedBy != "" {
			r.keepWork(ctx, res, "stopped")
		}
		return res, nil
	}
}

// presentationFailed records a final presentation that failed or could not start (a spent
// budget): the winning answer still stands, shown as it is.
func (r *run) presentationFailed(res *Result, w *agent, err error) {
	if errors.Is(err, errBudget) {
		why := spentText(err)
		if res.StoppedBy == "" && r.ledger.turnOver() { // the turn's budget; not just the winner's own
			res.StoppedBy = StoppedByBudget
		}
		if res.EndedEarly == "" || res.StoppedBy == StoppedByBudget {
			res.EndedEarly = why + "; no final presentation (it would be another model request): showing the winning answer as it is"
		}
		r.emit(Event{Kind: EventBudget, Agent: w.id, Anon: w.anon, Phase: PhaseFinal, Text: why + ": the winning answer is shown as it is, without a final presentation"})
		return
	}
	r.emit(Event{Kind: EventError, Agent: w.id, Anon: w.anon, Phase: PhaseFinal, Text: "final presentation failed: " + err.Error()})
	if res.EndedEarly == "" {
		res.EndedEarly = "the final presentation failed (" + err.Error() + "); showing the winning answer"
	}
}

// interrupted ends a run cancelled, or one whose coordination ended without an answer (every
// agent failed, or the budget was spent first): every agent's work so far is kept in its
// snapshot and listed in the (partial) result, so that nothing paid for is lost.
func (r *run) interrupted(ctx context.Context, res *Result, err error) (*Result, error) {
	if res == nil {
		res = r.result()
	}
	res.Cancelled = ctx.Err() != nil
	r.account(res)
	if res.Cancelled || res.StoppedBy != "" {
		reason := "stopped"
		if res.Cancelled {
			reason = "cancelled"
		}
		r.keepWork(ctx, res, reason)
	}
	return res, err
}

// keepWork saves every agent's workspace as its snapshot (an empty workspace keeps the one
// before: a restarted agent's partial work) and lists each agent's answer and snapshot in
// res.Work, for the session to keep.
func (r *run) keepWork(ctx context.Context, res *Result, reason string) {
	ctx = context.WithoutCancel(ctx) // a cancelled run still keeps its work
	res.Work = res.Work[:0]
	for _, a := range r.agents {
		if a.workspace != "" {
			if _, err := r.store.Save(ctx, a.id, a.workspace, reason); err != nil {
				r.emit(Event{Kind: EventError, Agent: a.id, Anon: a.anon, Text: "saving the agent's work: " + err.Error()})
			}
		}
		w := AgentWork{ID: a.id, Anon: a.anon, Answer: res.Answers[a.id]}
		if r.store.HasSnapshot(a.id) {
			w.Snapshot = r.store.SnapshotDir(a.id)
		}
		res.Work = append(res.Work, w)
	}
}

// account copies the ledger into res: every agent's usage and cost, the turn's.
func (r *run) account(res *Result) {
	us, cs, total := r.ledger.snapshot()
	for i, a := range r.agents {
		res.Usage[a.id], res.Cost[a.id] = us[i], cs[i]
	}
	res.TotalCost, res.MaxCostUSD, res.PricesDate = total, r.ledger.cap, r.prices
}

// coordinate runs one coordination (or skips it: skip_coordination_rounds makes the first agent
// the winner at once, as MassGen does) and returns its outcome and winner. The winner is nil,
// with ErrNoAnswer, when no agent answered. Its final state is left in r.coord.
//
// One goroutine per agent runs the agent's executions (agentLoop); the owner's goroutine holds
// the coordination state and applies the policy (owner.go, policy.go).
func (r *run) coordinate(ctx context.Context) (*Result, *agent, error) {
	r.coord = r.newState()
	if r.cfg.Orchestrator.SkipCoordinationRounds {
		w := r.agents[0]
		r.skipped = true
		res := r.result()
		res.Winner, res.WinnerAnon = w.id, w.anon
		r.emit(Event{Kind: EventDecision, Agent: w.id, Anon: w.anon, Target: w.id,
			Text: fmt.Sprintf("coordination skipped (skip_coordination_rounds): %s (%s) presents the final answer", w.id, w.anon)})
		return res, w, nil
	}
	overall := r.cfg.OverallTimeout()
	coordCtx, cancelCoord := context.WithTimeout(ctx, overall)
	defer cancelCoord()
	stopReason := func() string {
		if ctx.Err() != nil {
			return "" // cancelled: the run ends with an error
		}
		return fmt.Sprintf("the overall timeout (%s) was reached before every agent voted; presenting the best answer so far", overall)
	}
	o := newOwner(coordCtx, r.coord, r.emit, stopReason, r.observe)
	go o.loop()
	ids := make([]string, len(r.agents))
	for i, a := range r.agents {
		ids[i] = a.id
	}
	r.ctl.attach(o, ids)
	if r.ledger.turnOver() { // spent by an earlier attempt: nothing may start
		o.post(r.budgetStop())
	}
	var wg sync.WaitGroup
	for _, a := range r.agents {
		wg.Go(func() { r.agentLoop(coordCtx, o, a) })
	}
	<-o.done // every agent voted, or coordCtx ended (the owner stops coordination then)
	r.ctl.detach()
	cancelCoord()
	wg.Wait()
	r.coord = o.close()
	r.clock = r.coord.clock
	if err := ctx.Err(); err != nil {
		return r.result(), nil, fmt.Errorf("run cancelled: %w", err)
	}

	res := r.result()
	w := r.coord.leader()
	if w < 0 {
		text := "no agent produced an answer"
		switch {
		case res.StoppedBy == StoppedByTimeout: // EndedEarly promises an answer there is not
			text = fmt.Sprintf("the overall timeout (%s) was reached before any agent answered", overall)
		case res.StoppedBy != "":
			text += "; " + res.EndedEarly
		}
		r.emit(Event{Kind: EventError, Text: text})
		return res, nil, ErrNoAnswer
	}
	winner := r.agents[w]
	res.Winner, res.WinnerAnon = winner.id, winner.anon
	r.emit(Event{Kind: EventDecision, Agent: winner.id, Anon: winner.anon, Target: winner.id, Text: r.coord.decisionText(w)})
	return res, winner, nil
}

// newState is the state of a coordination about to begin.
func (r *run) newState() state {
	ids, anons := make([]string, len(r.agents)), make([]string, len(r.agents))
	for i, a := range r.agents {
		ids[i], anons[i] = a.id, a.anon
	}
	return newState(ids, anons, rules{
		maxAnswers: r.cfg.Orchestrator.MaxNewAnswersPerAgent,
		novelty:    r.cfg.Orchestrator.AnswerNoveltyRequirement,
		grace:      r.restartGrace,
	}, r.clock)
}

// agentLoop runs an agent's executions, as the owner starts them, until coordination is over
// for it. Its agent timeout bounds the time it spends working; time spent waiting for the
// others does not count.
func (r *run) agentLoop(coordCtx context.Context, o *owner, a *agent) {
	limit, used := agentTimeout(r.cfg), time.Duration(0)
	for round := 0; ; round++ {
		t, ok := o.awaitTurn(coordCtx, a.index)
		if !ok {
			return
		}
		if o.finished() { // started just before the end
			t.cancel()
			o.send(executionEnded{agent: a.index, kind: outCancelled})
			return
		}
		execCtx, cancel := t.ctx, t.cancel
		timeout, byRound := executionLimit(r.cfg, limit, used, round) // 0: none
		if timeout > 0 {
			execCtx, cancel = context.WithTimeout(t.ctx, timeout)
		}
		start := time.Now()
		out := r.execute(execCtx, o, a, t)
		if out.kind == outCancelled {
			out = r.whyCancelled(coordCtx, execCtx, o)
			if out.kind == outStopped && byRound != "" {
				out.reason = byRound + " reached"
			}
		}
		cancel()
		t.cancel()
		used += time.Since(start)
		if out.kind == outRestart {
			r.saveAndClear(coordCtx, a)
		}
		o.send(executionEnded{agent: a.index, kind: out.kind, reason: out.reason, budget: out.budget})
		if out.kind == outStopped || out.kind == outCancelled {
			return
		}
	}
}

// whyCancelled tells what ended a cancelled execution: the end of coordination (outCancelled),
// the agent's timeout (outStopped), or else a pending restart whose grace ran out (outRestart):
// only the grace cancels an execution otherwise.
func (r *run) whyCancelled(coordCtx, execCtx context.Context, o *owner) outcome {
	switch {
	case o.finished() || coordCtx.Err() != nil:
		return outcome{kind: outCancelled}
	case errors.Is(execCtx.Err(), context.DeadlineExceeded):
		return outcome{kind: outStopped, reason: r.timeoutReason()}
	}
	return outcome{kind: outRestart}
}

func (r *run) timeoutReason() string {
	return fmt.Sprintf("agent timeout (%ds) reached", r.cfg.Orchestrator.AgentTimeoutSeconds)
}

// saveAndClear is the restart sequence: the partial workspace becomes the agent's snapshot (the
// others, and the agent itself after the restart, see it in their temp workspaces), then the
// workspace is emptied for a fresh start. It runs before the owner hears of the restart, so no
// quiet period starts (and no waiting agent fills its temp workspace) before it is saved.
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

// result copies the outcome of the last coordination (r.coord).
func (r *run) result() *Result {
	s := r.coord
	res := &Result{
		Votes:      map[string]string{},
		Answers:    map[string]string{},
		Usage:      map[string]backends.Usage{},
		Cost:       map[string]pricing.Cost{},
		EndedEarly: s.ended,
		StoppedBy:  s.stoppedBy,
	}
	for _, a := range s.agents {
		if a.vote != nil {
			res.Votes[a.id] = s.agents[a.vote.target].id
		}
		if a.answer != nil {
			res.Answers[a.id] = a.answer.text
		}
	}
	r.account(res)
	return res
}

// addUsage records a model call's usage of agent a in the ledger and reports it: the agent's
// tokens and cost so far and the turn's cost, budget warnings due, and a budget spent (the
// turn's: coordination stops and the leader is presented, as "answer now" does; the agent's: it
// makes no further request).
func (r *run) addUsage(a *agent, u backends.Usage, phase string) {
	rec := r.ledger.record(a.index, u)
	ev := r.agentEvent(a, EventUsage, "", phase)
	ev.Usage, ev.Cost, ev.TotalCost = rec.usage, rec.cost, rec.total
	r.emit(ev)
	for _, w := range rec.warnings {
		ev := Event{Kind: EventBudget, Text: w.text, Phase: phase}
		if w.agent {
			ev.Agent, ev.Anon = a.id, a.anon
		}
		r.emit(ev)
	}
	if rec.turnOver {
		m := r.budgetStop()
		r.emit(Event{Kind: EventBudget, Phase: phase, Text: m.reason})
		r.ctl.stop(m)
	}
}

// budgetStop is the stop of a spent turn budget.
func (r *run) budgetStop() stopCoordination {
	return stopCoordination{by: StoppedByBudget,
		reason: fmt.Sprintf("the turn's budget of %s was spent before every agent voted; presenting the best answer so far", pricing.Format(r.ledger.cap))}
}
