package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/zap"
)

// defaultOpenAIBaseURL is OpenAI's API root.
const defaultOpenAIBaseURL = "https://api.openai.com/v1/"

// openaiClientOptions are the client options shared by the Responses and Chat Completions
// backends. They are built explicitly (no NewClient) so the SDK never reads OPENAI_* variables
// behind our back: an OpenAI key must not be sent to another provider's base_url.
func openaiClientOptions(o Options, baseURL, key string) []option.RequestOption {
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(baseURL),
		option.WithMaxRetries(maxRetries(o)),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	return opts
}

// openaiRetryNotifier is a per-request middleware that turns each retryable HTTP answer into an
// EventRetry (the SDK then retries it with backoff, honouring Retry-After).
func openaiRetryNotifier(o Options, provider string, onEvent func(Event)) option.RequestOption {
	attempt := 0
	limit := maxRetries(o)
	return option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(r)
		if res != nil && retryableStatus(res.StatusCode) && attempt < limit && res.Header.Get("x-should-retry") != "false" {
			attempt++
			msg := fmt.Sprintf("%s: HTTP %d, retrying (%d/%d)", provider, res.StatusCode, attempt, limit)
			if o.Logger != nil {
				o.Logger.Info("retrying model call", zap.String("agent", o.AgentID), zap.String("provider", provider), zap.Int("status", res.StatusCode), zap.Int("attempt", attempt))
			}
			if onEvent != nil {
				onEvent(Event{Kind: EventRetry, Text: msg})
			}
		}
		return res, err
	})
}

// apiError turns an SDK error into one that names the provider and keeps the HTTP status.
func apiError(provider, model string, err error) error {
	var ae *openai.Error
	if errors.As(err, &ae) {
		body := ae.Message
		if body == "" {
			body = strings.TrimSpace(ae.RawJSON())
		}
		se := &HTTPStatusError{StatusCode: ae.StatusCode, Body: body, Err: err}
		if ae.Response != nil {
			se.RetryAfter = RetryAfterHeader(ae.Response.Header)
		}
		return fmt.Errorf("%s (%s): %w", provider, model, se)
	}
	return fmt.Errorf("%s (%s): %w", provider, model, err)
}

// passthrough selects the backend's extra config keys that are request parameters of the API
// (allowed, with renames) and logs and drops the rest: MassGen-only keys such as
// enable_code_interpreter must never reach the API, which would reject them.
func passthrough(extra map[string]any, allowed map[string]string, logger *zap.Logger, provider string) []option.RequestOption {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var opts []option.RequestOption
	for _, k := range keys {
		v := normalizeYAML(extra[k])
		if k == "extra_body" {
			m, ok := v.(map[string]any)
			if !ok {
				logger.Warn("extra_body is not a mapping; ignored", zap.String("provider", provider))
				continue
			}
			sub := make([]string, 0, len(m))
			for sk := range m {
				sub = append(sub, sk)
			}
			sort.Strings(sub)
			for _, sk := range sub {
				opts = append(opts, option.WithJSONSet(sjsonKey(sk), m[sk]))
			}
			continue
		}
		name, ok := allowed[k]
		if !ok {
			logger.Debug("backend option not sent to the API", zap.String("provider", provider), zap.String("key", k))
			continue
		}
		opts = append(opts, option.WithJSONSet(sjsonKey(name), v))
	}
	return opts
}

// sjsonKey escapes sjson path syntax so a key is set literally.
func sjsonKey(k string) string {
	r := strings.NewReplacer(".", `\.`, "*", `\*`, "?", `\?`, "|", `\|`, "#", `\#`, "@", `\@`, ":", `\:`)
	return r.Replace(k)
}

// normalizeYAML turns map[any]any (older YAML decoders) into map[string]any, recursively, so
// the value marshals to JSON.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeYAML(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeYAML(e)
		}
		return out
	}
	return v
}

// toolParameters returns a tool's JSON schema, never nil (the APIs require an object schema).
func toolParameters(t ToolSpec) map[string]any {
	if t.Parameters == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return t.Parameters
}

// toolResultText is what a tool message says to the model; errors are marked as such.
func toolResultText(m Message) string {
	if m.IsError && !strings.HasPrefix(strings.ToLower(m.Content), "error") {
		return "Error: " + m.Content
	}
	return m.Content
}

// callArguments returns a call's arguments as a JSON object string ("{}" when empty).
func callArguments(tc ToolCall) string {
	if len(tc.Arguments) == 0 {
		return "{}"
	}
	return string(tc.Arguments)
}

// finishArguments validates streamed arguments; an empty string becomes {}. Invalid JSON is
// kept as a JSON string under "_raw" so the tool layer can report it instead of crashing.
func finishArguments(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(map[string]string{"_raw": s})
	return b
}

func boolExtra(extra map[string]any, key string) bool {
	b, _ := extra[key].(bool)
	return b
}

func stringExtra(extra map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := extra[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// streamError is a failure reported inside a stream (an error event, a failed response, a cut
// connection) rather than as an HTTP status, which the SDK does not retry.
type streamError struct {
	msg       string
	retryable bool
	err       error
}

func (e *streamError) Error() string { return e.msg }
func (e *streamError) Unwrap() error { return e.err }

// retryableStreamCode reports whether an error code sent inside a stream is worth a retry.
func retryableStreamCode(code string) bool {
	switch code {
	case "rate_limit_exceeded", "server_error", "internal_error", "overloaded", "server_overloaded", "service_unavailable", "timeout":
		return true
	}
	return false
}

// retryStream runs attempt again after a retryable stream failure, but only while the failed
// attempt has streamed nothing: a partial reply already shown must not be duplicated.
func retryStream(ctx context.Context, o Options, provider string, onEvent func(Event), attempt func(func(Event)) (*Response, error)) (*Response, error) {
	limit := maxRetries(o)
	for n := 0; ; n++ {
		emitted := false
		resp, err := attempt(func(e Event) {
			if e.Kind != EventRetry {
				emitted = true
			}
			if onEvent != nil {
				onEvent(e)
			}
		})
		var se *streamError
		if err == nil || emitted || ctx.Err() != nil || !errors.As(err, &se) || !se.retryable || n >= limit {
			return resp, err
		}
		wait := backoff(n)
		if o.Logger != nil {
			o.Logger.Info("retrying model call after a stream error", zap.String("agent", o.AgentID), zap.String("provider", provider), zap.Int("attempt", n+1), zap.Duration("wait", wait), zap.Error(err))
		}
		if onEvent != nil {
			onEvent(Event{Kind: EventRetry, Text: fmt.Sprintf("%s: %v, retrying (%d/%d)", provider, err, n+1, limit)})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
