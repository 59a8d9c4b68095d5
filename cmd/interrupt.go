package cmd

import (
	"context"
	"os"
	"os/signal"
	"sync"
)

// interrupter routes Ctrl-C: to the turn in progress when an interactive session registered one
// (the turn is cancelled, the session kept), otherwise to the whole run. So in interactive mode
// a first Ctrl-C cancels the turn and a second one (no turn registered any more) exits.
type interrupter struct {
	mu   sync.Mutex
	root context.CancelFunc
	turn context.CancelFunc
}

type interrupterKey struct{}

func (i *interrupter) interrupt() {
	i.mu.Lock()
	defer i.mu.Unlock()
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
