package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/agentenv"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/logging"
)

// noConfigMessage is the error when no --config is given and no default config exists.
const noConfigMessage = "no config: pass --config FILE or --config @examples/NAME (see `massgen configs list`), or create ./.massgen/config.yaml or ~/.config/massgen/config.yaml"

// LoadConfig loads the config called name: a YAML file, a built-in name or @examples/NAME,
// relative to the working directory; "" takes the first of configs.ConfigCandidates
// (./.massgen/config.yaml, ~/.config/massgen/config.yaml, ~/.massgen/config.yaml) and warns
// about the later ones that exist. Warnings are returned even with an error. Errors exit 2.
func (f *Factory) LoadConfig(name string) (*configs.Config, []configs.Warning, error) {
	return f.load(name, configs.Load)
}

// LoadRunConfig is LoadConfig plus the checks a run makes before it starts (CheckConfig: every
// agent's API key, backend type, model and MCP server commands, all reported at once): what a
// run would refuse is refused before any prompt, and before anything is created.
func (f *Factory) LoadRunConfig(name string) (*configs.Config, []configs.Warning, error) {
	return f.load(name, func(o configs.LoadOptions) (*configs.Config, []configs.Warning, error) {
		return f.preflighted(configs.Load(o))
	})
}

// preflighted passes a loaded config through CheckConfig: its problems become the load's
// error (a *configs.ValidationError), its warnings join the load's. Every way a run gets its
// config (a file, a config made in memory) goes through it.
func (f *Factory) preflighted(cfg *configs.Config, warnings []configs.Warning, err error) (*configs.Config, []configs.Warning, error) {
	if err != nil {
		return nil, warnings, err
	}
	probs, more := CheckConfig(cfg, f.LookPath)
	warnings = append(warnings, more...)
	if len(probs) > 0 {
		return nil, warnings, &configs.ValidationError{Problems: probs}
	}
	return cfg, warnings, nil
}

func (f *Factory) load(name string, load func(configs.LoadOptions) (*configs.Config, []configs.Warning, error)) (*configs.Config, []configs.Warning, error) {
	wd, proj, err := f.Project()
	if err != nil {
		return nil, nil, err
	}
	home := f.home()
	var notes []configs.Warning
	if name == "" {
		def, shadowed, ok := configs.DefaultConfigName(proj, home, f.LookupEnv)
		if !ok {
			return nil, nil, WithCode(ExitUsage, errors.New(noConfigMessage))
		}
		name = def
		for _, s := range shadowed {
			notes = append(notes, configs.Warning{File: s, Message: "not used: " + def + " comes first (see `massgen doctor`)"})
		}
	}
	cfg, warnings, err := load(configs.LoadOptions{Name: name, BaseDir: wd, ProjectDir: proj, Home: home, LookupEnv: f.LookupEnv, Actions: filesystem.MassGenActions()})
	warnings = append(notes, warnings...)
	if err != nil {
		return nil, warnings, WithCode(ExitUsage, err)
	}
	return cfg, warnings, nil
}

// LoadRunBytes is LoadRunConfig for a config made in memory (quick mode); file names it in
// messages.
func (f *Factory) LoadRunBytes(file string, data []byte) (*configs.Config, []configs.Warning, error) {
	wd, proj, err := f.Project()
	if err != nil {
		return nil, nil, err
	}
	cfg, warnings, err := f.preflighted(configs.LoadBytes(file, data, configs.LoadOptions{BaseDir: wd, ProjectDir: proj, Home: f.home(), LookupEnv: f.LookupEnv, Actions: filesystem.MassGenActions()}))
	if err != nil {
		return nil, warnings, WithCode(ExitUsage, err)
	}
	return cfg, warnings, nil
}

// home is the user's home, or "" when it is unknown (~/.massgen/ is then skipped).
func (f *Factory) home() string {
	if f.HomeDir == nil {
		return ""
	}
	h, _ := f.HomeDir()
	return h
}

// AddContextFlag adds --context PATH[:read|write] (repeatable) to cmd.
func AddContextFlag(cmd *cobra.Command, into *[]string) {
	cmd.Flags().StringArrayVar(into, "context", nil, "add a context path PATH[:read|write] (default write; repeatable)")
}

// AddAgentFlags adds the flags naming an agent's environment to cmd: --config (-c), --agent,
// --final and --context.
func AddAgentFlags(cmd *cobra.Command, r *AgentRequest) {
	fl := cmd.Flags()
	fl.StringVarP(&r.Config, "config", "c", "", "config: a YAML file, a built-in name or @examples/NAME (default: config.yaml in the project's .massgen/, then ~/.config/massgen/, then ~/.massgen/)")
	fl.StringVar(&r.Agent, "agent", "", "agent id (required)")
	fl.BoolVar(&r.Final, "final", false, "the final (presenting) agent's role: context paths get their configured permission")
	AddContextFlag(cmd, &r.Contexts)
}

// ResolveContexts returns cfg with the --context values (relative to the working directory)
// added by configs.Resolve, every context path checked as a run checks them.
func (f *Factory) ResolveContexts(cfg *configs.Config, contexts []string) (*configs.Config, error) {
	wd, err := f.Getwd()
	if err != nil {
		return nil, WithCode(ExitFailure, fmt.Errorf("current directory: %w", err))
	}
	var cps []configs.ContextPath
	for _, c := range contexts {
		cp, err := configs.ParseContextFlag(c)
		if err != nil {
			return nil, &FlagError{Err: err}
		}
		cps = append(cps, cp)
	}
	resolved, err := configs.Resolve(cfg, configs.Inputs{BaseDir: wd, ContextPaths: cps})
	if err != nil {
		return nil, &FlagError{Err: err}
	}
	if err := resolved.CheckContextPaths(); err != nil {
		return nil, WithCode(ExitUsage, err)
	}
	return resolved, nil
}

// AgentRequest names the agent whose environment an inspection command opens.
type AgentRequest struct {
	Config   string   // --config ("" : the default config)
	Agent    string   // --agent
	Final    bool     // --final: the final (presenting) agent's role
	Contexts []string // --context PATH[:read|write]
	Debug    bool     // --debug: debug-level logs
	// DecideOnly opens it for deciding without acting (permissions check): no log folder, no
	// workspace, no MCP server, no audit; Hooks then says whether hooks run.
	DecideOnly bool
	Hooks      bool
}

// AgentEnv is an agent's environment opened for one command. Close it when done.
type AgentEnv struct {
	Config *configs.Config
	Agent  *agentenv.Agent
	Role   agentenv.Role
	RunDir string // "" with DecideOnly
	Logger *zap.Logger
	close  []func() error
}

// Close stops the agent's MCP servers, closes the audit log and flushes the logs.
func (e *AgentEnv) Close() error {
	var errs []error
	for i := len(e.close) - 1; i >= 0; i-- {
		errs = append(errs, e.close[i]())
	}
	return errors.Join(errs...)
}

// OpenAgent loads the config and builds the agent's environment exactly as a run does
// (internal/agentenv), with what only a run knows left at its defaults: no earlier turns'
// workspaces, no one to ask. Config warnings and MCP servers that fail to start are reported on
// stderr. Errors carry exit codes: 2 for the config and the flags, 1 otherwise.
func (f *Factory) OpenAgent(ctx context.Context, r AgentRequest) (*AgentEnv, error) {
	if r.Agent == "" {
		return nil, FlagErrorf("--agent is required")
	}
	loaded, warnings, err := f.LoadConfig(r.Config)
	for _, w := range warnings {
		fmt.Fprintln(f.IO.ErrOut, w.String())
	}
	if err != nil {
		return nil, err
	}
	cfg, err := f.ResolveContexts(loaded, r.Contexts)
	if err != nil {
		return nil, err
	}
	e := &AgentEnv{Config: cfg, Role: agentenv.Coordination, Logger: zap.NewNop()}
	if r.Final {
		e.Role = agentenv.Final
	}
	fail := func(err error) (*AgentEnv, error) {
		_ = e.Close()
		var ce *agentenv.ConfigError
		if errors.As(err, &ce) {
			return nil, WithCode(ExitUsage, err)
		}
		return nil, WithCode(ExitFailure, err)
	}
	if !r.DecideOnly {
		if e.RunDir, err = logging.NewRunDir(cfg.MassgenDir(), time.Now()); err != nil {
			return fail(err)
		}
		logger, flush, err := logging.New(e.RunDir, r.Debug)
		if err != nil {
			return fail(err)
		}
		e.Logger = logger
		e.close = append(e.close, flush, func() error {
			logger.Info(logging.RunEnd) // `massgen logs --follow` stops here
			return nil
		})
	}
	env, err := agentenv.New(agentenv.Options{
		Config:     cfg,
		RunDir:     e.RunDir,
		Home:       f.home(),
		DecideOnly: r.DecideOnly,
		NoHooks:    r.DecideOnly && !r.Hooks,
		Warn: func(id string, err error) {
			fmt.Fprintf(f.IO.ErrOut, "warning: agent %s: %s (continuing without it)\n", termtext.Line(id), termtext.Line(err.Error()))
		},
		Logger: e.Logger,
	})
	if err != nil {
		return fail(err)
	}
	e.close = append(e.close, env.Close)
	if e.Agent, err = env.Agent(ctx, r.Agent); err != nil {
		return fail(err)
	}
	return e, nil
}
