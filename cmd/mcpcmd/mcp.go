// Package mcpcmd implements `massgen mcp`: `mcp serve` offers one agent's tools, under the same
// permission checks, sandbox and audit as in a run, to any MCP client over stdio.
package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/filesystem/sandbox"
	"github.com/massgen-go/massgen/internal/mcpclient"
	"github.com/massgen-go/massgen/internal/mcpserver"
	"github.com/massgen-go/massgen/logging"
	"github.com/massgen-go/massgen/permissions"
)

// NewCmd returns the `mcp` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Offer massgen's permission-checked tools to other MCP clients",
		Args:  cobra.NoArgs,
		// stdout is the protocol: never print usage there.
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitUsage, errors.New("massgen mcp: missing subcommand (serve)"))
		},
	}
	cmd.AddCommand(newServeCmd(f))
	return cmd
}

// ServeOptions are the flags of `mcp serve`.
type ServeOptions struct {
	IO        *cmdutil.IOStreams
	Getwd     func() (string, error)
	HomeDir   func() (string, error)
	LookupEnv func(string) (string, bool)

	Config string
	Agent  string
	Final  bool
	Debug  bool
}

func newServeCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ServeOptions{IO: f.IO, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv}
	cmd := &cobra.Command{
		Use:   "serve --config FILE --agent ID [--final]",
		Short: "Serve one agent's tools over MCP (stdio)",
		Long: `Serve one agent's tools over the Model Context Protocol on stdin/stdout, so IDEs and
other agent CLIs can use massgen's permission layer. Every call gets the checks it would get in a
run: the agent's workspace, context paths (read-only unless --final), protected paths, the
permission mode and rules, the command sandbox and the audit log. Nobody can be asked on stdio, so
in mode "default" an ask is a deny with its reason. The agent's own mcp_servers are connected too
and offered as mcp__<server>__<tool>. Logs go to .massgen/logs/, never to stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Config, "config", "", "config file, built-in name or @examples/NAME (required)")
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "id of the agent whose tools are served (required)")
	cmd.Flags().BoolVar(&opts.Final, "final", false, "serve the tools of the final (presenting) agent: context paths get their configured permission")
	cmd.Flags().BoolVar(&opts.Debug, "debug", false, "debug-level logs")
	_ = cmd.MarkFlagRequired("config")
	_ = cmd.MarkFlagRequired("agent")
	return cmd
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	built, err := BuildToolset(ctx, ToolsetRequest{
		Config: opts.Config, Agent: opts.Agent, Final: opts.Final, Debug: opts.Debug,
		Getwd: opts.Getwd, HomeDir: opts.HomeDir, LookupEnv: opts.LookupEnv, Warnings: opts.IO.ErrOut,
	})
	if err != nil {
		return err
	}
	defer built.Close()
	if err := mcpserver.Serve(ctx, built.Toolset, opts.IO.In, opts.IO.Out); err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	return nil
}

// ToolsetRequest says which agent's Toolset to build, in which role.
type ToolsetRequest struct {
	Config    string
	Agent     string
	Final     bool
	Debug     bool
	Getwd     func() (string, error)
	HomeDir   func() (string, error)
	LookupEnv func(string) (string, bool)
	// Warnings receives config warnings and MCP servers that failed to start (stderr).
	Warnings io.Writer
}

// Built is an agent's Toolset with what must be released after use.
type Built struct {
	Config  *configs.Config
	Toolset *filesystem.Toolset
	RunDir  string
	Logger  *zap.Logger
	closers []func() error
}

// Close stops MCP servers, closes the audit log and flushes the logger.
func (b *Built) Close() error {
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		errs = append(errs, b.closers[i]())
	}
	return errors.Join(errs...)
}

// BuildToolset loads the config and builds the agent's Toolset exactly as a run does: policy from
// the config and project rules, Guard with hooks and audit log (no Asker: nobody can be asked),
// trash, sandbox and the agent's MCP servers. Errors carry exit codes (2: config, 1: other).
// `massgen tools list/call` use it too (cmd/toolscmd).
func BuildToolset(ctx context.Context, r ToolsetRequest) (*Built, error) {
	wd, err := r.Getwd()
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("current directory: %w", err))
	}
	home := ""
	if r.HomeDir != nil {
		home, _ = r.HomeDir()
	}
	cfg, warnings, err := configs.Load(configs.LoadOptions{Name: r.Config, BaseDir: wd, Home: home, LookupEnv: r.LookupEnv})
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	if r.Warnings != nil {
		for _, w := range warnings {
			fmt.Fprintln(r.Warnings, w.String())
		}
	}
	agent, ok := cfg.AgentByID(r.Agent)
	if !ok {
		ids := make([]string, 0, len(cfg.Agents))
		for _, a := range cfg.Agents {
			ids = append(ids, a.ID)
		}
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("%s: no agent %q (agents: %s)", cfg.Source, r.Agent, strings.Join(ids, ", ")))
	}

	b := &Built{Config: cfg}
	fail := func(code int, err error) (*Built, error) {
		_ = b.Close()
		return nil, cmdutil.WithCode(code, err)
	}
	now := time.Now()
	runDir, err := logging.NewRunDir(cfg.MassgenDir(), now)
	if err != nil {
		return fail(cmdutil.ExitFailure, err)
	}
	b.RunDir = runDir
	logger, flush, err := logging.New(runDir, r.Debug)
	if err != nil {
		return fail(cmdutil.ExitFailure, err)
	}
	b.Logger = logger
	b.closers = append(b.closers, flush)

	role := permissions.Coordination
	if r.Final {
		role = permissions.Final
	}
	rules, err := permissions.LoadProjectRules(cfg.MassgenDir())
	if err != nil {
		return fail(cmdutil.ExitUsage, err)
	}
	sandboxMode, sbErr := sandbox.Effective(cfg.CommandSandbox)
	sandboxed := sbErr == nil && sandboxMode != sandbox.ModeNone
	spec, err := permissions.SpecFromConfig(cfg, agent.ID, role, permissions.SpecOptions{Sandboxed: sandboxed, Home: home, ProjectRules: rules})
	if err != nil {
		return fail(cmdutil.ExitUsage, err)
	}
	policy, err := permissions.New(spec)
	if err != nil {
		return fail(cmdutil.ExitUsage, err)
	}
	audit, err := permissions.OpenAuditLog(filepath.Join(runDir, "permissions.jsonl"))
	if err != nil {
		return fail(cmdutil.ExitFailure, err)
	}
	b.closers = append(b.closers, audit.Close)
	guard := permissions.NewGuard(policy, permissions.GuardOptions{Hooks: mergedHooks(cfg, agent, rules), Audit: audit, Logger: logger})

	var external map[string]filesystem.External
	if len(agent.Backend.MCPServers) > 0 {
		ext, errs := mcpclient.ConnectWith(ctx, mcpclient.Options{
			Servers: agent.Backend.MCPServers, AllowedDirs: policy.ReadableRoots(), WorkDir: spec.Workspace, Logger: logger,
		})
		for _, e := range errs {
			if r.Warnings != nil {
				fmt.Fprintf(r.Warnings, "warning: %v (continuing without it)\n", e)
			}
		}
		external = ext
		b.closers = append(b.closers, func() error { return mcpclient.Close(ext) })
	}
	ts, err := filesystem.NewToolset(filesystem.ToolsetOptions{
		Guard:                   guard,
		TrashDir:                filepath.Join(cfg.MassgenDir(), "trash", filepath.Base(runDir)),
		EnforceReadBeforeDelete: cfg.EnforceReadBeforeDelete(),
		Sandbox:                 cfg.CommandSandbox,
		External:                external,
		Logger:                  logger,
	})
	if err != nil {
		return fail(cmdutil.ExitFailure, err)
	}
	b.Toolset = ts
	return b, nil
}

// mergedHooks are the global, project and per-agent hooks, in that order (as in a run).
func mergedHooks(cfg *configs.Config, a *configs.Agent, project *configs.Permissions) configs.Hooks {
	var h configs.Hooks
	add := func(p *configs.Permissions) {
		if p == nil {
			return
		}
		h.PreToolUse = append(h.PreToolUse, p.Hooks.PreToolUse...)
		h.PostToolUse = append(h.PostToolUse, p.Hooks.PostToolUse...)
	}
	add(&cfg.Permissions)
	add(project)
	add(a.Permissions)
	return h
}
