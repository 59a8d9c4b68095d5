package backends

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// defaultMaxRetries is used when Options.MaxRetries is 0.
const defaultMaxRetries = 3

// Backoff bounds for caller.generate when the server gives no Retry-After.
const (
	retryBaseDelay = 500 * time.Millisecond
	retryMaxDelay  = 8 * time.Second
)

// HTTPStatusError is a provider's HTTP error answer. Backends whose SDK has no retry loop wrap
// their errors in it so caller.generate can tell retryable failures (429, 408, 409, 5xx) from others.
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

// caller is what every call of one backend shares: its identity for messages and logs, and
// its retry settings.
type caller struct {
	o        Options
	provider string
	model    string
	// keyHint names where the key comes from ("OPENAI_API_KEY", "api_key in the config") for
	// authentication errors.
	keyHint string
	log     *zap.Logger
}

func newCaller(o Options, provider, model, keyHint string) caller {
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return caller{o: o, provider: provider, model: model, keyHint: keyHint,
		log: log.With(zap.String("backend", provider), zap.String("agent", o.AgentID))}
}

// attemptFunc makes one request. It streams through emit, and returns the complete reply or an
// error: a *failure, an *HTTPStatusError, or anything classify understands. Its context carries
// tap, which watches the HTTP response.
type attemptFunc func(ctx context.Context, tap *streamTap, emit func(Event)) (*Response, error)

// generate runs attempt until it returns a complete reply, fails for good, the retries are used
// up, or ctx ends. Transient failures (429, 408, 409, 5xx, a stream that ended early or sent
// invalid JSON, a network error) are retried after the provider's Retry-After, else an
// exponential backoff; each retry is reported as an EventRetry, after which the text and tool
// calls streamed by the failed attempt are void. The final error is an *Error in words.
func (c caller) generate(ctx context.Context, onEvent func(Event), attempt attemptFunc) (*Response, error) {
	emit := func(ev Event) {
		if onEvent != nil {
			onEvent(ev)
		}
	}
	n := maxRetries(c.o)
	for try := 0; ; try++ {
		tap := &streamTap{}
		resp, err := attempt(withTap(ctx, tap), tap, emit)
		if err == nil && ctx.Err() == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", c.provider, c.model, ctx.Err())
		}
		f := classify(err, c.keyHint)
		status, header := tap.response()
		if f.status != 0 && f.status == status && header.Get("x-should-retry") == "false" {
			f.retryable = false
		}
		if !f.retryable || try >= n {
			c.log.Warn("model call failed", zap.String("model", c.model), zap.Int("retries", try), zap.String("reason", f.detail), zap.Error(f.err))
			return nil, finalError(c.provider, c.model, f, try)
		}
		wait := f.wait
		if wait <= 0 && f.status != 0 && f.status == status {
			wait = RetryAfterHeader(header)
		}
		if wait <= 0 || wait > time.Minute {
			wait = c.backoff(try)
		}
		c.log.Info("retrying model call", zap.String("model", c.model), zap.Int("attempt", try+1), zap.Duration("wait", wait), zap.String("reason", f.detail), zap.Error(f.err))
		emit(Event{Kind: EventRetry, Text: fmt.Sprintf("%s: %s; retry %d of %d in %s", c.provider, f.detail, try+1, n, wait.Round(time.Millisecond))})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s %s: %w", c.provider, c.model, ctx.Err())
		case <-t.C:
		}
	}
}

func (c caller) backoff(attempt int) time.Duration {
	if c.o.retryWait != nil {
		return c.o.retryWait(attempt)
	}
	return backoff(attempt)
}

// backoff is retryBaseDelay * 2^attempt, capped, minus up to 25% jitter.
func backoff(attempt int) time.Duration {
	d := retryBaseDelay << min(attempt, 10)
	if d > retryMaxDelay || d <= 0 {
		d = retryMaxDelay
	}
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}
