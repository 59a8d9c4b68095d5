package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signals end a run the same careful way: the context is cancelled, the turn in progress stops,
// its record of changes is kept (an interrupted turn in the session), --output json still ends
// with a result, and the run exits 130. SIGTERM and SIGHUP (the terminal closed) always cancel
// the whole run; Ctrl-C (SIGINT) goes through the interrupter (interrupt.go). SIGPIPE never
// kills massgen: a write to a closed stdout fails with EPIPE like any other write error, which
// the run reports (exit 1) after saving the turn.

// HandleSignals installs massgen's signal handling on parent and returns the run's context,
// whose cause names the signal that cancelled it. Call stop when done.
func HandleSignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ctx, stopInterrupts := HandleInterrupts(ctx, func() { cancel(errCtrlC) })
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGPIPE}
	if !signal.Ignored(syscall.SIGHUP) { // started under nohup: SIGHUP stays ignored
		sigs = append(sigs, syscall.SIGHUP)
	}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				if s == syscall.SIGPIPE {
					continue // the write that met the closed pipe fails with EPIPE
				}
				cancel(signalCause(s))
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			stopInterrupts()
			cancel(nil)
		})
	}
}

var errCtrlC = errors.New("cancelled by Ctrl-C")

// signalCause is the cancel cause for s, as the run reports it.
func signalCause(s os.Signal) error {
	switch s {
	case syscall.SIGHUP:
		return errors.New("cancelled by SIGHUP (the terminal closed)")
	case syscall.SIGTERM:
		return errors.New("cancelled by SIGTERM")
	}
	return fmt.Errorf("cancelled by %v", s)
}
