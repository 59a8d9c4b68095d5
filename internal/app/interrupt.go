package app

import (
	"context"
	"os"
	"os/signal"
	"sync"

	"github.com/massgen-go/massgen/orchestrator"
)

// interrupter routes Ctrl-C. While a turn's agents coordinate and at least one has answered,
// the first Ctrl-C is "answer now": coordination stops and the leader presents the final
// answer (see attachRun). Any other Ctrl-C cancels: the turn in progress when an interactive
// session registered one (the turn is cancelled, the session kept), otherwise the whole run.
// So a second Ctrl-C after "answer now", or a first one before any answer, cancels as before.
type interrupter struct {
	mu   sync.Mutex
	root context.CancelFunc
	turn context.CancelFunc
	run  *runHandle // the turn's orchestrator run (nil: none)
}

// runHandle is a run's "answer now": its Control, how to tell the user, and whether it was used.
type runHandle struct {
	ctl      *orchestrator.Control
	say      func(leader string)
	answered bool // "answer now" was given: the next Ctrl-C cancels
}

type interrupterKey struct{}

func (i *interrupter) interrupt() {
	i.mu.Lock()
	rh := i.run
	try := rh != nil && !rh.answered
	i.mu.Unlock()
	if try {
		// Not under i.mu: the run's owner answers, and the run may end (detach) meanwhile.
		if leader, ok := rh.ctl.AnswerNow(); ok {
			i.mu.Lock()
			rh.answered = true
			i.mu.Unlock()
			rh.say(leader)
			return
		}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if rh != nil {
		rh.answered = true // a cancelled run is not answered now afterwards
	}
	if i.turn != nil {
		i.turn()
		i.turn = nil
		return
	}
	i.root()
}

// HandleInterrupts installs the Ctrl-C (SIGINT) handler for the process: cancel ends everything
// unless a turn is registered (see turnContext). Call stop when done.
func HandleInterrupts(ctx context.Context, cancel context.CancelFunc) (context.Context, func()) {
	i := &interrupter{root: cancel}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				i.interrupt()
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return context.WithValue(ctx, interrupterKey{}, i), func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}

// turnContext returns the context of one interactive turn: Ctrl-C cancels it rather than the
// whole run while it is registered. end unregisters it.
func turnContext(ctx context.Context) (tctx context.Context, end func()) {
	i, ok := ctx.Value(interrupterKey{}).(*interrupter)
	if !ok {
		return ctx, func() {}
	}
	tctx, cancel := context.WithCancel(ctx)
	i.mu.Lock()
	i.turn = cancel
	i.mu.Unlock()
	return tctx, func() {
		i.mu.Lock()
		i.turn = nil
		i.mu.Unlock()
		cancel()
	}
}

// attachRun registers a turn's orchestrator run for "answer now": say tells the user, as soon
// as the key is pressed, whose answer is presented. detach unregisters it.
func attachRun(ctx context.Context, ctl *orchestrator.Control, say func(leader string)) (detach func()) {
	i, ok := ctx.Value(interrupterKey{}).(*interrupter)
	if !ok {
		return func() {}
	}
	rh := &runHandle{ctl: ctl, say: say}
	i.mu.Lock()
	i.run = rh
	i.mu.Unlock()
	return func() {
		i.mu.Lock()
		if i.run == rh {
			i.run = nil
		}
		i.mu.Unlock()
	}
}
