package orchestrator

import (
	"context"
	"fmt"
	"time"
)

// owner is the one goroutine that holds a coordination's state (see policy.go). The agents'
// goroutines tell it what happened with messages; it applies each to the state with next, one
// at a time, and carries out the effects: events, starting, signalling and cancelling
// executions, the restart graces, replies. Nothing else reads or writes the state while it
// runs; what the run needs afterwards is the final state close returns.
type owner struct {
	ctx   context.Context // the coordination's: its end stops coordination (stopReason says why)
	inbox chan envelope
	done  chan struct{} // closed when coordination is finished (effect finish)
	quit  chan struct{} // closed by close: the loop ends
	over  chan struct{} // closed when the loop has ended

	// The loop's own, like the state.
	s       state
	turns   []chan turn // per agent: its next execution (at most one is ever waiting)
	execs   []execution // per agent: its current execution
	timers  []*time.Timer
	ctxDone <-chan struct{} // ctx.Done() until coordination was stopped for its end

	emit       func(Event)
	stopReason func() string // why ctx ended ("" for a cancelled run)
	observe    func(state)   // when set (tests), called with every new state
}

type envelope struct {
	m     message
	reply chan reply // for the messages that are answered (nil for the others)
}

// turn is an execution handed to an agent's goroutine.
type turn struct {
	ctx     context.Context // cancelled when its restart grace runs out or coordination ends
	cancel  context.CancelFunc
	restart <-chan struct{} // closed when a restart is pending: it restarts at its next step
	view    turnView
}

type execution struct {
	cancel    context.CancelFunc
	restart   chan struct{}
	restarted bool // restart is closed
}

func newOwner(ctx context.Context, s state, emit func(Event), stopReason func() string, observe func(state)) *owner {
	n := len(s.agents)
	o := &owner{
		ctx: ctx, inbox: make(chan envelope),
		done: make(chan struct{}), quit: make(chan struct{}), over: make(chan struct{}),
		s:     s,
		turns: make([]chan turn, n), execs: make([]execution, n), timers: make([]*time.Timer, n),
		emit: emit, stopReason: stopReason, observe: observe,
	}
	for i := range o.turns {
		o.turns[i] = make(chan turn, 1)
	}
	return o
}

// loop runs the owner until close: it begins coordination, then handles the messages in the
// order they come.
func (o *owner) loop() {
	defer close(o.over)
	o.ctxDone = o.ctx.Done()
	o.handle(envelope{m: begin{}})
	for {
		select {
		case <-o.ctxDone:
			o.stopOnEnd()
		case env := <-o.inbox:
			o.receive(env)
		case <-o.quit:
			for _, t := range o.timers {
				if t != nil {
					t.Stop()
				}
			}
			return
		}
	}
}

// receive handles a message. Once ctx has ended, coordination is stopped before any message
// is handled (whichever the loop saw first), so nothing starts after the end.
func (o *owner) receive(env envelope) {
	o.stopOnEnd()
	o.handle(env)
}

// stopOnEnd stops coordination, once, when ctx has ended.
func (o *owner) stopOnEnd() {
	if o.ctxDone != nil && o.ctx.Err() != nil {
		o.ctxDone = nil
		reason := o.stopReason()
		by := ""
		if reason != "" {
			by = StoppedByTimeout
		}
		o.handle(envelope{m: stopCoordination{reason: reason, by: by}})
	}
}

func (o *owner) handle(env envelope) {
	s, fx := next(o.s, env.m)
	o.s = s
	if o.observe != nil {
		o.observe(s)
	}
	for _, e := range fx {
		o.perform(e, env)
	}
}

func (o *owner) perform(e effect, env envelope) {
	switch e := e.(type) {
	case emitEvent:
		o.emit(e.ev)
	case startExecution:
		ctx, cancel := context.WithCancel(o.ctx)
		x := execution{cancel: cancel, restart: make(chan struct{})}
		o.execs[e.agent] = x
		o.turns[e.agent] <- turn{ctx: ctx, cancel: cancel, restart: x.restart, view: e.view}
	case restartPending:
		if x := &o.execs[e.agent]; !x.restarted {
			close(x.restart)
			x.restarted = true
		}
		o.stopTimer(e.agent)
		m := graceExpired{agent: e.agent, grace: e.grace}
		o.timers[e.agent] = time.AfterFunc(e.after, func() { o.post(m) })
	case disarmGrace:
		o.stopTimer(e.agent)
	case cancelExecution:
		if c := o.execs[e.agent].cancel; c != nil {
			c()
		}
	case finish:
		close(o.done) // before the cancellations: an execution cancelled by the end sees it
		for _, x := range o.execs {
			if x.cancel != nil {
				x.cancel()
			}
		}
	case reply:
		env.reply <- e // buffered: never blocks
	default:
		panic(fmt.Sprintf("orchestrator: unknown coordination effect %T", e))
	}
}

func (o *owner) stopTimer(i int) {
	if t := o.timers[i]; t != nil {
		t.Stop()
		o.timers[i] = nil
	}
}

// post sends m from outside the agents (a timer), unless the loop is over.
func (o *owner) post(m message) {
	select {
	case o.inbox <- envelope{m: m}:
	case <-o.over:
	}
}

// send tells the owner m; ask tells it m and waits for its reply. Agents call them only while
// the loop runs (close waits for every agent to be done).
func (o *owner) send(m message) { o.inbox <- envelope{m: m} }

func (o *owner) ask(m message) error {
	r := make(chan reply, 1)
	o.inbox <- envelope{m: m, reply: r}
	return (<-r).err
}

// request is ask from outside the agents (the user's "answer now"): false when the loop is
// over before it replied.
func (o *owner) request(m message) (reply, bool) {
	r := make(chan reply, 1)
	select {
	case o.inbox <- envelope{m: m, reply: r}:
	case <-o.over:
		return reply{}, false
	}
	select {
	case rep := <-r:
		return rep, true
	case <-o.over:
		select { // replied just before the end
		case rep := <-r:
			return rep, true
		default:
			return reply{}, false
		}
	}
}

// finished says whether coordination is over.
func (o *owner) finished() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// awaitTurn waits for agent i's next execution; false when coordination is over for it.
func (o *owner) awaitTurn(ctx context.Context, i int) (turn, bool) {
	select {
	case t := <-o.turns[i]:
		return t, true
	case <-o.done:
	case <-ctx.Done():
	}
	return turn{}, false
}

// close ends the loop (every agent is done) and returns the final state.
func (o *owner) close() state {
	close(o.quit)
	<-o.over
	return o.s
}

// The owner times the agents' replies during coordination (replyTimer, see converse).
func (o *owner) replyStarted(i int, at time.Time) { o.send(replyStarted{agent: i, at: at}) }
func (o *owner) replyEnded(i int, at time.Time, completed bool) {
	o.send(replyEnded{agent: i, at: at, completed: completed})
}
