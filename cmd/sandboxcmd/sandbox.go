// Package sandboxcmd implements `massgen sandbox run`: run one command exactly as an agent's
// execute_command would (the same permission check, sandbox, limits and network policy), to try a
// policy before a run.
package sandboxcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/sandbox"
)

// Exit statuses of `sandbox run` besides the command's own.
const (
	// ExitNotRun: massgen did not run the command (denied by the permission layer, or the
	// sandbox could not be set up); the reason is on stderr.
	ExitNotRun = 125
	// ExitTimedOut: the command ran out of time.
	ExitTimedOut = 124
)

// NewCmd returns the `sandbox` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run a command as an agent's execute_command would",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.FlagErrorf("massgen sandbox: missing subcommand (run)")
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetFlagErrorFunc(cmdutil.FlagErrorFunc)
	cmd.AddCommand(NewCmdRun(f, nil))
	return cmd
}

// RunOptions are the inputs of `sandbox run`.
type RunOptions struct {
	IO *cmdutil.IOStreams
	// OpenAgent builds the agent's environment as a run does (cmdutil.Factory.OpenAgent);
	// LoadConfig finds the first agent when --agent is not given.
	OpenAgent  func(context.Context, cmdutil.AgentRequest) (*cmdutil.AgentEnv, error)
	LoadConfig func(name string) (*configs.Config, []configs.Warning, error)

	Target cmdutil.AgentRequest // --config, --agent, --final, --context
	Argv   []string             // the command
}

// NewCmdRun returns `sandbox run`; runF replaces runRun in tests (nil: runRun).
func NewCmdRun(f *cmdutil.Factory, runF func(context.Context, *RunOptions) error) *cobra.Command {
	o := &RunOptions{IO: f.IO, OpenAgent: f.OpenAgent, LoadConfig: f.LoadConfig}
	cmd := &cobra.Command{
		Use:   "run [--config FILE] [--agent ID] [--final] [--context PATH[:read|write]]... -- COMMAND [ARG]...",
		Short: "Run a command exactly as an agent's execute_command would, and print its output",
		Long: `Runs COMMAND through the agent's execute_command: the same permission check (mode, rules,
hooks; nobody can be asked, so an ask is a deny), the same command sandbox, limits and network
policy (command_network), in the agent's workspace, with an audit line in a new
.massgen/logs/log_<time>/ folder. Use it to check a policy before a run.

COMMAND with ARGs is quoted as sh would need it; a COMMAND alone is a shell command line
('pip install x && pytest'). The command's stdout and stderr are printed as they are, what the
proxy allowed or refused on stderr ("massgen: network: pypi.org:443 allowed").
Exit status: the command's; 124 when it timed out; 125 when massgen did not run it (denied, or
the sandbox could not be set up); 2 for usage or config errors. --agent defaults to the config's
first agent.`,
		Example: `  massgen sandbox run -- sh -c 'echo hi > x; cat /etc/hostname'
  massgen sandbox run --config my.yaml --agent agent_a -- curl -sS https://pypi.org/simple/
  massgen sandbox run --final --context .:write -- 'make test'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.FlagErrorf("massgen sandbox run: missing COMMAND (after --)")
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Argv = args
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runRun(cmd.Context(), o)
		},
	}
	cmdutil.AddAgentFlags(cmd, &o.Target)
	cmd.Flags().Lookup("agent").Usage = "agent id (default: the config's first agent)"
	return cmd
}

// CommandLine is argv as the shell command execute_command gets: one argument as it is (a
// command line), several quoted.
func CommandLine(argv []string) (string, error) {
	if len(argv) == 1 {
		return argv[0], nil
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangPOSIX)
		if err != nil {
			return "", fmt.Errorf("argument %d: %w", i+1, err)
		}
		parts[i] = q
	}
	return strings.Join(parts, " "), nil
}

func runRun(ctx context.Context, o *RunOptions) error {
	command, err := CommandLine(o.Argv)
	if err != nil {
		return cmdutil.FlagErrorf("massgen sandbox run: %v", err)
	}
	if o.Target.Agent == "" {
		cfg, _, err := o.LoadConfig(o.Target.Config)
		if err != nil {
			return err // OpenAgent would say the same, with the warnings
		}
		if len(cfg.Agents) == 0 {
			return cmdutil.FlagErrorf("massgen sandbox run: the config has no agent")
		}
		o.Target.Agent = cfg.Agents[0].ID
	}
	env, err := o.OpenAgent(ctx, o.Target)
	if err != nil {
		return err
	}
	defer env.Close()
	ts, err := env.Agent.Toolset(env.Role)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	cfg := env.Config
	netw := cfg.CommandNetworkOf(o.Target.Agent)
	plan := sandbox.PlanNetwork(cfg.CommandSandbox, netw.Mode)
	mode, serr := sandbox.Effective(cfg.CommandSandbox)
	if serr != nil {
		mode = "refused"
	}
	role := "coordination"
	if o.Target.Final {
		role = "final"
	}
	fmt.Fprintf(o.IO.ErrOut, "massgen: agent %s (%s): command sandbox %s; command network %s: %s\n", o.Target.Agent, role, mode, netw.Mode, plan.How)
	if plan.Warning != "" {
		fmt.Fprintln(o.IO.ErrOut, "warning: "+plan.Warning)
	}
	args, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		return err
	}
	ctx = filesystem.WithNotes(ctx, func(note string) { fmt.Fprintln(o.IO.ErrOut, "massgen: "+note) })
	res := ts.Call(ctx, filesystem.ExecuteCommand, args)
	var out struct {
		sandbox.Result
		Success bool `json:"success"`
	}
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil || res.Denied != nil {
		// Not a command result: the call was denied or could not run.
		msg := res.Message
		if msg == "" {
			msg = res.Content
		}
		fmt.Fprintln(o.IO.ErrOut, "massgen sandbox run: not run: "+msg)
		return cmdutil.Silent(ExitNotRun)
	}
	fmt.Fprint(o.IO.Out, out.Stdout)
	fmt.Fprint(o.IO.ErrOut, out.Stderr)
	if out.Truncated {
		fmt.Fprintln(o.IO.ErrOut, "massgen: output truncated (64 KiB per stream)")
	}
	if out.Limit != "" {
		fmt.Fprintln(o.IO.ErrOut, "massgen: "+out.Limit)
	}
	switch {
	case out.TimedOut:
		fmt.Fprintln(o.IO.ErrOut, "massgen: the command timed out")
		return cmdutil.Silent(ExitTimedOut)
	case out.ExitCode != 0:
		return cmdutil.Silent(out.ExitCode)
	}
	return nil
}
