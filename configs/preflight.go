package configs

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/internal/vocab"
)

// Preflight returns what keeps a loaded config from running as written, though it loads (the
// inspection commands still read it): a backend type that cannot run, a program a backend runs
// that is not on PATH (claude_code's claude CLI), a missing model, an option value of the wrong
// type or out of its range (params.go), and MCP server commands that
// are not on PATH (the agent would run without the tools it was given, so a run refuses to
// start); an MCP server its security settings refuse is a warning (the run goes on without it).
// lookPath is exec.LookPath when nil. The start of a run, `configs validate` and `massgen doctor`
// call it, with the backends' API key checks (cmd/cmdutil.CheckConfig).
func (c *Config) Preflight(lookPath func(string) (string, error)) ([]Problem, []Warning) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	var probs []Problem
	var warns []Warning
	for i, a := range c.Agents {
		p := fmt.Sprintf("agents[%d].backend", i)
		bt, _ := LookupBackendType(a.Backend.Type)
		switch {
		case bt.Status == Refused:
			probs = append(probs, c.problem(p+".type", "", "%s.type: %s: refused: %s", p, bt.Name, bt.Reason()))
		case bt.ModelRequired && strings.TrimSpace(a.Backend.Model) == "":
			probs = append(probs, c.missingModel(p, a.Backend))
		}
		// Option values the param table types (temperature, max_tokens, ...): checked here, with
		// the other reasons a config cannot run, so validate reports them all at once.
		_, bad := a.Backend.typedParams()
		for _, e := range bad {
			k := p + "." + e.Key
			probs = append(probs, c.problem(k, "", "%s: %v", k, e.Err))
		}
		if bt.Program != "" {
			if _, err := lookPath(bt.Program); err != nil {
				probs = append(probs, c.problem(p+".type", "", "%s.type: %s needs `%s` on PATH (not found): %s", p, bt.Name, bt.Program, bt.Install))
			}
		}
		probs = append(probs, c.preflightCustomTools(i, lookPath)...)
		for j, s := range a.Backend.MCPServers {
			sp := fmt.Sprintf("%s.mcp_servers[%d]", p, j)
			if refused := s.SecurityProblems(); len(refused) > 0 {
				file, line := c.Position(sp + ".security")
				warns = append(warns, Warning{File: file, Line: line, Key: sp + ".security",
					Message: fmt.Sprintf("%s: MCP server %q: %s: %s", sp, s.Name, SecurityRefusal, strings.Join(refused, "; "))})
				continue
			}
			if pr, ok := c.checkMCPCommand(sp+".command", s, lookPath); ok {
				probs = append(probs, pr)
			}
		}
	}
	return probs, warns
}

// SecurityRefusal introduces the reasons a server's security: section refuses it.
const SecurityRefusal = "refused by its security: section, the server will not start and the agent will not have its tools"

// missingModel names the backend and, when the config has a key a typo or two from "model"
// (modle:), that key.
func (c *Config) missingModel(p string, b Backend) Problem {
	msg := fmt.Sprintf("%s: missing model: the %s backend has no default model; add model: NAME", p, b.Type)
	keys := make([]string, 0, len(b.Extra))
	for k := range b.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if suggest(k, []string{"model"}) != "" {
			msg += fmt.Sprintf(" (%s: at line %d; did you mean model?)", k, c.lineOf(p+"."+k))
			return c.problem(p, "model", "%s", msg)
		}
	}
	return c.problem(p, "", "%s", msg)
}

// checkMCPCommand reports a stdio server whose command cannot be found. A relative command
// with a separator (./server.py) is looked up in the agent's workspace at run time: not checked.
func (c *Config) checkMCPCommand(key string, s MCPServer, lookPath func(string) (string, error)) (Problem, bool) {
	cmd := strings.TrimSpace(s.Command)
	if cmd == "" || (s.Type != "" && s.Type != vocab.MCPStdio) {
		return Problem{}, false
	}
	if strings.ContainsAny(cmd, `/\`) && !filepath.IsAbs(cmd) {
		return Problem{}, false
	}
	_, err := lookPath(cmd)
	if err == nil {
		return Problem{}, false
	}
	why := "is not on PATH"
	if filepath.IsAbs(cmd) || !errors.Is(err, exec.ErrNotFound) {
		why = "cannot be run: " + err.Error()
	}
	return c.problem(key, "", "%s: MCP server %q: command %q %s: the agent would run without its tools; install it or remove the server", key, s.Name, cmd, why), true
}

func (c *Config) problem(key, suggestion, format string, args ...any) Problem {
	file, line := c.Position(key)
	return Problem{File: file, Line: line, Key: key, Suggestion: suggestion, Message: fmt.Sprintf(format, args...)}
}

// Position returns the config file's name (as given) and the line of a key path such as
// "agents[1].backend.api_key" (or of its nearest ancestor written in the file; 0 when unknown).
func (c *Config) Position(key string) (file string, line int) {
	return c.file, c.lineOf(key)
}

func (c *Config) lineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := c.lines[p]; ok {
			return l
		}
	}
	return 0
}

// LoadForRun is Load followed by Preflight, for callers without the command layer's key checks
// (cmd/cmdutil.CheckConfig adds those): a config that could not run is refused.
func LoadForRun(o LoadOptions) (*Config, []Warning, error) {
	cfg, warnings, err := Load(o)
	if err != nil {
		return cfg, warnings, err
	}
	probs, more := cfg.Preflight(nil)
	warnings = sortWarnings(append(warnings, more...))
	if len(probs) > 0 {
		sortProblems(probs)
		return nil, warnings, &ValidationError{Problems: probs}
	}
	return cfg, warnings, nil
}
