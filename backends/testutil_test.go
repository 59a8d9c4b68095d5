package backends

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// testTimeout bounds every wait in this package's tests. A healthy test takes at most a couple
// of seconds (real retry backoff), so reaching it means something hangs: the test then fails
// with a message naming what it waited for, instead of stalling CI until go test's timeout.
const testTimeout = 30 * time.Second

// testContext is the context for a test's model calls: done when the test ends and after
// testTimeout, so a call that never returns fails the test instead of hanging it.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// receive waits for a value on ch, failing the test when none comes within testTimeout.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("no %s within %v", what, testTimeout)
		panic("unreachable")
	}
}

// awaitHangUp is a slow model: a handler calls it to block until the client goes away. It
// gives up after testTimeout (reporting it) so the server's Close, which waits for every
// handler, cannot hang.
//
// It reads the rest of the request body first: an HTTP/1 server only watches the connection,
// and so only cancels r.Context() when the client closes it, once the body has been read to
// the end (or discarded when the response header was flushed). A handler that waited on
// r.Context() with neither done waited forever, and so did the test (TestGeminiCancelMidStream
// before the handler flushed its header).
func awaitHangUp(t *testing.T, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	select {
	case <-r.Context().Done():
	case <-timer.C:
		t.Errorf("the client did not hang up within %v (%s %s)", testTimeout, r.Method, r.URL.Path)
	}
}

// wireRequest is one request a fake provider received.
type wireRequest struct {
	Method string
	// URL is the URL the client asked for (before a redirecting transport sent it to the
	// test server).
	URL    *url.URL
	Header http.Header
	Body   []byte
}

// JSON decodes the request body.
func (r wireRequest) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// wireServer is an httptest server speaking a provider's protocol. handle gets the 0-based
// number of the request; every request is recorded.
type wireServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []wireRequest
}

func newWireServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *wireServer {
	t.Helper()
	ws := &wireServer{}
	ws.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		orig := r.URL
		if h := r.Header.Get("X-Wire-Original-URL"); h != "" {
			orig, _ = url.Parse(h)
		} else {
			u := *r.URL
			u.Host = r.Host
			orig = &u
		}
		ws.mu.Lock()
		n := len(ws.reqs)
		ws.reqs = append(ws.reqs, wireRequest{Method: r.Method, URL: orig, Header: r.Header.Clone(), Body: body})
		ws.mu.Unlock()
		handle(w, r, n)
	}))
	t.Cleanup(ws.Close)
	return ws
}

func (ws *wireServer) requests() []wireRequest {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return append([]wireRequest(nil), ws.reqs...)
}

// redirectClient sends every request, whatever its host, to the test server, remembering the
// URL it was meant for (so preset base URLs can be checked without the network).
func (ws *wireServer) redirectClient() *http.Client {
	target, _ := url.Parse(ws.URL)
	return &http.Client{Transport: wireRoundTrip(func(r *http.Request) (*http.Response, error) {
		r2 := r.Clone(r.Context())
		r2.Header.Set("X-Wire-Original-URL", r.URL.String())
		r2.URL.Scheme = target.Scheme
		r2.URL.Host = target.Host
		r2.Host = target.Host
		return http.DefaultTransport.RoundTrip(r2)
	})}
}

type wireRoundTrip func(*http.Request) (*http.Response, error)

func (f wireRoundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// wireSSE writes Server-Sent Events, flushing each one.
type wireSSE struct {
	t *testing.T
	w http.ResponseWriter
}

func startWireSSE(t *testing.T, w http.ResponseWriter) *wireSSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &wireSSE{t: t, w: w}
}

// event writes "event: name" (omitted when empty) and "data: <json of v>" (v may be a string
// holding raw data such as [DONE]).
func (s *wireSSE) event(name string, v any) {
	var data []byte
	switch x := v.(type) {
	case string:
		data = []byte(x)
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			s.t.Errorf("marshal SSE data: %v", err)
			return
		}
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	s.w.(http.Flusher).Flush()
}

// wireJSONError answers with an API error body in OpenAI's format.
func wireJSONError(w http.ResponseWriter, status int, headers map[string]string, msg string) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil, "param": nil}})
}

// collect gathers a Generate call's events.
type wireEvents struct {
	mu     sync.Mutex
	events []Event
}

func (l *wireEvents) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *wireEvents) kinds(k EventKind) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func (l *wireEvents) text() string {
	var s string
	for _, e := range l.kinds(EventTextDelta) {
		s += e.Text
	}
	return s
}

// wireEnv is a LookupEnv over a fixed map (tests never read the real environment).
func wireEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// wireDig walks a decoded JSON value: keys for objects, ints for arrays.
func wireDig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// fastRetry is Options.retryWait for tests: retries without the real backoff.
func fastRetry(int) time.Duration { return time.Millisecond }
