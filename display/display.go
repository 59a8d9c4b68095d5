// Package display shows a run to the user: a live terminal view with one panel per agent, plain
// progress lines for logs and pipes, or nothing (silent). Displays only read orchestrator events;
// the final answer is printed by PrintResult to stdout, everything else goes to stderr.
package display

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/internal/vocab"
	"github.com/massgen-go/massgen/orchestrator"
)

// Mode is how a run is shown (its words and their aliases are declared once, in vocab.Display).
type Mode = vocab.Display

const (
	ModeAuto   = vocab.DisplayAuto   // live on a terminal, plain otherwise ("" too)
	ModeLive   = vocab.DisplayLive   // one redrawn panel per agent
	ModePlain  = vocab.DisplayPlain  // one line per event on stderr
	ModeSilent = vocab.DisplaySilent // only the final answer
)

// ParseMode reads --display (and MassGen's ui.display_type values).
func ParseMode(s string) (Mode, error) { return vocab.ParseDisplay(s) }

// Resolve picks the concrete mode: auto (and live) become plain when stderr is not a terminal.
func Resolve(m Mode, stderrTTY bool) Mode {
	switch m {
	case "", ModeAuto, ModeLive:
		if stderrTTY {
			return ModeLive
		}
		return ModePlain
	}
	return m
}

// Display consumes the event stream. Handle is called one event at a time; Close ends the view
// (the live view draws its last frame).
type Display interface {
	Handle(ev orchestrator.Event)
	Close()
}

// Suspender is implemented by displays that draw on the terminal (the live view): the CLI
// suspends them while it asks the user a permission question on the same terminal.
type Suspender interface {
	Suspend()
	Resume()
}

// Options configure a display.
type Options struct {
	// Width and Height are the terminal's size for the live view (0: 100 columns, 40 rows).
	Width, Height int
	// Color turns on the live view's colours (see ColorEnabled).
	Color bool
	// Now is the clock for elapsed times (nil: time.Now).
	Now func() time.Time
}

// New returns the display for a concrete mode (see Resolve), writing to errOut.
func New(m Mode, errOut io.Writer, o Options) Display {
	switch m {
	case ModeLive:
		return newLive(errOut, o)
	case ModePlain:
		return &plain{w: errOut}
	default:
		return silent{}
	}
}

type silent struct{}

func (silent) Handle(orchestrator.Event) {}
func (silent) Close()                    {}

// PrintResult prints the final answer to out (stdout), and, unless silent, a summary of the
// outcome to errOut (stderr): vote tally, timeline, winner, delivered files (read from cs, the
// turn's record of changes), tokens, and why it ended early.
func PrintResult(m Mode, out, errOut io.Writer, res *orchestrator.Result, cs *changes.ChangeSet) {
	if res == nil {
		return
	}
	if m != ModeSilent {
		fmt.Fprint(errOut, Summary(res, cs)+"\nFinal answer:\n")
	}
	answer := res.FinalAnswer
	if !strings.HasSuffix(answer, "\n") {
		answer += "\n"
	}
	fmt.Fprint(out, answer)
}

// Summary is the end-of-run report shown on stderr, without colours (see SummaryWith).
func Summary(res *orchestrator.Result, cs *changes.ChangeSet) string {
	return SummaryWith(res, cs, Style{})
}

// SummaryWith is the end-of-run report: the vote tally (a bar per answer), the timeline of
// answers, votes and restarts, the winner, why it ended early, the delivered files, the final
// workspace, the tokens and what they cost. The delivered files are read from cs, the turn's
// one record of what it changed (nil: nothing recorded, none shown). Everything from a model
// or the file system is cleaned (termtext).
func SummaryWith(res *orchestrator.Result, cs *changes.ChangeSet, st Style) string {
	var b strings.Builder
	b.WriteString("\n")
	o := OutcomeOf(res)
	for _, l := range append(TallyLines(o, st), TimelineLines(o, st)...) {
		b.WriteString(l + "\n")
	}
	if res.Winner != "" {
		fmt.Fprintf(&b, "Winner: %s\n", termtext.Line(res.Winner))
	}
	if res.EndedEarly != "" {
		fmt.Fprintf(&b, "Ended early: %s\n", termtext.Line(res.EndedEarly))
	}
	if res.Attempts > 1 {
		fmt.Fprintf(&b, "Attempts: %d (the winner's evaluation restarted the coordination %d times)\n", res.Attempts, res.Attempts-1)
	}
	if delivered := cs.Delivered(); len(delivered) > 0 {
		b.WriteString("Delivered:\n")
		for _, p := range delivered {
			fmt.Fprintf(&b, "  %s\n", termtext.Line(p))
		}
	}
	if res.FinalWorkspace != "" {
		fmt.Fprintf(&b, "Final workspace: %s\n", termtext.Line(res.FinalWorkspace))
	}
	for _, l := range SpendLines(SpendOf(res)) {
		b.WriteString(l + "\n")
	}
	return b.String()
}
