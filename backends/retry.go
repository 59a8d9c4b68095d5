package backends

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// defaultMaxRetries is used when Options.MaxRetries is 0.
const defaultMaxRetries = 3

// Backoff bounds for withRetry when the server gives no Retry-After.
const (
	retryBaseDelay = 500 * time.Millisecond
	retryMaxDelay  = 8 * time.Second
)

// HTTPStatusError is a provider's HTTP error answer. Backends whose SDK has no retry loop wrap
// their errors in it so withRetry can tell retryable failures (429, 408, 409, 5xx) from others.
type HTTPStatusError struct {
	StatusCode int
	// Body is (the start of) the error body, for the message.
	Body string
	// RetryAfter is the server's Retry-After hint (0: none).
	RetryAfter time.Duration
	// Err is the underlying SDK error, if any.
	Err error
}

func (e *HTTPStatusError) Error() string {
	msg := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	} else if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *HTTPStatusError) Unwrap() error { return e.Err }

// Retryable reports whether the status is worth another try.
func (e *HTTPStatusError) Retryable() bool { return retryableStatus(e.StatusCode) }

func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout ||
		code == http.StatusConflict || code >= 500
}

// RetryAfterHeader parses Retry-After (seconds or HTTP date) and retry-after-ms from h.
func RetryAfterHeader(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if ms := h.Get("retry-after-ms"); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v >= 0 {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	if ra := h.Get("Retry-After"); ra != "" {
		if v, err := strconv.ParseFloat(ra, 64); err == nil && v >= 0 {
			return time.Duration(v * float64(time.Second))
		}
		if t, err := http.ParseTime(ra); err == nil {
			return max(time.Until(t), 0)
		}
	}
	return 0
}

// maxRetries turns Options.MaxRetries into a count (negative: none; 0: the default).
func maxRetries(o Options) int {
	switch {
	case o.MaxRetries < 0:
		return 0
	case o.MaxRetries == 0:
		return defaultMaxRetries
	}
	return o.MaxRetries
}

// withRetry calls fn until it succeeds, fails with a non-retryable error, the retries are used
// up or ctx is cancelled. Retryable errors are *HTTPStatusError with 429/408/409/5xx. The wait
// honours RetryAfter, else backs off exponentially with jitter. onRetry (may be nil) is told
// before each wait.
func withRetry(ctx context.Context, o Options, fn func() error) error {
	return withRetryNotify(ctx, o, fn, nil)
}

// withRetryNotify is withRetry that reports each retry through onRetry (for EventRetry).
func withRetryNotify(ctx context.Context, o Options, fn func() error, onRetry func(attempt int, err error, wait time.Duration)) error {
	n := maxRetries(o)
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var se *HTTPStatusError
		if !errors.As(err, &se) || !se.Retryable() || attempt >= n {
			return err
		}
		wait := se.RetryAfter
		if wait <= 0 || wait > time.Minute {
			wait = backoff(attempt)
		}
		if o.Logger != nil {
			o.Logger.Info("retrying model call", zap.String("agent", o.AgentID), zap.Int("attempt", attempt+1), zap.Duration("wait", wait), zap.Error(err))
		}
		if onRetry != nil {
			onRetry(attempt+1, err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// backoff is retryBaseDelay * 2^attempt, capped, minus up to 25% jitter.
func backoff(attempt int) time.Duration {
	d := retryBaseDelay << min(attempt, 10)
	if d > retryMaxDelay || d <= 0 {
		d = retryMaxDelay
	}
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}
