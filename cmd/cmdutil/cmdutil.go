// Package cmdutil holds what every command shares: injected I/O streams, the Factory that
// commands take their dependencies from (a lazy config loader, an agent's environment), usage
// errors, and exit codes carried by errors.
package cmdutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// IOStreams are the command's standard streams, injected so commands are testable.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// StdinTTY / StdoutTTY / StderrTTY say whether each stream is a terminal.
	StdinTTY  bool
	StdoutTTY bool
	StderrTTY bool
}

// System returns the process's real streams.
func System() *IOStreams {
	isTTY := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY: isTTY(os.Stdin), StdoutTTY: isTTY(os.Stdout), StderrTTY: isTTY(os.Stderr),
	}
}

// Factory carries the dependencies commands need. Tests build one with fake streams. Nothing is
// loaded until a command asks: see LoadConfig and OpenAgent.
type Factory struct {
	IO *IOStreams
	// Getwd returns the directory relative paths resolve against.
	Getwd func() (string, error)
	// LookupEnv reads the environment (tests inject a map).
	LookupEnv func(string) (string, bool)
	// HomeDir is the user's home (for ~/.massgen/.env and ~ expansion).
	HomeDir func() (string, error)
	// LookPath finds programs such as MCP server commands (nil: exec.LookPath).
	LookPath func(string) (string, error)
}

// NewFactory returns a Factory over the real process.
func NewFactory() *Factory {
	return &Factory{IO: System(), Getwd: os.Getwd, LookupEnv: os.LookupEnv, HomeDir: os.UserHomeDir}
}

// Exit codes used across commands (README.md, "Exit codes"). When several apply to a run, the
// most severe wins: cancelled, failed, usage, busy, partial, budget, timeout.
const (
	ExitOK         = 0   // done
	ExitFailure    = 1   // failed: no answer, a denial or a failed operation
	ExitUsage      = 2   // bad flags, bad config, bad input (a task over the size limit)
	ExitTimeout    = 3   // the overall timeout was reached; the best answer so far was presented
	ExitPartial    = 4   // an answer was given, but an agent failed or massgen's state was not all saved
	ExitBusy       = 5   // another massgen run holds the project (.massgen/run.lock)
	ExitBudget     = 6   // the budget (--max-cost, orchestrator.max_cost_usd) was spent; the best answer so far was presented
	ExitHangup     = 129 // cancelled by SIGHUP (the terminal closed): 128 + the signal, by convention
	ExitCanceled   = 130 // cancelled by Ctrl-C (SIGINT)
	ExitTerminated = 143 // cancelled by SIGTERM
)

// severity ranks exit codes for Worst: a higher rank wins; unknown non-zero codes rank as failed.
func severity(code int) int {
	switch code {
	case ExitOK:
		return 0
	case ExitTimeout:
		return 1
	case ExitBudget:
		return 2
	case ExitPartial:
		return 3
	case ExitBusy:
		return 4
	case ExitUsage:
		return 5
	case ExitCanceled, ExitHangup, ExitTerminated:
		return 7
	default:
		return 6
	}
}

// Worst returns the most severe of codes (ExitOK when none is given).
func Worst(codes ...int) int {
	w := ExitOK
	for _, c := range codes {
		if severity(c) > severity(w) {
			w = c
		}
	}
	return w
}

// ExitError carries the process exit code with the error that caused it.
type ExitError struct {
	Code int
	Err  error
	// Reported says the command already told the user about Err (on stderr, in its own words):
	// it is not printed again, but it is the reason --output json's result gives.
	Reported bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return Meaning(e.Code)
	}
	return e.Err.Error()
}

// Meaning is what exit code means, in words: the reason of an ExitError that carries none.
func Meaning(code int) string {
	switch code {
	case ExitOK:
		return "done"
	case ExitFailure:
		return "failed (exit 1)"
	case ExitUsage:
		return "bad flags, config or input (exit 2)"
	case ExitTimeout:
		return "the overall timeout was reached (exit 3)"
	case ExitPartial:
		return "partial: an agent failed or not everything was saved (exit 4)"
	case ExitBusy:
		return "another massgen run holds the project (exit 5)"
	case ExitBudget:
		return "the budget was spent (exit 6)"
	case ExitHangup:
		return "cancelled by SIGHUP (exit 129)"
	case ExitCanceled:
		return "cancelled (exit 130)"
	case ExitTerminated:
		return "cancelled by SIGTERM (exit 143)"
	}
	return fmt.Sprintf("exit %d", code)
}
func (e *ExitError) Unwrap() error { return e.Err }

// WithCode wraps err so that the process exits with code.
func WithCode(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Silent is an ExitError with nothing more to print (the command already reported).
func Silent(code int) error { return &ExitError{Code: code} }

// Reported is an ExitError whose err the command already reported: nothing more is printed, and
// err stays the reason (for --output json).
func Reported(code int, err error) error { return &ExitError{Code: code, Err: err, Reported: true} }

// ToPrint reports whether err still needs printing ("Error: ...") when the command ends.
func ToPrint(err error) bool {
	var ee *ExitError
	return err != nil && (!errors.As(err, &ee) || ee.Err != nil && !ee.Reported)
}

// CodeOf returns the exit code an error should produce.
func CodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		return ExitUsage
	}
	return ExitFailure
}

// TestStreams returns streams over buffers, stdin reading in, none of them a terminal.
func TestStreams(in string) (ios *IOStreams, stdout, stderr *bytes.Buffer) {
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: strings.NewReader(in), Out: stdout, ErrOut: stderr}, stdout, stderr
}
