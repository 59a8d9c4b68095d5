package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/display"
)

// Signals end a run the same careful way: the context is cancelled, the turn in progress stops,
// its record of changes is kept (an interrupted turn in the session), --output json still ends
// with a result, and the run exits 128 + the signal: 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP). SIGTERM and SIGHUP (the terminal closed) always cancel
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

// signalCancel is the cancel cause of a signal: what the run says and the exit code it ends with
// (128 + the signal, by convention: 130 for Ctrl-C, 129 for SIGHUP, 143 for SIGTERM).
type signalCancel struct {
	msg  string
	code int
}

func (s *signalCancel) Error() string { return s.msg }

var errCtrlC = &signalCancel{"cancelled by Ctrl-C", cmdutil.ExitCanceled}

// signalCause is the cancel cause for s, as the run reports it.
func signalCause(s os.Signal) error {
	switch s {
	case syscall.SIGHUP:
		return &signalCancel{"cancelled by SIGHUP (the terminal closed)", cmdutil.ExitHangup}
	case syscall.SIGTERM:
		return &signalCancel{"cancelled by SIGTERM", cmdutil.ExitTerminated}
	}
	return fmt.Errorf("cancelled by %v", s)
}

// cancelError is a cancelled run's error in words ("run cancelled by SIGTERM"): what stderr and
// the JSON result say, never Go's "context canceled". It wraps the error it replaces.
type cancelError struct {
	msg string
	err error
}

func (c *cancelError) Error() string { return c.msg }
func (c *cancelError) Unwrap() error { return c.err }

// BySignal gives a cancelled err (exit 130) the exit code of the signal that cancelled ctx (143
// for SIGTERM, 129 for SIGHUP) and, when it is a context's cancel, says so in words naming the
// signal. Every place that reports a run's end (the JSON result, the exit) reads it.
func BySignal(ctx context.Context, err error) error {
	var ce *cancelError
	if cmdutil.CodeOf(err) != cmdutil.ExitCanceled || errors.As(err, &ce) {
		return err
	}
	code, msg := cmdutil.ExitCanceled, "run cancelled"
	var sc *signalCancel
	if errors.As(context.Cause(ctx), &sc) {
		code, msg = sc.code, "run "+sc.msg
	}
	var ee *cmdutil.ExitError
	errors.As(err, &ee) // CodeOf found one
	if !errors.Is(err, context.Canceled) {
		return &cmdutil.ExitError{Code: code, Err: ee.Err, Reported: ee.Reported}
	}
	return cmdutil.WithCode(code, &cancelError{msg: msg, err: err})
}

// CancelledLine is the line that ends a cancelled run on stderr ("Run cancelled by Ctrl-C."), or
// "" when err is no cancel.
func CancelledLine(err error) string {
	var ce *cancelError
	if !errors.As(err, &ce) {
		return ""
	}
	return strings.ToUpper(ce.msg[:1]) + ce.msg[1:] + "."
}

// ResultBeforeRun writes the one JSON result line of a run that asked for --output json but
// failed before RunOutput began (a flag that does not parse, an empty QUESTION), with the reason.
// It writes nothing when RunOutput ran (it ends with its own result) or JSON was not asked for.
func ResultBeforeRun(opts *RunOptions, args []string, err error) {
	if err == nil || opts.jsonOut != nil || !wantsJSON(opts, args) {
		return
	}
	display.NewJSON(opts.IO.Out).Result(display.JSONResult{ExitCode: cmdutil.CodeOf(err), Error: errorText(err)})
}

// wantsJSON reports whether the run asked for --output json: as parsed, or, when parsing stopped
// at a bad flag before it, as given in args (before "--"), else in MASSGEN_OUTPUT.
func wantsJSON(opts *RunOptions, args []string) bool {
	if opts.Output == "json" {
		return true
	}
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--output" && i+1 < len(args):
			return args[i+1] == "json"
		case strings.HasPrefix(a, "--output="):
			return a == "--output=json"
		}
	}
	if opts.LookupEnv == nil {
		return false
	}
	v, ok := opts.LookupEnv("MASSGEN_OUTPUT")
	return ok && v == "json"
}
