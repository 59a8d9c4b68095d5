package backends

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
)

// Helpers for the API-key backends that talk to a provider's own SDK (claude, gemini).

// keyedSetup is what such a backend resolves before it builds its client.
type keyedSetup struct {
	o     Options // LookupEnv filled in
	key   string
	model string
	log   *zap.Logger // tagged with the backend and the agent
}

// setupKeyed fills in o's defaults and resolves the API key (the config's api_key, else the
// provider's keyVars in the environment) and the model (the config's, else defaultModel).
func setupKeyed(cfg configs.Backend, o Options, provider, defaultModel string) (keyedSetup, error) {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	vars := keyVars[provider]
	key, ok := resolveKey(cfg, vars, o.LookupEnv)
	if !ok {
		return keyedSetup{}, fmt.Errorf("backend %q: no API key: set %s in the environment (or .env), or api_key in the config", cfg.Type, strings.Join(vars, " or "))
	}
	model := cfg.Model
	if model == "" {
		model = defaultModel
	}
	return keyedSetup{o: o, key: key, model: model,
		log: log.With(zap.String("backend", provider), zap.String("agent", o.AgentID))}, nil
}

// generateWithRetry runs attempt under withRetryNotify, reporting retries to onEvent, and names
// the provider (and model) in the final error.
func generateWithRetry(ctx context.Context, o Options, provider, model string, onEvent func(Event), attempt func() (*Response, error)) (*Response, error) {
	var resp *Response
	err := withRetryNotify(ctx, o, func() error {
		r, err := attempt()
		resp = r
		return err
	}, retryNotifier(provider, onEvent))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", provider, ctx.Err())
		}
		return nil, fmt.Errorf("%s %s: %w", provider, model, err)
	}
	return resp, nil
}

// attemptEvents forwards one attempt's events and remembers whether any went out: until one has,
// a failed attempt is reported as an *HTTPStatusError that withRetry may retry; after, a retry
// would repeat output, so the error is final.
type attemptEvents struct {
	onEvent func(Event)
	yielded bool
}

func (a *attemptEvents) emit(ev Event) {
	a.yielded = true
	if a.onEvent != nil {
		a.onEvent(ev)
	}
}

// failed reports a stream error: the cancellation as is, else final once output went out, else
// as statusErr maps it.
func (a *attemptEvents) failed(ctx context.Context, err error, statusErr func(error) error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if a.yielded {
		return fmt.Errorf("stream interrupted: %w", err)
	}
	return statusErr(err)
}

// cutOff reports a stream that closed before the reply was complete: like a 502, worth a retry
// if nothing was streamed.
func (a *attemptEvents) cutOff(msg string) error {
	err := errors.New(msg)
	if a.yielded {
		return err
	}
	return &HTTPStatusError{StatusCode: http.StatusBadGateway, Body: err.Error()}
}
