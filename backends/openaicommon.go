package backends

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
)

// defaultOpenAIBaseURL is OpenAI's API root.
const defaultOpenAIBaseURL = "https://api.openai.com/v1/"

// openaiClientOptions are the client options shared by the Responses and Chat Completions
// backends. They are built explicitly (no NewClient) so the SDK never reads OPENAI_* variables
// behind our back: an OpenAI key must not be sent to another provider's base_url.
func openaiClientOptions(o Options, baseURL, key string) []option.RequestOption {
	hc := tapClient(o.HTTPClient)
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(baseURL),
		// Retries are caller.generate's: it also retries replies that end early, and reports
		// every retry as an EventRetry.
		option.WithMaxRetries(0),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	return opts
}

// openaiStatusError turns the SDK's HTTP error into an *HTTPStatusError (other errors pass).
func openaiStatusError(err error) error {
	var ae *openai.Error
	if !errors.As(err, &ae) {
		return err
	}
	body := ae.Message
	if body == "" {
		body = strings.TrimSpace(ae.RawJSON())
	}
	se := &HTTPStatusError{StatusCode: ae.StatusCode, Body: truncateBody(body), Err: err}
	if ae.Response != nil {
		se.RetryAfter = RetryAfterHeader(ae.Response.Header)
	}
	return se
}

// passthrough sends the backend's options that are request parameters of the API (allowed,
// with renames), typed by the config's param table, and logs the rest: MassGen-only keys such
// as enable_code_interpreter must never reach the API, which would reject them. extra_body's
// fields are sent as written.
func passthrough(p configs.Params, allowed map[string]string, logger *zap.Logger, provider string) []option.RequestOption {
	var opts []option.RequestOption
	for _, k := range p.Names() {
		if strings.Contains(k, ".") { // reasoning.effort: sent inside its mapping
			continue
		}
		if k == "extra_body" {
			m, _ := p.Object(k)
			for _, sk := range sortedKeys(m) {
				opts = append(opts, option.WithJSONSet(sjsonKey(sk), m[sk]))
			}
			continue
		}
		name, ok := allowed[k]
		if !ok {
			logger.Debug("backend option not sent to the API", zap.String("provider", provider), zap.String("key", k))
			continue
		}
		v, _ := p.Value(k)
		opts = append(opts, option.WithJSONSet(sjsonKey(name), v))
	}
	return opts
}

// logUnsent logs, at debug level, the backend's keys that are not options its API takes
// (MassGen switches such as allowed_tools; validation warns about them): they are not sent.
func logUnsent(log *zap.Logger, cfg configs.Backend, p configs.Params, what string) {
	for _, k := range sortedKeys(cfg.Extra) {
		if !p.Has(k) {
			log.Debug("ignoring backend option: not "+what, zap.String("key", k))
		}
	}
}

// sjsonKey escapes sjson path syntax so a key is set literally.
func sjsonKey(k string) string {
	r := strings.NewReplacer(".", `\.`, "*", `\*`, "?", `\?`, "|", `\|`, "#", `\#`, "@", `\@`, ":", `\:`)
	return r.Replace(k)
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

// streamCodeFailure is an error the provider reported inside a stream with a code (the
// Responses API's error event and response.failed, or an error object in a chat stream).
// Rate limits and server trouble are retried like their HTTP statuses.
func streamCodeFailure(code, msg string) *failure {
	says := ""
	if m := oneLine(msg); m != "" {
		says = "; the provider says: " + m
	}
	switch code {
	case "rate_limit_exceeded", "rate_limit_error", "429":
		return &failure{kind: KindRateLimited, retryable: true, detail: "rate limited (" + code + " in the stream)" + says}
	case "server_error", "internal_error", "overloaded", "overloaded_error", "server_overloaded", "service_unavailable", "timeout", "api_error", "500", "502", "503", "504", "529":
		return &failure{kind: KindServer, retryable: true, detail: "the provider failed (" + code + " in the stream)" + says}
	}
	what := "the provider reported an error"
	if code != "" {
		what += " (" + code + ")"
	}
	return &failure{kind: KindProvider, detail: what + says}
}
