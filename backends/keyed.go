package backends

import (
	"fmt"
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
	call  caller
}

// setupKeyed fills in o's defaults and resolves the API key (the config's api_key, else the
// provider's keyVars in the environment) and the model (the config's, else defaultModel).
func setupKeyed(cfg configs.Backend, o Options, provider, defaultModel string) (keyedSetup, error) {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
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
	c := newCaller(o, provider, model, keyHint(cfg, vars))
	return keyedSetup{o: o, key: key, model: model, log: c.log, call: c}, nil
}

// keyHint says where cfg's API key comes from, for an authentication error.
func keyHint(cfg configs.Backend, vars []string) string {
	if k := strings.TrimSpace(cfg.APIKey); k != "" && !strings.Contains(k, "${") {
		return "api_key in the config"
	}
	if len(vars) == 0 {
		return "the server's key settings (no API key is sent)"
	}
	return strings.Join(vars, " or ")
}
