package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/term"

	"github.com/massgen-go/massgen/display"
	"github.com/massgen-go/massgen/internal/ask"
	"github.com/massgen-go/massgen/internal/pubsub"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
	"github.com/massgen-go/massgen/permissions"
)

// orchestrateTurn is runTurn's body: it runs the orchestrator with the display chosen by
// --display (live panels on a terminal, plain lines otherwise, nothing when silent; all on
// stderr), prints the end-of-run summary on stderr, and returns the result, whose final answer
// turn() prints on stdout. A cancelled run returns an error wrapping context.Canceled (exit 130).
func orchestrateTurn(ctx context.Context, opts *RunOptions, t *Turn) (*orchestrator.Result, error) {
	cfg := t.Config
	mode, err := display.ParseMode(opts.Display)
	if err != nil {
		return nil, err
	}
	if mode == display.ModeAuto && cfg.UI.DisplayType != "" { // MassGen's ui.display_type
		if m, err := display.ParseMode(cfg.UI.DisplayType); err == nil {
			mode = m
		}
	}
	mode = display.Resolve(mode, opts.IO.StderrTTY)
	width, height := 0, 0
	if f, ok := opts.IO.ErrOut.(*os.File); ok && opts.IO.StderrTTY {
		if w, h, err := term.GetSize(int(f.Fd())); err == nil {
			width, height = w, h
		}
	}
	logger := t.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	home, _ := opts.HomeDir()

	var asker permissions.Asker // nil without a terminal: asks become denies with a reason
	var counter *ask.Asker      // counts the user's denials for the summary
	if opts.IO.StdinTTY && opts.IO.StderrTTY {
		_, accessible := opts.LookupEnv("ACCESSIBLE")
		_, noColor := opts.LookupEnv("NO_COLOR")
		counter = ask.NewAsker(ask.AskOptions{In: opts.IO.In, Out: opts.IO.ErrOut, Accessible: accessible,
			Width: width, Height: height, Color: !noColor, Erase: mode == display.ModeLive})
		asker = counter
	}

	color := display.ColorEnabled(opts.IO.StderrTTY, opts.LookupEnv)
	d := display.New(mode, opts.IO.ErrOut, display.Options{Width: width, Height: height, Color: color})
	rec := newOutcomeRecorder(cfg)
	// The outcome recorder, the display and --output json (the same events as JSON Lines on
	// stdout) each read every event of the run, in order, from their own subscription.
	events := pubsub.New[orchestrator.Event]()
	handlers := []func(orchestrator.Event){rec.handle, d.Handle}
	if jd := t.JSON; jd != nil {
		handlers = append(handlers, jd.Handle)
	}
	var readers sync.WaitGroup
	for _, handle := range handlers {
		ch := events.Subscribe(context.WithoutCancel(ctx)) // a cancelled run's last events are shown too
		readers.Go(func() {
			for ev := range ch {
				handle(ev)
			}
		})
	}
	if s, ok := d.(display.Suspender); ok && asker != nil {
		asker = suspendingAsker{asker: asker, s: s}
	}
	// Ctrl-C during coordination, once an agent has answered, is "answer now" (interrupt.go).
	ctl := orchestrator.NewControl()
	detach := attachRun(ctx, ctl, func(leader string) {
		say(d, opts.IO.ErrOut, fmt.Sprintf("answering now with %s's answer; Ctrl-C again to cancel", leader))
	})
	res, err := orchestrator.Run(ctx, orchestrator.Options{
		Config:    cfg,
		Task:      t.Task,
		History:   t.History,
		ReadOnly:  t.ReadOnly,
		PriorWork: t.PriorWork,
		RunDir:    t.RunDir,
		Asker:     asker,
		Events:    events,
		Logger:    logger,
		LookupEnv: cfg.LookupEnv,
		Home:      home,
		Journal:   t.Journal,
		Control:   ctl,
	})
	detach()
	events.Close() // every event is published: the readers end once they have handled it
	readers.Wait()
	d.Close()
	t.Outcome = rec.outcome(res)
	if counter != nil {
		t.UserDenials = counter.Denials()
	}
	if err != nil {
		return res, err // a cancelled or answerless run's partial result: its work is kept
	}
	cs := finishChanges(ctx, t)
	if mode != display.ModeSilent {
		// Why the run ended early is said by the lines that end it (Outcome.print), once; only
		// a stop (the overall timeout, the user, the budget) is left to the summary.
		shown := *res
		if t.Outcome.StoppedBy == "" {
			shown.EndedEarly = ""
		}
		sw := summaryWidth(width) // fit.go
		var sum strings.Builder
		sum.WriteString(display.SummaryWith(&shown, cs, display.Style{Color: color, Width: sw}))
		sum.WriteString(cs.Summary())
		sum.WriteString(filesLine(cfg, t.Outcome.Denied, cs))
		if n := len(t.UserDenials); n > 0 {
			fmt.Fprintf(&sum, "You denied %s: %s\n", plural(n, "request"), termtext.Line(strings.Join(t.UserDenials, "; ")))
		}
		wd, _ := opts.Getwd()
		fmt.Fprint(opts.IO.ErrOut, fitSummary(sum.String(), wd, sw))
		if opts.IO.StdoutTTY { // the answer follows on the same screen
			fmt.Fprint(opts.IO.ErrOut, "\nFinal answer:\n")
		}
	}
	return res, nil
}

// suspendingAsker stops the live view's redraws while the user answers a permission question.
type suspendingAsker struct {
	asker permissions.Asker
	s     display.Suspender
}

func (a suspendingAsker) Ask(ctx context.Context, req permissions.AskRequest) (permissions.AskAnswer, error) {
	a.s.Suspend()
	defer a.s.Resume()
	return a.asker.Ask(ctx, req)
}

// say prints a line on stderr at once, around the live view's redraws (which would otherwise
// draw over it).
func say(d display.Display, w io.Writer, line string) {
	if s, ok := d.(display.Suspender); ok {
		s.Suspend()
		defer s.Resume()
	}
	fmt.Fprintln(w, line)
}
