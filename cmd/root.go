// Package cmd wires the cobra command tree: it parses flags, calls the packages that do the work
// (the run itself is internal/app's), and prints. It holds no logic of its own beyond that.
package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/massgen-go/massgen/cmd/changescmd"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/configscmd"
	"github.com/massgen-go/massgen/cmd/doctorcmd"
	"github.com/massgen-go/massgen/cmd/logscmd"
	"github.com/massgen-go/massgen/cmd/mcpcmd"
	"github.com/massgen-go/massgen/cmd/permissionscmd"
	"github.com/massgen-go/massgen/cmd/sandboxcmd"
	"github.com/massgen-go/massgen/cmd/sessionscmd"
	"github.com/massgen-go/massgen/cmd/toolscmd"
	"github.com/massgen-go/massgen/cmd/trashcmd"
	"github.com/massgen-go/massgen/cmd/versioncmd"
	"github.com/massgen-go/massgen/internal/app"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/internal/vocab"
)

// NewRootCmd builds `massgen [flags] [QUESTION]` and its subcommands.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	root, _ := newRootCmd(f)
	return root
}

// newRootCmd is NewRootCmd with the run's options (Execute reads whether a JSON result was
// written).
func newRootCmd(f *cmdutil.Factory) (*cobra.Command, *app.RunOptions) {
	opts := app.NewRunOptions(f)
	root := &cobra.Command{
		Use:   "massgen [flags] [QUESTION]",
		Short: "Run several LLM agents on one task; they answer, vote, and the winner delivers",
		Long: `massgen runs the agents of a MassGen-style config on a task. With QUESTION it runs once and
prints the final answer on stdout (progress and logs never go to stdout). Without QUESTION it
is interactive: one task per line (from the terminal, or each line of a piped stdin; piped
answers are separated by a line "--- turn N ---"). A one-word QUESTION a typo away from a
command is refused (exit 2); put a one-word task after --: massgen -c F -- refactor.

State lives under the project's .massgen/ (workspaces, snapshots, temp_workspaces, sessions,
logs): the nearest .massgen/ above the current directory, no higher than the git root; else the
git root's, else ./.massgen/.`,
		Example: `  massgen --config @examples/demo/two_agents_deliver --yes --context . "Write hello.txt"
  massgen --backend openai --model gpt-5 "Explain quantum computing"   # quick mode: one agent, no config
  massgen --config my.yaml --context src:write --context docs:read "Add error handling"
  massgen --config my.yaml                  # interactive; asks which context paths to add
  massgen configs list`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          rootArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Question = strings.TrimSpace(args[0])
				if opts.Question == "" {
					return cmdutil.FlagErrorf("empty QUESTION (omit it for interactive mode)")
				}
				if err := checkCommandTypo(cmd, opts.Question); err != nil {
					return err
				}
			}
			if err := applyEnvDefaults(cmd, f.LookupEnv); err != nil {
				return err
			}
			return app.RunOutput(cmd.Context(), opts)
		},
	}
	fl := root.Flags()
	fl.StringVarP(&opts.ConfigName, "config", "c", "", "config: a YAML file, a built-in name, or @examples/NAME (default: config.yaml in the project's .massgen/, then ~/.config/massgen/, then ~/.massgen/)")
	fl.StringArrayVar(&opts.Contexts, "context", nil, "add a context path PATH[:read|write] (default write; repeatable; skips the prompt)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "accept defaults and never prompt")
	fl.BoolVar(&opts.Debug, "debug", false, "debug-level logs (in .massgen/logs/)")
	fl.StringVar(&opts.Display, "display", string(vocab.DisplayAuto), "progress display on stderr: "+strings.Join(vocab.Words[vocab.Display](), ", "))
	fl.StringVar(&opts.SessionID, "session", "", "continue the session with this ID, with its config and context paths (flags given override them)")
	fl.BoolVar(&opts.Continue, "continue", false, "continue the latest session with its config and context paths (flags given override them)")
	fl.StringVar(&opts.Output, "output", "text", "stdout format: text (the final answer) or json (JSON Lines events and a result object; see docs/output.md)")
	fl.StringVar(&opts.Quick.Backend, "backend", "", "quick mode: run one agent of this backend type, without a config file")
	fl.StringVar(&opts.Quick.Model, "model", "", "quick mode: the agent's model (the backend is guessed from it when --backend is not given)")
	fl.StringVar(&opts.Quick.SystemMessage, "system-message", "", "quick mode: the agent's system message")
	fl.StringVar(&opts.Quick.BaseURL, "base-url", "", "quick mode: the API endpoint (an OpenAI-compatible server for chatcompletion)")
	fl.IntVar(&opts.MaxTaskBytes, "max-task-bytes", 0, "the largest task accepted, in bytes (default: orchestrator.max_task_bytes, else 1048576)")
	fl.Float64Var(&opts.MaxCost, "max-cost", 0, "the turn's budget in USD: warnings at 50/75/90%, at 100% no model request starts and the best answer so far is presented (default: orchestrator.max_cost_usd, else none)")
	fl.BoolVar(&opts.Wait, "wait", false, "when another run works in this project, wait for it to end (default: refuse, exit 5)")

	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.AddCommand(
		configscmd.NewCmd(f),
		permissionscmd.NewCmd(f),
		toolscmd.NewCmd(f),
		sandboxcmd.NewCmd(f),
		trashcmd.NewCmd(f),
		mcpcmd.NewCmd(f),
		sessionscmd.NewCmd(f),
		changescmd.NewDiffCmd(f),
		changescmd.NewUndoCmd(f),
		versioncmd.NewCmd(f),
		logscmd.NewCmd(f),
		doctorcmd.NewCmd(f),
	)
	root.Version = versioncmd.Read().String() // --version prints what `massgen version` prints
	root.SetVersionTemplate("{{.Version}}")
	forgiveSubcommands(root)
	cmdutil.MarkUsageErrors(root)
	return root, opts
}

// Execute runs the command line and returns the process exit code.
func Execute(ctx context.Context, f *cmdutil.Factory, args []string) int {
	root, opts := newRootCmd(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	err = app.BySignal(ctx, err) // a signal's exit code, and its words
	if err == nil {
		return cmdutil.ExitOK
	}
	if cmd == root {
		app.ResultBeforeRun(opts, args, err)
	}
	if line := app.CancelledLine(err); line != "" {
		fmt.Fprintln(f.IO.ErrOut, termtext.Text(line))
	} else if cmdutil.ToPrint(err) {
		fmt.Fprintln(f.IO.ErrOut, "Error:", termtext.Text(err.Error()))
	}
	return cmdutil.CodeOf(err)
}

// applyEnvDefaults lets MASSGEN_<FLAG> environment variables (MASSGEN_CONFIG, MASSGEN_DISPLAY,
// MASSGEN_DEBUG, ...) stand in for scalar flags the user did not give; an explicit flag wins.
// A viper instance per call keeps this free of package-level state.
func applyEnvDefaults(cmd *cobra.Command, lookup func(string) (string, bool)) error {
	v := viper.New()
	var firstErr error
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Value.Type() == "stringArray" {
			return // --context values contain ':' themselves; repeatable flags stay flags only
		}
		if fl.Name == "help" || fl.Name == "version" {
			return // not settings: MASSGEN_VERSION=1.2 in a CI environment must not break runs
		}
		key := "MASSGEN_" + strings.ToUpper(strings.ReplaceAll(fl.Name, "-", "_"))
		if val, ok := lookup(key); ok {
			v.Set(fl.Name, val)
		}
		if fl.Changed || !v.IsSet(fl.Name) || firstErr != nil {
			return
		}
		if err := fl.Value.Set(v.GetString(fl.Name)); err != nil {
			firstErr = cmdutil.FlagErrorf("environment %s=%q: %w", key, v.GetString(fl.Name), err)
		}
	})
	return firstErr
}

// HandleSignals installs massgen's signal handling (see app.HandleSignals): SIGTERM and SIGHUP
// cancel the run, Ctrl-C the interactive turn in progress or the run, SIGPIPE makes writes fail.
func HandleSignals(parent context.Context) (context.Context, func()) {
	return app.HandleSignals(parent)
}
