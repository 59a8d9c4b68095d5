package backends

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestWithRetry(t *testing.T) {
	fast := func(code int) error { return &HTTPStatusError{StatusCode: code, RetryAfter: time.Millisecond} }
	tests := []struct {
		name      string
		errs      []error // returned by successive calls; past the end: nil
		max       int
		wantCalls int
		wantErr   bool
	}{
		{name: "429 then success", errs: []error{fast(429)}, wantCalls: 2},
		{name: "500, 503 then success", errs: []error{fast(500), fast(503)}, wantCalls: 3},
		{name: "wrapped status error is seen", errs: []error{errors.Join(errors.New("ctx"), fast(502))}, wantCalls: 2},
		{name: "400 is final", errs: []error{fast(400)}, wantCalls: 1, wantErr: true},
		{name: "plain error is final", errs: []error{errors.New("boom")}, wantCalls: 1, wantErr: true},
		{name: "gives up after MaxRetries", errs: []error{fast(429), fast(429), fast(429)}, max: 2, wantCalls: 3, wantErr: true},
		{name: "negative MaxRetries: no retry", errs: []error{fast(429)}, max: -1, wantCalls: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, notified := 0, 0
			err := withRetryNotify(testContext(t), Options{MaxRetries: tt.max}, func() error {
				calls++
				if calls <= len(tt.errs) {
					return tt.errs[calls-1]
				}
				return nil
			}, func(int, error, time.Duration) { notified++ })
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if notified != calls-1 {
				t.Errorf("notified %d times for %d calls", notified, calls)
			}
		})
	}
}

func TestWithRetryStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	calls := 0
	err := withRetry(ctx, Options{}, func() error {
		calls++
		cancel() // cancelled during the call; the long backoff must not be waited out
		return &HTTPStatusError{StatusCode: 429, RetryAfter: time.Hour}
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
