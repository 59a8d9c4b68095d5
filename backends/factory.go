package backends

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/configs"
)

// preset is a named OpenAI-compatible provider mapped onto the chatcompletion backend.
type preset struct {
	baseURL string
	// keyVars are the environment variables tried in order; empty means no key is needed.
	keyVars []string
}

// presets are MassGen's named Chat Completions providers. A base_url in the config always wins.
var presets = map[string]preset{
	"grok":         {"https://api.x.ai/v1", []string{"XAI_API_KEY"}},
	"xai":          {"https://api.x.ai/v1", []string{"XAI_API_KEY"}},
	"lmstudio":     {"http://localhost:1234/v1", nil},
	"vllm":         {"http://localhost:8000/v1", nil},
	"sglang":       {"http://localhost:30000/v1", nil},
	"zai":          {"https://api.z.ai/api/paas/v4", []string{"ZAI_API_KEY"}},
	"azure_openai": {"", []string{"AZURE_OPENAI_API_KEY"}},
	"openrouter":   {"https://openrouter.ai/api/v1", []string{"OPENROUTER_API_KEY"}},
	"cerebras":     {"https://api.cerebras.ai/v1", []string{"CEREBRAS_API_KEY"}},
	"together":     {"https://api.together.xyz/v1", []string{"TOGETHER_API_KEY"}},
	"fireworks":    {"https://api.fireworks.ai/inference/v1", []string{"FIREWORKS_API_KEY"}},
	"groq":         {"https://api.groq.com/openai/v1", []string{"GROQ_API_KEY"}},
	"nebius":       {"https://api.studio.nebius.ai/v1", []string{"NEBIUS_API_KEY"}},
	"qwen":         {"https://dashscope.aliyuncs.com/compatible-mode/v1", []string{"QWEN_API_KEY", "DASHSCOPE_API_KEY"}},
	"dashscope":    {"https://dashscope.aliyuncs.com/compatible-mode/v1", []string{"DASHSCOPE_API_KEY", "QWEN_API_KEY"}},
	"kimi":         {"https://api.moonshot.ai/v1", []string{"MOONSHOT_API_KEY", "KIMI_API_KEY"}},
	"moonshot":     {"https://api.moonshot.ai/v1", []string{"MOONSHOT_API_KEY", "KIMI_API_KEY"}},
	"poe":          {"https://api.poe.com/v1", []string{"POE_API_KEY"}},
}

// keyVars are the environment variables holding each non-preset backend's API key.
var keyVars = map[string][]string{
	"openai":         {"OPENAI_API_KEY"},
	"claude":         {"ANTHROPIC_API_KEY"},
	"gemini":         {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
	"chatcompletion": {"OPENAI_API_KEY"},
	"codex":          {"OPENAI_API_KEY", "CODEX_API_KEY"},
	"gemini_cli":     {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
}

// refusedTypes are MassGen backend types this port does not run, with why.
var refusedTypes = map[string]string{
	"copilot":         "GitHub Copilot's CLI",
	"antigravity_cli": "Google Antigravity's CLI",
}

// KnownTypes lists every backend type New accepts, sorted.
func KnownTypes() []string {
	types := []string{"openai", "chatcompletion", "claude", "gemini", "claude_code", "codex", "gemini_cli", "scripted"}
	for name := range presets {
		types = append(types, name)
	}
	slices.Sort(types)
	return types
}

// New builds the backend for one agent's config.
func New(cfg configs.Backend, o Options) (Backend, error) {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	switch cfg.Type {
	case "openai":
		return newOpenAI(cfg, o)
	case "chatcompletion":
		return newChatCompletion(cfg, o)
	case "claude":
		return newClaude(cfg, o)
	case "gemini":
		return newGemini(cfg, o)
	case "claude_code":
		return newClaudeCode(cfg, o)
	case "codex":
		return newCodex(cfg, o)
	case "gemini_cli":
		return newGeminiCLI(cfg, o)
	case "scripted":
		return newScripted(cfg, o)
	}
	if _, ok := presets[cfg.Type]; ok {
		return newChatCompletion(cfg, o)
	}
	if what, ok := refusedTypes[cfg.Type]; ok {
		return nil, refusedType(cfg.Type, what)
	}
	return nil, fmt.Errorf("unknown backend type %q (known types: %s)", cfg.Type, strings.Join(KnownTypes(), ", "))
}

// refusedType is the error for a MassGen backend type this port does not run.
func refusedType(typ, what string) error {
	return fmt.Errorf("backend type %q (%s) is not available in this port: massgen can drive an agent CLI only where it can turn the CLI's own tools off and give it massgen's; the coding-agent CLIs available are claude_code, codex and gemini_cli, and the model backends are %s",
		typ, what, strings.Join(slices.DeleteFunc(KnownTypes(), func(t string) bool { return t == "claude_code" || t == "codex" || t == "gemini_cli" }), ", "))
}

// CheckKey reports, before any agent starts, a backend whose API key is missing: the error names
// the backend type and the variable to set. Backends that need no key (scripted, claude_code,
// local servers) always pass.
func CheckKey(cfg configs.Backend, lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	vars, needed, err := keyRequirement(cfg)
	if err != nil {
		return err
	}
	if !needed {
		return nil
	}
	if cfg.Type == "azure_openai" && azureEndpoint(cfg, lookup) == "" {
		return fmt.Errorf("backend \"azure_openai\": no endpoint: set AZURE_OPENAI_ENDPOINT in the environment (or .env), or base_url in the config")
	}
	if _, ok := resolveKey(cfg, vars, lookup); ok {
		return nil
	}
	return fmt.Errorf("backend %q: no API key: set %s in the environment (or .env), or api_key in the config", cfg.Type, strings.Join(vars, " or "))
}

// KeySource says where a backend's API key would come from, never its value.
type KeySource struct {
	// Vars are the environment variables tried, in order.
	Vars []string
	// Needed is false for backends that run without a key (scripted, local servers).
	Needed bool
	// From is "api_key" (set in the config), the variable that holds the key, or "" when no key
	// is found.
	From string
}

// KeyInfo tells, for `massgen doctor` and `configs list`, which variables hold cfg's key and
// which of them is set (lookup: the config's environment chain). CheckKey turns a missing one
// into the error a run reports.
func KeyInfo(cfg configs.Backend, lookup func(string) (string, bool)) (KeySource, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	vars, needed, err := keyRequirement(cfg)
	if err != nil {
		return KeySource{}, err
	}
	_, from := findKey(cfg, vars, lookup)
	return KeySource{Vars: vars, Needed: needed, From: from}, nil
}

// keyRequirement says which variables hold cfg's key and whether a key is required at all.
func keyRequirement(cfg configs.Backend) (vars []string, needed bool, err error) {
	switch cfg.Type {
	case "scripted", "claude_code":
		return nil, false, nil
	case "openai", "claude", "gemini":
		return keyVars[cfg.Type], true, nil
	case "codex", "gemini_cli":
		// The CLI's own login is not used: its requests go through massgen's model gate, which
		// sends the key. A server on this machine takes none.
		return keyVars[cfg.Type], !isLocalURL(cfg.BaseURL), nil
	case "chatcompletion":
		// An OpenAI-compatible server on this machine usually takes no key.
		if isLocalURL(cfg.BaseURL) {
			return keyVars["chatcompletion"], false, nil
		}
		// A known provider's host gets that provider's key, never the OpenAI one.
		if p, ok := presetForURL(cfg.BaseURL); ok && len(p.keyVars) > 0 {
			return p.keyVars, true, nil
		}
		return keyVars["chatcompletion"], true, nil
	}
	p, ok := presets[cfg.Type]
	if what, refused := refusedTypes[cfg.Type]; refused {
		return nil, false, refusedType(cfg.Type, what)
	}
	if !ok {
		return nil, false, fmt.Errorf("unknown backend type %q (known types: %s)", cfg.Type, strings.Join(KnownTypes(), ", "))
	}
	if len(p.keyVars) == 0 {
		return nil, false, nil
	}
	return p.keyVars, true, nil
}

// resolveKey returns the config's api_key, else the first set variable.
func resolveKey(cfg configs.Backend, vars []string, lookup func(string) (string, bool)) (string, bool) {
	key, from := findKey(cfg, vars, lookup)
	return key, from != ""
}

// findKey returns the key and where it came from: "api_key", the variable holding it, or "".
func findKey(cfg configs.Backend, vars []string, lookup func(string) (string, bool)) (key, from string) {
	// An api_key still reading ${VAR} is a reference whose variable was not set: no key.
	if k := strings.TrimSpace(cfg.APIKey); k != "" && !strings.Contains(k, "${") {
		return k, "api_key"
	}
	for _, v := range vars {
		if k, ok := lookup(v); ok && strings.TrimSpace(k) != "" {
			return strings.TrimSpace(k), v
		}
	}
	return "", ""
}

// isLocalURL reports whether u points at this machine (localhost, 127.x, ::1).
func isLocalURL(u string) bool {
	if u == "" {
		return false
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := parsed.Hostname()
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.") || h == "0.0.0.0"
}

// presetForURL finds the preset whose base URL has the same host as u.
func presetForURL(u string) (preset, bool) {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Hostname() == "" {
		return preset{}, false
	}
	for _, name := range slices.Sorted(maps.Keys(presets)) {
		p := presets[name]
		if pu, err := url.Parse(p.baseURL); err == nil && pu.Hostname() != "" && strings.EqualFold(pu.Hostname(), parsed.Hostname()) {
			return p, true
		}
	}
	return preset{}, false
}

// LocalServer returns the address (host:port) of the server on this machine a backend talks to
// (lmstudio, vllm, sglang, or any base_url naming localhost), and whether there is one: such a
// config can run only while that server is up.
func LocalServer(cfg configs.Backend) (string, bool) {
	u := strings.TrimSpace(cfg.BaseURL)
	if u == "" {
		u = presets[cfg.Type].baseURL
	}
	if !isLocalURL(u) {
		return "", false
	}
	parsed, _ := url.Parse(u) // isLocalURL parsed it
	port := parsed.Port()
	if port == "" {
		port = "80"
		if parsed.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(parsed.Hostname(), port), true
}
