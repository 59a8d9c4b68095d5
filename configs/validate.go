package configs

import (
	"fmt"
	"regexp"
	"strings"
)

// agentIDRE keeps ids usable as directory names (snapshots/<id>, temp_workspaces/<id>): no
// separators, no "..", nothing hidden.
var agentIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// validate checks values the decoder cannot: required fields, ranges, unique ids. Words of a
// vocabulary (modes, levels, permissions) were checked as they were decoded (checkWords).
func (c *Config) validate(d *document) []Problem {
	var probs []Problem
	add := func(path, format string, args ...any) {
		probs = append(probs, Problem{File: d.file, Line: d.lineOf(path), Key: path, Message: path + ": " + fmt.Sprintf(format, args...)})
	}
	if len(c.Agents) == 0 {
		probs = append(probs, Problem{File: d.file, Line: d.lineOf("agents"),
			Message: "no agents: add `agents:` (a list) or `agent:` (one agent)"})
	}
	ids := map[string]string{}
	for i := range c.Agents {
		a := &c.Agents[i]
		p := fmt.Sprintf("agents[%d]", i)
		switch {
		case a.ID == "":
			add(p, "missing id")
		case !agentIDRE.MatchString(a.ID):
			add(p+".id", "invalid id %q (letters, digits, '.', '_' and '-' only; used as a directory name)", a.ID)
		case ids[a.ID] != "":
			add(p+".id", "duplicate id %q (first used at %s)", a.ID, ids[a.ID])
		default:
			ids[a.ID] = fmt.Sprintf("line %d", d.lineOf(p+".id"))
		}
		b := &a.Backend
		bt, known := LookupBackendType(b.Type)
		switch {
		case b.Type == "":
			add(p+".backend", "missing backend type (known: %s)", strings.Join(runnableBackendTypes(), ", "))
		case !known:
			known := "known: " + strings.Join(runnableBackendTypes(), ", ")
			sugg := suggest(b.Type, KnownBackendTypes())
			if sugg != "" {
				known = fmt.Sprintf("did you mean %q? %s", sugg, known)
			}
			probs = append(probs, Problem{File: d.file, Line: d.lineOf(p + ".backend.type"), Key: p + ".backend.type", Suggestion: sugg,
				Message: fmt.Sprintf("%s.backend.type: unknown backend %q (%s)", p, b.Type, known)})
		case bt.Family == "":
			add(p+".backend.type", "%s: refused: %s", b.Type, bt.Reason())
		}
		for j, s := range b.MCPServers {
			sp := fmt.Sprintf("%s.backend.mcp_servers[%d]", p, j)
			if s.Name == "" {
				add(sp, "missing name")
			}
			if s.Command == "" && s.URL == "" {
				add(sp, "needs command: (stdio) or url: (http)")
			}
		}
		for j, st := range b.Script {
			for k, tc := range st.ToolCalls {
				if tc.Name == "" {
					add(fmt.Sprintf("%s.backend.script[%d].tool_calls[%d]", p, j, k), "missing name")
				}
			}
		}
		for _, l := range []struct {
			key  string
			pats []string
		}{{"command_line_allowed_commands", b.CommandLineAllowedCommands}, {"command_line_blocked_commands", b.CommandLineBlockedCommands}} {
			for j, pat := range l.pats {
				kp := fmt.Sprintf("%s.backend.%s[%d]", p, l.key, j)
				if strings.TrimSpace(pat) == "" {
					add(kp, "empty pattern")
				} else if _, err := regexp.Compile(pat); err != nil {
					add(kp, "%q is not a regular expression massgen can use (Go's RE2 syntax; no lookarounds or backreferences): %v", pat, err)
				}
			}
		}
		probs = append(probs, c.validateCustomTools(d, i)...)
		if b.Type == "scripted" && len(b.Script) == 0 {
			add(p+".backend", "the scripted backend needs a script:")
		}
		if a.Permissions != nil {
			probs = append(probs, validatePermissions(d, p+".permissions", a.Permissions)...)
		}
		probs = append(probs, validateCommandLimits(d, p+".command_limits", a.CommandLimits)...)
		validateNetwork(p+".command_network", a.CommandNetwork, add)
	}
	o := &c.Orchestrator
	for i, cp := range o.ContextPaths {
		p := fmt.Sprintf("orchestrator.context_paths[%d]", i)
		if strings.TrimSpace(cp.Path) == "" {
			add(p, "missing path")
		}
		for j, pp := range cp.ProtectedPaths {
			if strings.TrimSpace(pp) == "" {
				add(fmt.Sprintf("%s.protected_paths[%d]", p, j), "empty protected path")
			}
		}
	}
	for _, f := range []struct {
		path string
		v    int
	}{
		{"orchestrator.timeout_seconds", o.TimeoutSeconds},
		{"orchestrator.agent_timeout_seconds", o.AgentTimeoutSeconds},
		{"orchestrator.max_new_answers_per_agent", o.MaxNewAnswersPerAgent},
		{"orchestrator.max_task_bytes", o.MaxTaskBytes},
		{"timeout_settings.orchestrator_timeout_seconds", c.TimeoutSettings.OrchestratorTimeoutSeconds},
		{"timeout_settings.initial_round_timeout_seconds", c.TimeoutSettings.InitialRoundTimeoutSeconds},
		{"timeout_settings.subsequent_round_timeout_seconds", c.TimeoutSettings.SubsequentRoundTimeoutSeconds},
		{"timeout_settings.round_timeout_grace_seconds", c.roundGraceSeconds()},
		{"orchestrator.coordination.max_orchestration_restarts", o.Coordination.MaxOrchestrationRestarts},
	} {
		if f.v < 0 {
			add(f.path, "must not be negative (got %d)", f.v)
		}
	}
	if t := o.VotingThreshold; t < 0 || t > 10 {
		add("orchestrator.voting_threshold", "must be 0-10 (got %d)", t)
	}
	if o.MaxChecklistCallsPerRound < 0 {
		add("orchestrator.max_checklist_calls_per_round", "must not be negative (got %d)", o.MaxChecklistCallsPerRound)
	}
	probs = append(probs, validateCommandLimits(d, "command_limits", c.CommandLimits)...)
	validateNetwork("orchestrator.command_network", o.CommandNetwork, add)
	probs = append(probs, validatePermissions(d, "permissions", &c.Permissions)...)
	return probs
}

func validatePermissions(d *document, path string, p *Permissions) []Problem {
	var probs []Problem
	add := func(path, format string, args ...any) {
		probs = append(probs, Problem{File: d.file, Line: d.lineOf(path), Key: path, Message: path + ": " + fmt.Sprintf(format, args...)})
	}
	for i, r := range p.Allow {
		if strings.TrimSpace(r) == "" {
			add(fmt.Sprintf("%s.allow[%d]", path, i), "empty rule")
		}
	}
	for i, r := range p.Deny {
		if strings.TrimSpace(r) == "" {
			add(fmt.Sprintf("%s.deny[%d]", path, i), "empty rule")
		}
	}
	for _, g := range []struct {
		name  string
		hooks []Hook
	}{{"pre_tool_use", p.Hooks.PreToolUse}, {"post_tool_use", p.Hooks.PostToolUse}} {
		name := g.name
		for i, h := range g.hooks {
			hp := fmt.Sprintf("%s.hooks.%s[%d]", path, name, i)
			if strings.TrimSpace(h.Command) == "" {
				add(hp, "missing command")
			}
			if h.TimeoutSeconds < 0 {
				add(hp+".timeout_seconds", "must not be negative (got %d)", h.TimeoutSeconds)
			}
		}
	}
	return probs
}

// runnableBackendTypes are the types massgen can run, for "known: ..." in messages.
func runnableBackendTypes() []string {
	var names []string
	for _, bt := range backendTypeTable {
		if bt.Status == Implemented {
			names = append(names, bt.Name)
		}
	}
	return names
}
