package cmdutil

import (
	"fmt"
	"sort"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/configs"
)

// CheckConfig returns everything that keeps a loaded config from running here, found before any
// prompt or model call and all at once: what configs.Config.Preflight finds (a backend type that
// cannot run, a missing model, an MCP server command not on PATH) and what each agent's backend
// would refuse when the run starts (its API key, by variable name; an option it rejects). The
// start of a run (LoadRunConfig), `configs validate`, `configs list` and `doctor` all call it.
// Warnings are what Preflight only warns about. lookPath is exec.LookPath when nil.
func CheckConfig(cfg *configs.Config, lookPath func(string) (string, error)) ([]configs.Problem, []configs.Warning) {
	probs, warns := cfg.Preflight(lookPath)
	probs = append(probs, checkBackends(cfg)...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	return probs, warns
}

// checkBackends asks each agent's backend what the run would ask it before any model call: its
// API key (every agent's, each by variable name) and the options it refuses (a value of the
// wrong type, a missing endpoint). Agents whose type cannot run or that lack a model are left
// to Config.Preflight, which reports them.
func checkBackends(cfg *configs.Config) []configs.Problem {
	var probs []configs.Problem
	add := func(key, msg string) {
		file, line := cfg.Position(key)
		probs = append(probs, configs.Problem{File: file, Line: line, Key: key, Message: key + ": " + msg})
	}
	for i, a := range cfg.Agents {
		if !Runnable(a.Backend) {
			continue
		}
		p := fmt.Sprintf("agents[%d].backend", i)
		if err := backends.CheckKey(a.Backend, cfg.LookupEnv); err != nil {
			add(p+".api_key", fmt.Sprintf("agent %q: %v", a.ID, err))
			continue
		}
		if _, err := a.Backend.Params(); err != nil {
			continue // a wrong option value: Config.Preflight reports each with its line
		}
		if _, err := backends.New(a.Backend, backends.Options{LookupEnv: cfg.LookupEnv, AgentID: a.ID}); err != nil {
			add(p, fmt.Sprintf("agent %q: %v", a.ID, err))
		}
	}
	return probs
}

// Runnable reports whether massgen can build this backend at all: its type is implemented and
// it has a model when it needs one (Config.Preflight reports the others).
func Runnable(b configs.Backend) bool {
	bt, _ := configs.LookupBackendType(b.Type)
	return bt.Status == configs.Implemented && (!bt.ModelRequired || strings.TrimSpace(b.Model) != "")
}
