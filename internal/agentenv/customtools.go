package agentenv

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/customtools"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/sandbox/netproxy"
)

// customTools builds the agent's custom tools (nil when it has none). With describe (a run, not
// DecideOnly), the functions without a configured schema are read once per run, in the command
// sandbox with the agent's coordination policy; what keeps one from running is a ConfigError.
func (a *Agent) customTools(ctx context.Context, describe bool) (*customtools.Provider, error) {
	i := a.index()
	if i < 0 || len(a.cfg.Backend.CustomTools) == 0 {
		return nil, nil
	}
	sb, err := a.commandSandbox(Coordination)
	if err != nil {
		return nil, err
	}
	p, err := customtools.New(ctx, customtools.Options{
		Config: a.env.cfg, Agent: i, Sandbox: sb, Describe: describe, Cache: a.env.customCache,
		Shaped: a.env.Shaped, Logger: a.env.log.With(zap.String("agent", a.cfg.ID)),
	})
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return p, nil
}

// custom is the agent's custom tools as the Toolset takes them (a nil interface when none).
func (a *Agent) custom() filesystem.Custom {
	if a.customs == nil {
		return nil
	}
	return a.customs
}

// index is the agent's place in the config's agents (-1: not found).
func (a *Agent) index() int {
	for i, ac := range a.env.cfg.Agents {
		if ac.ID == a.cfg.ID {
			return i
		}
	}
	return -1
}

// commandLimits bound the agent's commands and custom tool processes (configs' command_limits).
func (a *Agent) commandLimits() sandbox.Limits {
	l := a.env.cfg.CommandLimitsOf(a.cfg.ID)
	return sandbox.Limits{MemoryMB: l.MemoryMB, Processes: l.Processes, CPUSeconds: l.CPUSeconds, FileSizeMB: l.FileSizeMB}
}

// commandNetwork is what the agent's commands and custom tool processes may reach (configs'
// command_network).
func (a *Agent) commandNetwork() (sandbox.Network, error) {
	n := a.env.cfg.CommandNetworkOf(a.cfg.ID)
	allow, err := netproxy.NewAllowlist(n.AllowedDomains)
	if err != nil {
		return sandbox.Network{}, configError("agent %q: command_network.%v", a.cfg.ID, err)
	}
	return sandbox.Network{Mode: n.Mode, Allow: allow}, nil
}

// commandSandbox is what the agent's processes run under in role, as its Toolset runs them.
func (a *Agent) commandSandbox(role Role) (filesystem.CommandSandbox, error) {
	pol, err := a.policy(role)
	if err != nil {
		return filesystem.CommandSandbox{}, err
	}
	return filesystem.CommandSandbox{
		Mode: a.env.cfg.CommandSandbox, Policy: filesystem.SandboxPolicy(pol), Workspace: filesystem.SandboxWorkspace(pol), Log: a.env.log,
		Limits: a.commandLimits(),
	}, nil
}

// CheckCustomTools reads the custom tools of the agents named as a run would before its first
// model call (configs validate): a function that does not exist, a module its file imports that
// is not installed, no python3 the command sandbox can run.
func (e *Env) CheckCustomTools(ctx context.Context, agentIDs []string) []configs.Problem {
	var probs []configs.Problem
	for _, id := range agentIDs {
		a, err := e.Agent(ctx, id)
		if err == nil {
			_, err = a.customTools(ctx, true)
		}
		var ve *configs.ValidationError
		switch {
		case errors.As(err, &ve):
			probs = append(probs, ve.Problems...)
		case err != nil:
			file, _ := e.cfg.Position("agents")
			probs = append(probs, configs.Problem{File: file, Message: err.Error()})
		}
	}
	return probs
}
