// Package mcpcmd implements `massgen mcp`: `mcp serve` offers one agent's tools, under the same
// permission checks, sandbox and audit as in a run, to any MCP client over stdio.
package mcpcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/mcpserver"
)

// NewCmd returns the `mcp` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Offer massgen's permission-checked tools to other MCP clients",
		Args:  cmdutil.NoArgs,
		// stdout is the protocol: never print usage there.
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.FlagErrorf("massgen mcp: missing subcommand (serve)")
		},
	}
	cmd.SetFlagErrorFunc(cmdutil.FlagErrorFunc)
	cmd.AddCommand(NewCmdServe(f, nil))
	return cmd
}

// ServeOptions are the inputs of `mcp serve`.
type ServeOptions struct {
	IO *cmdutil.IOStreams
	// OpenAgent builds the agent's environment as a run does (cmdutil.Factory.OpenAgent).
	OpenAgent func(context.Context, cmdutil.AgentRequest) (*cmdutil.AgentEnv, error)

	Target cmdutil.AgentRequest // --config, --agent, --final, --context, --debug
}

// NewCmdServe returns `mcp serve`; runF replaces serveRun in tests (nil: serveRun).
func NewCmdServe(f *cmdutil.Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{IO: f.IO, OpenAgent: f.OpenAgent}
	cmd := &cobra.Command{
		Use:   "serve --config FILE --agent ID [--final] [--context PATH[:read|write]]...",
		Short: "Serve one agent's tools over MCP (stdio)",
		Long: `Serve one agent's tools over the Model Context Protocol on stdin/stdout, so IDEs and
other agent CLIs can use massgen's permission layer. Every call gets the checks it would get in a
run: the agent's workspace, context paths (read-only unless --final), protected paths, the
permission mode and rules (global, project and per-agent), hooks, the command sandbox and the
audit log. Nobody can be asked on stdio, so in mode "default" an ask is a deny with its reason.
The agent's own mcp_servers are connected too and offered as mcp__<server>__<tool>; an agent
without a workspace (cwd) is offered those only. Logs go to .massgen/logs/, never to stdout.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddAgentFlags(cmd, &opts.Target)
	cmd.Flags().BoolVar(&opts.Target.Debug, "debug", false, "debug-level logs")
	return cmd
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	if opts.Target.Agent == "" {
		return cmdutil.FlagErrorf("massgen mcp serve: --agent is required")
	}
	env, err := opts.OpenAgent(ctx, opts.Target)
	if err != nil {
		return err
	}
	defer env.Close()
	ts, err := env.Agent.Toolset(env.Role)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	if err := mcpserver.Serve(ctx, ts, opts.IO.In, opts.IO.Out); err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	return nil
}
