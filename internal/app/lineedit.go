package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/term"
)

// lineEditor reads interactive tasks on a terminal with line editing and history (up/down
// arrows recall earlier tasks), using x/term's Terminal. The terminal is in raw mode only while
// a line is typed, so turns, permission prompts and Ctrl-C work as usual in between. Ctrl-C or
// Ctrl-D at the prompt leave.
type lineEditor struct {
	t       *term.Terminal
	makeRaw func() (restore func(), err error)
	// ctrlC is set when a Ctrl-C byte came through: x/term reports Ctrl-C and Ctrl-D alike as
	// io.EOF, but Ctrl-C must exit 130 like everywhere else.
	ctrlC *ctrlCReader
}

// ctrlCReader passes bytes through and notes whether a Ctrl-C (0x03) was among them.
type ctrlCReader struct {
	r    io.Reader
	seen atomic.Bool
}

func (c *ctrlCReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if bytes.IndexByte(p[:n], 3) >= 0 {
		c.seen.Store(true)
	}
	return n, err
}

// newLineEditor returns nil unless in is a terminal.
func newLineEditor(in io.Reader, out io.Writer, prompt string) *lineEditor {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	fd := int(f.Fd())
	cr := &ctrlCReader{r: f}
	return &lineEditor{
		ctrlC: cr,
		t: term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{cr, out}, prompt),
		makeRaw: func() (func(), error) {
			old, err := term.MakeRaw(fd)
			if err != nil {
				return nil, err
			}
			return func() { _ = term.Restore(fd, old) }, nil
		},
	}
}

// readLine has readLine's contract: ok is false at end of input (Ctrl-D); ctx's error when it
// is cancelled first; context.Canceled for Ctrl-C at the prompt (exit 130).
func (e *lineEditor) readLine(ctx context.Context) (line string, ok bool, err error) {
	restore, err := e.makeRaw()
	if err != nil {
		return "", false, err
	}
	if e.ctrlC != nil {
		e.ctrlC.seen.Store(false)
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
		case errors.Is(r.err, io.EOF) && e.ctrlC != nil && e.ctrlC.seen.Load():
			return "", false, context.Canceled
		case errors.Is(r.err, io.EOF):
			return "", false, nil
		default:
			return "", false, r.err
		}
	}
}
