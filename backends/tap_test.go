package backends

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// The tap follows SSE lines whatever the read sizes: event start lines (skipping the types the
// SDK drops), [DONE], and the error that ended the body, which the reader never sees.
func TestStreamTap(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		skip       map[string]bool
		wantEvents []int
		wantDone   bool
	}{
		{"data-only events", "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n", nil, []int{1, 3}, true},
		{"named events", "event: a\ndata: {}\n\nevent: b\ndata: {}\n\n", nil, []int{2, 5}, false},
		{"skipped type", "event: ping\ndata: {}\n\nevent: b\ndata: {}\n\n", map[string]bool{"ping": true}, []int{5}, false},
		{"multi-line data counts once", "data: {\ndata: }\n\ndata: {}\n\n", nil, []int{1, 4}, false},
		{"CRLF", "data: {}\r\n\r\ndata: {}\r\n\r\n", nil, []int{1, 3}, false},
		{"comments and blank runs", ": hi\n\n\n\ndata: {}\n\n", nil, []int{5}, false},
		{"last line without newline", "data: {}\n\ndata: [DONE]", nil, []int{1}, true},
		{"[DONE] without space", "data:[DONE]\n\n", nil, nil, true},
	}
	for _, tt := range tests {
		readers := map[string]func(io.Reader) io.Reader{
			"one byte": iotest.OneByteReader, "half": iotest.HalfReader, "whole": func(r io.Reader) io.Reader { return r },
		}
		for readSize, reader := range readers {
			tap := &streamTap{skip: tt.skip}
			b := &tappedBody{rc: io.NopCloser(reader(strings.NewReader(tt.body))), tap: tap}
			got, err := io.ReadAll(b)
			if err != nil || string(got) != tt.body {
				t.Fatalf("%s: read %q, %v", tt.name, got, err)
			}
			if !reflect.DeepEqual(tap.events, tt.wantEvents) || tap.sawDone() != tt.wantDone {
				t.Errorf("%s (%s reads): events %v done %v, want %v %v", tt.name, readSize, tap.events, tap.sawDone(), tt.wantEvents, tt.wantDone)
			}
		}
	}
}

func TestStreamTapHidesReadErrors(t *testing.T) {
	cut := errors.New("connection reset")
	tap := &streamTap{}
	b := &tappedBody{rc: io.NopCloser(io.MultiReader(strings.NewReader("data: {}\n\ndata: {\"par"), iotest.ErrReader(cut))), tap: tap}
	got, err := io.ReadAll(b)
	if err != nil || string(got) != "data: {}\n\ndata: {\"par" {
		t.Fatalf("read %q, %v: the reader must see a clean end", got, err)
	}
	if !errors.Is(tap.readError(), cut) || tap.eventLine(1) != 3 {
		t.Errorf("readError %v, event line %d", tap.readError(), tap.eventLine(1))
	}
}

// BenchmarkStreamTap is the tap's cost on a Chat Completions stream (per MB read).
func BenchmarkStreamTap(b *testing.B) {
	var body bytes.Buffer
	for body.Len() < 1<<20 {
		body.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"some words "},"finish_reason":null}]}` + "\n\n")
	}
	data := body.Bytes()
	buf := make([]byte, 4096)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tb := &tappedBody{rc: io.NopCloser(bytes.NewReader(data)), tap: &streamTap{}}
		for {
			if _, err := tb.Read(buf); err != nil {
				break
			}
		}
	}
}
