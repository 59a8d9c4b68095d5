package backends

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestCallerRetries(t *testing.T) {
	fast := func(code int) error { return &HTTPStatusError{StatusCode: code, RetryAfter: time.Millisecond} }
	tests := []struct {
		name      string
		errs      []error // returned by successive attempts; past the end: success
		max       int
		wantCalls int
		wantKind  ErrorKind // 0: success
		wantMsg   string
	}{
		{name: "429 then success", errs: []error{fast(429)}, wantCalls: 2},
		{name: "500, 503 then success", errs: []error{fast(500), fast(503)}, wantCalls: 3},
		{name: "wrapped status error is seen", errs: []error{errors.Join(errors.New("ctx"), fast(502))}, wantCalls: 2},
		{name: "ended early then success", errs: []error{endedEarly("message_stop", nil)}, wantCalls: 2},
		{name: "400 is final", errs: []error{fast(400)}, wantCalls: 1, wantKind: KindRejected, wantMsg: "claude m: the provider rejected the request (HTTP 400 Bad Request)"},
		{name: "401 names the key", errs: []error{&HTTPStatusError{StatusCode: 401, Body: `{"error":{"message":"invalid x-api-key"}}`}}, wantCalls: 1, wantKind: KindAuth,
			wantMsg: "claude m: authentication failed (HTTP 401): check ANTHROPIC_API_KEY; the provider says: invalid x-api-key"},
		{name: "plain error is final", errs: []error{errors.New("boom")}, wantCalls: 1, wantKind: KindProvider},
		{name: "gives up after MaxRetries", errs: []error{fast(429), fast(429), fast(429)}, max: 2, wantCalls: 3, wantKind: KindRateLimited,
			wantMsg: "claude m: rate limited (HTTP 429) after 2 retries"},
		{name: "ended early every time", errs: []error{endedEarly("message_stop", nil), endedEarly("message_stop", nil)}, max: 1, wantCalls: 2, wantKind: KindEndedEarly,
			wantMsg: "claude m: the reply ended early: the stream closed before message_stop after 1 retry"},
		{name: "negative MaxRetries: no retry", errs: []error{fast(429)}, max: -1, wantCalls: 1, wantKind: KindRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCaller(Options{MaxRetries: tt.max, retryWait: func(int) time.Duration { return time.Millisecond }}, "claude", "m", "ANTHROPIC_API_KEY")
			calls, notified := 0, 0
			resp, err := c.generate(testContext(t), func(e Event) {
				if e.Kind == EventRetry {
					notified++
				}
			}, func(ctx context.Context, tap *streamTap, emit func(Event)) (*Response, error) {
				calls++
				if calls <= len(tt.errs) {
					return nil, tt.errs[calls-1]
				}
				return &Response{Text: "ok"}, nil
			})
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if notified != calls-1 {
				t.Errorf("notified %d times for %d calls", notified, calls)
			}
			if tt.wantKind == 0 {
				if err != nil || resp.Text != "ok" {
					t.Fatalf("resp = %+v, err = %v", resp, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != tt.wantKind {
				t.Fatalf("err = %v, want an *Error of kind %d", err, tt.wantKind)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Errorf("message = %q\nwant      %q", err.Error(), tt.wantMsg)
			}
			if errors.Is(err, ErrEndedEarly) != (tt.wantKind == KindEndedEarly) {
				t.Errorf("errors.Is(ErrEndedEarly) wrong for %v", err)
			}
			if errors.Unwrap(err) == nil {
				t.Errorf("the cause is not kept")
			}
		})
	}
}

func TestCallerStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	calls := 0
	c := newCaller(Options{}, "openai", "m", "OPENAI_API_KEY")
	_, err := c.generate(ctx, nil, func(context.Context, *streamTap, func(Event)) (*Response, error) {
		calls++
		cancel() // cancelled during the call; the long wait must not be waited out
		return nil, &HTTPStatusError{StatusCode: 429, RetryAfter: time.Hour}
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err = %v after %d calls", err, calls)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After-Ms": {"150"}}, 150 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	}
	for _, tt := range tests {
		if got := RetryAfterHeader(tt.h); got != tt.want {
			t.Errorf("RetryAfterHeader(%v) = %v, want %v", tt.h, got, tt.want)
		}
	}
	past := http.Header{"Retry-After": {time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}}
	if got := RetryAfterHeader(past); got != 0 {
		t.Errorf("date in the past = %v", got)
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	if d := backoff(0); d > retryBaseDelay || d < retryBaseDelay*3/4 {
		t.Errorf("backoff(0) = %v", d)
	}
	if d := backoff(30); d > retryMaxDelay || d < retryMaxDelay*3/4 {
		t.Errorf("backoff(30) = %v", d)
	}
}
