// Package toolscmd implements `massgen tools`: list the tools an agent is offered and call one
// exactly as a run would (permission check, audit line, sandbox), for scripting and debugging.
package toolscmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/termtext"
)

// NewCmd returns the `tools` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "tools",
		Aliases: []string{"tool"},
		Short:   "List an agent's tools, or call one as a run would",
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.FlagErrorf("massgen tools: missing subcommand (list or call)")
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetFlagErrorFunc(cmdutil.FlagErrorFunc)
	cmd.AddCommand(NewCmdList(f, nil), NewCmdCall(f, nil))
	return cmd
}

// Options are the inputs of `tools list` and `tools call`.
type Options struct {
	IO *cmdutil.IOStreams
	// OpenAgent builds the agent's environment as a run does (cmdutil.Factory.OpenAgent).
	OpenAgent func(context.Context, cmdutil.AgentRequest) (*cmdutil.AgentEnv, error)

	Target cmdutil.AgentRequest // --config, --agent, --final, --context
	JSON   bool                 // list: machine-readable output

	Tool string // call
	Args string // call: JSON object
}

func newOptions(f *cmdutil.Factory) *Options {
	return &Options{IO: f.IO, OpenAgent: f.OpenAgent}
}

// NewCmdList returns `tools list`; runF replaces listRun in tests (nil: listRun).
func NewCmdList(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:   "list --config FILE --agent ID [--final] [--context PATH[:read|write]]... [--json]",
		Short: "Print the tools an agent is offered, with their descriptions",
		Long: `Prints the tools the agent is offered in the given role, exactly as the model sees them:
names, descriptions (ending with the agent's directory limits) and, with --json, parameter
schemas. File tools are absent when the agent has no workspace (cwd), write tools when it may
write nowhere; the agent's MCP servers are started and their tools listed as
mcp__<server>__<tool>.`,
		Example:       "  massgen tools list --config my.yaml --agent agent_a --final",
		Args:          cmdutil.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return listRun(cmd.Context(), o)
		},
	}
	cmdutil.AddAgentFlags(cmd, &o.Target)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON array of {name, description, parameters, write}")
	return cmd
}

// NewCmdCall returns `tools call`; runF replaces callRun in tests (nil: callRun).
func NewCmdCall(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:   "call --config FILE --agent ID [--final] [--context PATH[:read|write]]... NAME JSON_ARGS",
		Short: "Run one tool exactly as a run would and print its JSON result",
		Long: `Runs one tool call as the agent would in a run: the permission check (mode, rules, hooks),
an audit line in a new .massgen/logs/log_<time>/ folder, the command sandbox, the trash for
deletions from context paths. Prints the tool's JSON result on stdout.
Exit status: 0 success, 1 denied or failed, 2 usage or config error.
It creates the agent's workspace if it does not exist, and nothing else.
Note: the read-before-delete rule applies per invocation, so delete_file on a file the same
invocation has not read is refused unless the config sets enforce_read_before_delete: false.`,
		Example: `  massgen tools call --config my.yaml --agent agent_a read_file '{"path":"notes.md"}'
  massgen tools call --config my.yaml --agent agent_a --final copy_file '{"source_path":"site","destination_path":"/home/me/project/site"}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return cmdutil.FlagErrorf("massgen tools call: want NAME and JSON_ARGS, got %d argument(s)", len(args))
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Tool = args[0]
			o.Args = "{}"
			if len(args) == 2 {
				o.Args = args[1]
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return callRun(cmd.Context(), o)
		},
	}
	cmdutil.AddAgentFlags(cmd, &o.Target)
	return cmd
}

// open builds the agent's environment and returns its Toolset for the role asked.
func (o *Options) open(ctx context.Context, cmd string) (*cmdutil.AgentEnv, *filesystem.Toolset, error) {
	if o.Target.Agent == "" {
		return nil, nil, cmdutil.FlagErrorf("massgen tools %s: --agent is required", cmd)
	}
	env, err := o.OpenAgent(ctx, o.Target)
	if err != nil {
		return nil, nil, err
	}
	ts, err := env.Agent.Toolset(env.Role)
	if err != nil {
		_ = env.Close()
		return nil, nil, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	if env.Config.CommandSandbox == sandbox.ModeNone {
		fmt.Fprintln(o.IO.ErrOut, "warning: command_sandbox: none: execute_command runs WITHOUT a kernel sandbox")
	}
	return env, ts, nil
}

type toolOut struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
	Write       bool           `json:"write"`
}

func listRun(ctx context.Context, o *Options) error {
	env, ts, err := o.open(ctx, "list")
	if err != nil {
		return err
	}
	defer env.Close()
	return printTools(o.IO.Out, ts.Tools(), o.JSON)
}

func printTools(w io.Writer, tools []filesystem.Tool, asJSON bool) error {
	if asJSON {
		out := make([]toolOut, 0, len(tools))
		for _, t := range tools {
			out = append(out, toolOut{t.Name, t.Description, t.Parameters, t.Write})
		}
		enc := json.NewEncoder(termtext.JSONWriter(w))
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for i, t := range tools {
		if i > 0 {
			fmt.Fprintln(w)
		}
		kind := "read"
		if t.Write {
			kind = "write"
		}
		// An MCP server chose the names and descriptions of its tools.
		fmt.Fprintf(w, "%s (%s)%s\n", termtext.Line(t.Name), kind, termtext.Line(argList(t.Parameters)))
		for _, line := range strings.Split(strings.TrimSpace(t.Description), "\n") {
			fmt.Fprintf(w, "    %s\n", termtext.Text(line))
		}
	}
	return nil
}

// argList renders a schema's properties as "  args: a*, b" (* = required).
func argList(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return ""
	}
	req := map[string]bool{}
	switch r := schema["required"].(type) {
	case []string:
		for _, n := range r {
			req[n] = true
		}
	case []any:
		for _, n := range r {
			if s, ok := n.(string); ok {
				req[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		if req[n] {
			n += "*"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return "  args: " + strings.Join(names, ", ")
}

func callRun(ctx context.Context, o *Options) error {
	var probe map[string]any
	if err := json.Unmarshal([]byte(o.Args), &probe); err != nil {
		return cmdutil.FlagErrorf("massgen tools call: JSON_ARGS %q is not a JSON object: %v", o.Args, err)
	}
	env, ts, err := o.open(ctx, "call")
	if err != nil {
		return err
	}
	defer env.Close()
	// A tool of ours that this agent is not offered (a file tool without a workspace, a write
	// tool for a read-only agent) is refused (exit 1); a name nobody offers is a usage error.
	offered := map[string]bool{}
	for _, t := range ts.Tools() {
		offered[t.Name] = true
	}
	if _, builtin := filesystem.Builtin(o.Tool); !offered[o.Tool] && !builtin {
		names := make([]string, 0, len(offered))
		for n := range offered {
			names = append(names, n)
		}
		sort.Strings(names)
		return cmdutil.FlagErrorf("massgen tools call: unknown tool %q (agent %s is offered: %s)", o.Tool, o.Target.Agent, strings.Join(names, ", "))
	}
	res := ts.Call(ctx, o.Tool, json.RawMessage(o.Args))
	// Written as is (not through fmt, which would copy a result of many MiB into its buffer),
	// hidden characters escaped the JSON way (the value is unchanged).
	_, _ = o.IO.Out.Write(termtext.JSON([]byte(res.Content)))
	_, _ = io.WriteString(o.IO.Out, "\n")
	if res.IsError {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
}
