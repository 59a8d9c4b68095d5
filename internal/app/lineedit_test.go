package app

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"golang.org/x/term"
)

// TestLineEditorHistory types into x/term's Terminal as a terminal would (raw bytes, CR for
// Enter, ESC [ A for the up arrow); raw mode itself is stubbed out.
func TestLineEditorHistory(t *testing.T) {
	keys := "first task\r" + "\x1b[A\r" + "\x1b[A\x1b[A\r" + "x\x7fsecond\r" + "\x04"
	var out bytes.Buffer
	raws := 0
	e := &lineEditor{
		t: term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{strings.NewReader(keys), &out}, "massgen> "),
		makeRaw: func() (func(), error) { raws++; return func() { raws-- }, nil },
	}
	var got []string
	for {
		line, ok, err := e.readLine(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, line)
	}
	want := []string{"first task", "first task", "first task", "second"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", got, want)
	}
	if raws != 0 {
		t.Errorf("raw mode left on (%d)", raws)
	}
	if !strings.Contains(out.String(), "massgen> ") {
		t.Errorf("no prompt drawn: %q", out.String())
	}
}

func TestLineEditorCancelled(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	restored := false
	e := &lineEditor{
		t: term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{pr, io.Discard}, "> "),
		makeRaw: func() (func(), error) { return func() { restored = true }, nil },
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok, err := e.readLine(ctx); ok || err == nil || !restored {
		t.Errorf("cancelled read: ok=%v err=%v restored=%v", ok, err, restored)
	}
}

// TestLineEditorCtrlCvsCtrlD: x/term ends the line with io.EOF for both keys; Ctrl-C must come
// back as a cancellation (exit 130) and Ctrl-D as a plain end of input (exit 0).
func TestLineEditorCtrlCvsCtrlD(t *testing.T) {
	tests := []struct {
		name    string
		keys    string
		wantErr error
	}{
		{"ctrl-d leaves", "\x04", nil},
		{"ctrl-c cancels", "half typed\x03", context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cr := &ctrlCReader{r: strings.NewReader(tc.keys)}
			e := &lineEditor{
				ctrlC: cr,
				t: term.NewTerminal(struct {
					io.Reader
					io.Writer
				}{cr, io.Discard}, "> "),
				makeRaw: func() (func(), error) { return func() {}, nil },
			}
			_, ok, err := e.readLine(context.Background())
			if ok || err != tc.wantErr {
				t.Fatalf("ok=%v err=%v, want ok=false err=%v", ok, err, tc.wantErr)
			}
		})
	}
}
