package cmd

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/term"
)

// lineEditor reads interactive tasks on a terminal with line editing and history (up/down
// arrows recall earlier tasks), using x/term's Terminal. The terminal is in raw mode only while
// a line is typed, so turns, permission prompts and Ctrl-C work as usual in between. Ctrl-C or
// Ctrl-D at the prompt leave.
type lineEditor struct {
	t       *term.Terminal
	makeRaw func() (restore func(), err error)
}

// newLineEditor returns nil unless in is a terminal.
func newLineEditor(in io.Reader, out io.Writer, prompt string) *lineEditor {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	fd := int(f.Fd())
	return &lineEditor{
		t: term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{f, out}, prompt),
		makeRaw: func() (func(), error) {
			old, err := term.MakeRaw(fd)
			if err != nil {
				return nil, err
			}
			return func() { _ = term.Restore(fd, old) }, nil
		},
	}
}

// readLine has readLine's contract: ok is false at end of input (Ctrl-D, Ctrl-C); ctx's error
// when it is cancelled first.
func (e *lineEditor) readLine(ctx context.Context) (line string, ok bool, err error) {
	restore, err := e.makeRaw()
	if err != nil {
		return "", false, err
	}
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := e.t.ReadLine()
		ch <- result{s, err}
	}()
	select {
	case <-ctx.Done():
		restore()
		return "", false, ctx.Err()
	case r := <-ch:
		restore()
		switch {
		case r.err == nil, errors.Is(r.err, term.ErrPasteIndicator):
			return r.s, true, nil
		case errors.Is(r.err, io.EOF):
			return "", false, nil
		default:
			return "", false, r.err
		}
	}
}
