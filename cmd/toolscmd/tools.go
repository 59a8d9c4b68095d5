// Package toolscmd implements `massgen tools`: list the tools an agent is offered and call one
// exactly as a run would (permission check, audit line, sandbox), for scripting and debugging.
package toolscmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/mcpcmd"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/filesystem/sandbox"
)

// NewCmd returns the `tools` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List an agent's tools, or call one as a run would",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.WithCode(cmdutil.ExitUsage, errors.New("massgen tools: missing subcommand (list or call)"))
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdCall(f, nil))
	return cmd
}

// Options are the flags shared by `tools list` and `tools call`.
type Options struct {
	IO        *cmdutil.IOStreams
	Getwd     func() (string, error)
	HomeDir   func() (string, error)
	LookupEnv func(string) (string, bool)
	Ctx       context.Context

	Config string
	Agent  string
	Final  bool
	JSON   bool // list: machine-readable output

	Tool string // call
	Args string // call: JSON object
}

func addCommon(cmd *cobra.Command, o *Options) {
	cmd.Flags().StringVarP(&o.Config, "config", "c", "", "config file, built-in name or @examples/NAME (required)")
	cmd.Flags().StringVar(&o.Agent, "agent", "", "agent id (required)")
	cmd.Flags().BoolVar(&o.Final, "final", false, "the final (presenting) agent's tools: context paths get their configured permission")
}

func newOptions(f *cmdutil.Factory) *Options {
	return &Options{IO: f.IO, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv}
}

// NewCmdList returns `tools list`; runF replaces listRun in tests (nil: listRun).
func NewCmdList(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:   "list --config FILE --agent ID [--final] [--json]",
		Short: "Print the tools an agent is offered, with their descriptions",
		Long: `Prints the tools the agent is offered in the given role, exactly as the model sees them:
names, descriptions (ending with the agent's directory limits) and, with --json, parameter
schemas. Write tools are absent when the agent may write nowhere; the agent's MCP servers are
started and their tools listed as mcp__<server>__<tool>.`,
		Example:       "  massgen tools list --config my.yaml --agent agent_a --final",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Ctx = cmd.Context()
			if runF != nil {
				return runF(o)
			}
			return listRun(o)
		},
	}
	addCommon(cmd, o)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON array of {name, description, parameters, write}")
	return cmd
}

// NewCmdCall returns `tools call`; runF replaces callRun in tests (nil: callRun).
func NewCmdCall(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := newOptions(f)
	cmd := &cobra.Command{
		Use:   "call --config FILE --agent ID [--final] NAME JSON_ARGS",
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
				return cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("massgen tools call: want NAME and JSON_ARGS, got %d argument(s)", len(args)))
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Ctx = cmd.Context()
			o.Tool = args[0]
			o.Args = "{}"
			if len(args) == 2 {
				o.Args = args[1]
			}
			if runF != nil {
				return runF(o)
			}
			return callRun(o)
		},
	}
	addCommon(cmd, o)
	return cmd
}

func usage(format string, a ...any) error {
	return cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf(format, a...))
}

func (o *Options) validate(cmd string) error {
	if o.Config == "" {
		return usage("massgen tools %s: --config is required", cmd)
	}
	if o.Agent == "" {
		return usage("massgen tools %s: --agent is required", cmd)
	}
	if o.Ctx == nil {
		o.Ctx = context.Background()
	}
	return nil
}

func (o *Options) build() (*mcpcmd.Built, error) {
	built, err := mcpcmd.BuildToolset(o.Ctx, mcpcmd.ToolsetRequest{
		Config: o.Config, Agent: o.Agent, Final: o.Final,
		Getwd: o.Getwd, HomeDir: o.HomeDir, LookupEnv: o.LookupEnv, Warnings: o.IO.ErrOut,
	})
	if err != nil {
		return nil, err
	}
	if built.Config != nil && built.Config.CommandSandbox == sandbox.ModeNone {
		fmt.Fprintln(o.IO.ErrOut, "warning: command_sandbox: none: execute_command runs WITHOUT a kernel sandbox")
	}
	return built, nil
}

type toolOut struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
	Write       bool           `json:"write"`
}

func listRun(o *Options) error {
	if err := o.validate("list"); err != nil {
		return err
	}
	built, err := o.build()
	if err != nil {
		return err
	}
	defer built.Close()
	tools := built.Toolset.Tools()
	return printTools(o.IO.Out, tools, o.JSON)
}

func printTools(w io.Writer, tools []filesystem.Tool, asJSON bool) error {
	if asJSON {
		out := make([]toolOut, 0, len(tools))
		for _, t := range tools {
			out = append(out, toolOut{t.Name, t.Description, t.Parameters, t.Write})
		}
		enc := json.NewEncoder(w)
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
		fmt.Fprintf(w, "%s (%s)%s\n", t.Name, kind, argList(t.Parameters))
		for _, line := range strings.Split(strings.TrimSpace(t.Description), "\n") {
			fmt.Fprintf(w, "    %s\n", line)
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

func callRun(o *Options) error {
	if err := o.validate("call"); err != nil {
		return err
	}
	var probe map[string]any
	if err := json.Unmarshal([]byte(o.Args), &probe); err != nil {
		return usage("massgen tools call: JSON_ARGS %q is not a JSON object: %v", o.Args, err)
	}
	built, err := o.build()
	if err != nil {
		return err
	}
	defer built.Close()
	// A tool of ours that is hidden for this agent (a write tool for a read-only agent) is a
	// denial (exit 1); a name nobody offers is a usage error (exit 2).
	offered := map[string]bool{}
	for _, t := range built.Toolset.Tools() {
		offered[t.Name] = true
	}
	if !offered[o.Tool] && !filesystem.IsBuiltin(o.Tool) {
		names := make([]string, 0, len(offered))
		for n := range offered {
			names = append(names, n)
		}
		sort.Strings(names)
		return usage("massgen tools call: unknown tool %q (agent %s is offered: %s)", o.Tool, o.Agent, strings.Join(names, ", "))
	}
	if a, ok := built.Config.AgentByID(o.Agent); ok && a.Backend.CWD != "" {
		if err := os.MkdirAll(a.Backend.CWD, 0o755); err != nil {
			return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("creating the workspace %s: %w", a.Backend.CWD, err))
		}
	}
	res := built.Toolset.Call(o.Ctx, o.Tool, json.RawMessage(o.Args))
	fmt.Fprintln(o.IO.Out, res.Content)
	if res.IsError {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
}
