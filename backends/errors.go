package backends

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/massgen-go/massgen/internal/termtext"
)

// ErrEndedEarly is the cause of a model call whose reply stopped before the protocol's end
// marker (finish_reason or [DONE], response.completed, message_stop, a finish reason) on every
// attempt: what arrived is not the whole reply and must not be taken as one. Test with
// errors.Is; the *Error that carries it says more.
var ErrEndedEarly = errors.New("the reply ended early")

// ErrorKind says what went wrong with a model call.
type ErrorKind int

const (
	// KindEndedEarly: the stream stopped before the protocol's end marker (ErrEndedEarly).
	KindEndedEarly ErrorKind = iota + 1
	// KindInvalidReply: the provider sent something that is not its protocol (invalid JSON).
	KindInvalidReply
	// KindEmptyReply: a complete reply with nothing in it (no choices, a blocked prompt).
	KindEmptyReply
	// KindAuth: the key was refused (HTTP 401 or 403).
	KindAuth
	// KindRateLimited: HTTP 429, or a rate-limit error inside the stream.
	KindRateLimited
	// KindServer: the provider failed (HTTP 5xx, 408, 409, overloaded).
	KindServer
	// KindRejected: the provider refused the request (another 4xx).
	KindRejected
	// KindNetwork: the connection failed before an answer (refused, reset, dropped).
	KindNetwork
	// KindProvider: an error the provider reported inside the stream.
	KindProvider
)

// Error is a failed model call. Error() is one sentence naming the provider, the model and the
// cause, fit for the user; Unwrap gives the underlying error (SDK, decoder, network) for logs.
type Error struct {
	Provider string
	Model    string
	Kind     ErrorKind
	// StatusCode is the HTTP status, when there was one.
	StatusCode int
	// Retries is how many times the call was retried before giving up.
	Retries int
	// Message is the cause in words, without the provider and model.
	Message string
	// Err is the underlying error.
	Err error
}

func (e *Error) Error() string {
	who := e.Provider
	if e.Model != "" {
		who += " " + e.Model
	}
	return who + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrEndedEarly) true for a reply that ended early.
func (e *Error) Is(target error) bool { return target == ErrEndedEarly && e.Kind == KindEndedEarly }

// failure is one attempt's error, classified: what it was, whether another attempt may help,
// and how long the provider asked us to wait.
type failure struct {
	kind      ErrorKind
	retryable bool
	status    int
	// wait is the provider's Retry-After hint (0: none).
	wait time.Duration
	// detail is the cause in words (without retry counts).
	detail string
	err    error
}

func (f *failure) Error() string {
	if f.err != nil && f.detail == "" {
		return f.err.Error()
	}
	return f.detail
}

func (f *failure) Unwrap() error { return f.err }

// endedEarly is a stream that stopped before its end marker. what names the missing marker; tap
// may say why (a cut connection).
func endedEarly(what string, tap *streamTap) *failure {
	if f := notStreamed(tap); f != nil {
		return f
	}
	detail := "the stream closed before " + what
	var cause error
	if tap != nil {
		if err := tap.readError(); err != nil {
			cause = err
			detail = fmt.Sprintf("the connection was cut before %s (%s)", what, shortCause(err))
		}
	}
	if cause == nil {
		cause = errors.New(detail)
	}
	return &failure{kind: KindEndedEarly, retryable: true, detail: detail, err: cause}
}

// notStreamed reports a server that ignored "stream" and answered with another kind of body,
// which no retry changes (nil when the answer was an event stream, or unknown).
func notStreamed(tap *streamTap) *failure {
	if tap == nil {
		return nil
	}
	_, h := tap.response()
	ct := h.Get("Content-Type")
	if ct == "" || strings.Contains(strings.ToLower(ct), "text/event-stream") {
		return nil
	}
	detail := fmt.Sprintf("the provider did not stream its reply (it answered with Content-Type %s)", oneLine(ct))
	return &failure{kind: KindInvalidReply, detail: detail, err: errors.New(detail)}
}

// invalidJSON is a stream event that did not decode. event is the 0-based index of the event
// among those the SDK decodes; the tap turns it into a line number.
func invalidJSON(err error, tap *streamTap, event int) *failure {
	detail := "the provider sent a reply that is not valid JSON"
	if line := tap.eventLine(event); line > 0 {
		detail += fmt.Sprintf(" (line %d of the stream)", line)
	}
	return &failure{kind: KindInvalidReply, retryable: true, detail: detail, err: err}
}

// isDecodeError reports a JSON decoding failure anywhere in err's chain.
func isDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// classify turns an attempt's error into a failure. Errors already classified pass through;
// *HTTPStatusError is judged by its status; network errors are transient.
func classify(err error, keyHint string) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	var se *HTTPStatusError
	if errors.As(err, &se) {
		return statusFailure(se, keyHint)
	}
	if isDecodeError(err) {
		return &failure{kind: KindInvalidReply, retryable: true, detail: "the provider sent a reply that is not valid JSON", err: err}
	}
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ue) || errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		host := ""
		if ue != nil {
			if u, perr := url.Parse(ue.URL); perr == nil {
				host = u.Host
			}
		}
		detail := "the connection to the provider failed"
		if host != "" {
			detail = "the connection to " + host + " failed"
		}
		return &failure{kind: KindNetwork, retryable: true, detail: detail + " (" + shortCause(err) + ")", err: err}
	}
	return &failure{kind: KindProvider, detail: "the call failed: " + oneLine(err.Error()), err: err}
}

// statusFailure describes an HTTP error answer.
func statusFailure(se *HTTPStatusError, keyHint string) *failure {
	code := se.StatusCode
	says := ""
	if m := providerMessage(se.Body); m != "" {
		says = "; the provider says: " + m
	}
	f := &failure{status: code, wait: se.RetryAfter, retryable: se.Retryable(), err: se}
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		f.kind = KindAuth
		what := "authentication failed"
		if code == http.StatusForbidden {
			what = "access denied"
		}
		f.detail = fmt.Sprintf("%s (HTTP %d): check %s%s", what, code, keyHint, says)
	case code == http.StatusTooManyRequests:
		f.kind = KindRateLimited
		f.detail = fmt.Sprintf("rate limited (HTTP %d)%s", code, says)
	case retryableStatus(code):
		f.kind = KindServer
		f.detail = fmt.Sprintf("the provider failed (HTTP %d %s)%s", code, statusText(code), says)
	case code == http.StatusNotFound:
		f.kind = KindRejected
		f.detail = fmt.Sprintf("not found (HTTP 404): check the model name and base_url%s", says)
	default:
		f.kind = KindRejected
		f.detail = fmt.Sprintf("the provider rejected the request (HTTP %d %s)%s", code, statusText(code), says)
	}
	return f
}

func statusText(code int) string {
	if code == 529 {
		return "Overloaded"
	}
	return http.StatusText(code)
}

// retriesSuffix says how often a call was retried.
func retriesSuffix(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " after 1 retry"
	}
	return fmt.Sprintf(" after %d retries", n)
}

// finalError is the error a call returns after its last attempt failed with f.
func finalError(provider, model string, f *failure, retries int) *Error {
	msg := f.detail
	if f.kind == KindEndedEarly {
		msg = ErrEndedEarly.Error() + ": " + f.detail
	}
	// The retry count goes right after the headline, before what the provider says.
	if head, rest, ok := strings.Cut(msg, "; the provider says: "); ok {
		msg = head + retriesSuffix(retries) + "; the provider says: " + rest
	} else {
		msg += retriesSuffix(retries)
	}
	return &Error{Provider: provider, Model: model, Kind: f.kind, StatusCode: f.status, Retries: retries, Message: msg, Err: f}
}

// providerMessage extracts the human message from an error body (the APIs' JSON shapes, or
// plain text) as one short line.
func providerMessage(body string) string {
	body = strings.TrimSpace(body)
	if body == "" {
		return ""
	}
	var shapes struct {
		Message string `json:"message"`
		Error   any    `json:"error"`
	}
	if json.Unmarshal([]byte(body), &shapes) == nil {
		switch e := shapes.Error.(type) {
		case string:
			return oneLine(e)
		case map[string]any:
			if m, ok := e["message"].(string); ok && m != "" {
				return oneLine(m)
			}
		}
		if shapes.Message != "" {
			return oneLine(shapes.Message)
		}
	}
	return oneLine(body)
}

// oneLine makes provider text safe and short for a one-line message (termtext.Squeeze): line
// breaks and runs of space become one space, control and format characters are escaped, and it
// is cut at 300 characters.
func oneLine(s string) string { return termtext.Squeeze(s, 300) }

// shortCause is the innermost error's text, e.g. "connection refused" or "unexpected EOF".
func shortCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	return oneLine(err.Error())
}
