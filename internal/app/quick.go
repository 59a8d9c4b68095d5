package app

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
)

// QuickOptions are MassGen's quick-mode flags: one agent described on the command line, no
// config file (`massgen --backend openai --model gpt-5 "task"`).
type QuickOptions struct {
	Backend       string // --backend
	Model         string // --model
	SystemMessage string // --system-message
	BaseURL       string // --base-url
}

func (q QuickOptions) set() bool { return q != QuickOptions{} }

// quickAgentID is the one agent's id, as MassGen names it.
const quickAgentID = "agent1"

// quickModelBackends guess the backend of a model given without --backend (MassGen matches a
// fixed list of models; prefixes also accept the models released since).
var quickModelBackends = []struct{ prefix, backend string }{
	{"gpt-", "openai"}, {"chatgpt-", "openai"}, {"o1", "openai"}, {"o3", "openai"}, {"o4", "openai"},
	{"claude-", "claude"}, {"gemini-", "gemini"}, {"grok-", "grok"}, {"glm-", "zai"},
}

// quickConfig makes quick mode's config: one agent, MassGen's defaults (a claude_code agent gets
// the workspace workspace1). It returns the name messages give the config, and its YAML. Every
// usage error says which flag is missing or wrong.
func quickConfig(q QuickOptions, configName string) (string, []byte, error) {
	if configName != "" {
		return "", nil, cmdutil.FlagErrorf("--config and quick mode (--backend, --model, --system-message, --base-url) cannot be used together: quick mode runs one agent without a config file")
	}
	backend, model := strings.TrimSpace(q.Backend), strings.TrimSpace(q.Model)
	if backend == "" && model == "" {
		return "", nil, cmdutil.FlagErrorf("--system-message and --base-url describe quick mode's agent: add --backend TYPE and --model NAME (or use --config FILE)")
	}
	if backend == "" {
		for _, m := range quickModelBackends {
			if strings.HasPrefix(strings.ToLower(model), m.prefix) {
				backend = m.backend
				break
			}
		}
		if backend == "" {
			return "", nil, cmdutil.FlagErrorf("--model %s: cannot tell which backend serves it: add --backend TYPE (one of %s)", model, strings.Join(quickBackendTypes(), ", "))
		}
	}
	bt, ok := configs.LookupBackendType(backend)
	if !ok || bt.Status != configs.Implemented {
		known := quickBackendTypes()
		msg := fmt.Sprintf("--backend %s: unknown backend type (known: %s)", backend, strings.Join(known, ", "))
		if ok {
			msg = fmt.Sprintf("--backend %s: %s", backend, bt.Reason())
		} else if s := configs.Suggest(backend, known); s != "" {
			msg = fmt.Sprintf("--backend %s: unknown backend type; did you mean %s? (known: %s)", backend, s, strings.Join(known, ", "))
		}
		return "", nil, cmdutil.FlagErrorf("%s", msg)
	}
	if model == "" && bt.ModelRequired {
		return "", nil, cmdutil.FlagErrorf("--backend %s needs --model NAME: the %s backend has no default model", backend, backend)
	}
	b := map[string]any{"type": backend}
	if model != "" {
		b["model"] = model
	}
	if u := strings.TrimSpace(q.BaseURL); u != "" {
		b["base_url"] = u
	}
	if backend == "claude_code" {
		b["cwd"] = "workspace1"
	}
	system := q.SystemMessage
	if strings.TrimSpace(system) == "" {
		system = "You are a helpful AI assistant."
	}
	data, err := yaml.Marshal(map[string]any{"agents": []any{map[string]any{"id": quickAgentID, "backend": b, "system_message": system}}})
	if err != nil {
		return "", nil, err
	}
	name := "quick mode (--backend " + backend
	if model != "" {
		name += " --model " + model
	}
	return name + ")", data, nil
}

// quickBackendTypes are the types quick mode takes: those massgen runs, but the test backend.
func quickBackendTypes() []string {
	var out []string
	for _, bt := range configs.BackendTypes() {
		if bt.Status == configs.Implemented && bt.Name != "scripted" {
			out = append(out, bt.Name)
		}
	}
	slices.Sort(out)
	return out
}

// checkQuickContext refuses --context in quick mode when its agent has no workspace, hence no
// file tools: it could neither read nor write the context paths, and showing them as "(write)"
// would promise what the run cannot do. A claude_code agent has a workspace and takes them.
func checkQuickContext(opts *RunOptions, cfg *configs.Config) error {
	if !opts.Quick.set() || len(opts.Contexts) == 0 || cfg.HasWorkspaces() {
		return nil
	}
	return cmdutil.FlagErrorf("--context: quick mode's agent has no file tools (no workspace), so it could not read or write %s; "+
		"use --config with an agent that has a cwd (or --backend claude_code)", strings.Join(opts.Contexts, ", "))
}
