package app

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/display"
	"github.com/massgen-go/massgen/orchestrator"
)

// --output json: stdout carries JSON Lines (display.JSON reads the orchestrator's events) and
// each turn ends with its files_changed and result lines; human progress stays on stderr.

var outputModes = []string{"text", "json"}

// RunOutput is runRun with --output checked; in JSON mode a run that fails before any turn
// (a bad config, no session to continue) still ends with a result line.
func RunOutput(ctx context.Context, opts *RunOptions) error {
	if opts.Output == "" {
		opts.Output = "text"
	}
	if !slices.Contains(outputModes, opts.Output) {
		return cmdutil.FlagErrorf("--output %q: want one of %s", opts.Output, strings.Join(outputModes, ", "))
	}
	// A write to stdout that fails (a closed pipe, a full disk) fails the run, once its turn is
	// saved: see turn and stdoutError.
	streams := *opts.IO
	opts.stdout = &stdoutWriter{w: streams.Out}
	streams.Out = opts.stdout
	opts.IO = &streams
	if opts.Output != "json" {
		return runRun(ctx, opts)
	}
	opts.jsonOut = display.NewJSON(opts.IO.Out)
	err := BySignal(ctx, runRun(ctx, opts))
	if err != nil && opts.jsonOut.Results() == 0 {
		opts.jsonOut.Result(display.JSONResult{ExitCode: cmdutil.CodeOf(err), Error: errorText(err)})
	}
	if werr := stdoutError(opts); err == nil && werr != nil { // the result line itself
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("writing the result to stdout: %w", werr))
	}
	return err
}

// stdoutWriter is stdout remembering the first write that failed.
type stdoutWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	return n, err
}

// stdoutError is the first error writing stdout in this run (nil: none).
func stdoutError(opts *RunOptions) error {
	if opts.stdout == nil {
		return nil
	}
	opts.stdout.mu.Lock()
	defer opts.stdout.mu.Unlock()
	return opts.stdout.err
}

// newJSONOutput is the invocation's JSON display (nil without --output json).
func newJSONOutput(opts *RunOptions) *display.JSON { return opts.jsonOut }

// emitResult writes a turn's files_changed and result lines (--output json only).
func emitResult(st *runState, t *Turn, res *orchestrator.Result, err error) {
	if st.json == nil {
		return
	}
	st.json.FilesChanged(t.Changes)
	r := display.JSONResult{
		ExitCode: cmdutil.CodeOf(err), FilesChanged: t.Changes.FilesChanged(), DeniedByUser: t.UserDenials,
	}
	if err != nil {
		r.Error = errorText(err)
	}
	if res != nil {
		r.FinalAnswer, r.Winner, r.Votes = res.FinalAnswer, res.Winner, res.Votes
		display.JSONSpend(&r, res)
	}
	if t.Outcome != nil {
		r.DeniedChanges = t.Outcome.Denied.Total()
	}
	if r.Timeout = jsonTimeout(st.cfg, res); r.Timeout != nil && err != nil && res.FinalAnswer == "" {
		r.Error = timeoutNoAnswer(st.cfg) // reported on stderr already: the error carries no text
	}
	if s := st.session; s != nil && s.cur != nil && t.Saved > 0 {
		r.Session, r.Turn = s.cur.ID, t.Saved
	}
	st.json.Result(r)
}

// errorText is an error's message (the reason an error already reported carries; "exit N" for
// one without any).
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprint(err)
}
