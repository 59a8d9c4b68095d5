package backends

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
)

// streamTap watches one attempt's HTTP response as the SDK reads it: the status and headers,
// where each server-sent event's data starts (so a decoding error can name its line), whether
// the Chat Completions terminator [DONE] came, and the read error that ended the body, if any.
//
// The SDKs hide all of this: [DONE] and a clean end look the same through them, and genai
// prints stream read errors with the standard logger. So the body the SDK reads never fails:
// a read error is recorded here and the SDK sees a clean end, after which the backend's
// end-marker check reports the reply as ended early, with this error as the cause.
type streamTap struct {
	mu     sync.Mutex
	status int
	header http.Header
	// skip names event types the SDK drops without decoding (Anthropic's ping), so event
	// indexes count only decoded events.
	skip map[string]bool

	line      int    // lines completed so far
	cur       []byte // start of the current line (enough to recognise a field and [DONE])
	curLen    int
	inEvent   bool   // the current event already has a data line
	eventType string // the current event's "event:" field
	events    []int  // 1-based line of each decoded event's first data line
	done      bool   // a "data: [DONE]" line was read
	err       error  // the read error that ended the body
}

type tapKey struct{}

// withTap returns a context whose HTTP requests are watched by tap.
func withTap(ctx context.Context, tap *streamTap) context.Context {
	return context.WithValue(ctx, tapKey{}, tap)
}

// tapClient returns an http.Client like hc (nil: a default one) whose transport installs the
// request context's tap on every response body.
func tapClient(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	if _, ok := c.Transport.(tapTransport); !ok {
		c.Transport = tapTransport{base: c.Transport}
	}
	return c
}

type tapTransport struct{ base http.RoundTripper }

func (t tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil || resp == nil {
		return resp, err
	}
	tap, _ := r.Context().Value(tapKey{}).(*streamTap)
	if tap == nil {
		tap = &streamTap{} // still keep read errors away from the SDKs' loggers
	}
	tap.mu.Lock()
	tap.status, tap.header = resp.StatusCode, resp.Header.Clone()
	tap.mu.Unlock()
	if resp.Body != nil {
		resp.Body = &tappedBody{rc: resp.Body, tap: tap}
	}
	return resp, nil
}

type tappedBody struct {
	rc  io.ReadCloser
	tap *streamTap
}

func (b *tappedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.tap.feed(p[:n])
	if err != nil {
		b.tap.feedEnd()
		if err != io.EOF {
			b.tap.fail(err)
			return n, io.EOF
		}
	}
	return n, err
}

func (b *tappedBody) Close() error { return b.rc.Close() }

const tapLineStart = 16 // "data: [DONE]" and "event: " fit

// feed follows SSE lines through the bytes read.
func (t *streamTap) feed(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if room := tapLineStart - len(t.cur); room > 0 {
			t.cur = append(t.cur, part[:min(room, len(part))]...)
		}
		t.curLen += len(part)
		if i < 0 {
			return
		}
		t.endLine()
		p = p[i+1:]
	}
}

// feedEnd completes a last line without a newline.
func (t *streamTap) feedEnd() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.curLen > 0 {
		t.endLine()
	}
}

// endLine records the line just completed (t.mu held).
func (t *streamTap) endLine() {
	t.line++
	line := bytes.TrimSuffix(t.cur, []byte("\r"))
	empty := t.curLen == 0 || t.curLen == 1 && len(line) == 0
	t.cur, t.curLen = t.cur[:0], 0
	switch {
	case empty:
		t.inEvent, t.eventType = false, ""
	case bytes.HasPrefix(line, []byte("event:")):
		t.eventType = string(bytes.TrimSpace(line[len("event:"):]))
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimSpace(line[len("data:"):])
		if bytes.Equal(v, []byte("[DONE]")) {
			t.done = true
			return
		}
		if !t.inEvent && !t.skip[t.eventType] {
			t.events = append(t.events, t.line)
		}
		t.inEvent = true
	}
}

func (t *streamTap) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
	}
}

// sawDone reports whether the stream sent [DONE].
func (t *streamTap) sawDone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done
}

// readError is the error that cut the body, if any.
func (t *streamTap) readError() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// eventLine is the line where the 0-based decoded event i starts (0: unknown).
func (t *streamTap) eventLine(i int) int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i < 0 || i >= len(t.events) {
		return 0
	}
	return t.events[i]
}

// response is the status and headers of the attempt's answer (0, nil before one came).
func (t *streamTap) response() (int, http.Header) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.header
}

// reset forgets the previous response, for another request in the same attempt.
func (t *streamTap) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status, t.header = 0, nil
	t.line, t.cur, t.curLen, t.inEvent, t.eventType = 0, t.cur[:0], 0, false, ""
	t.events, t.done, t.err = nil, false, nil
}
