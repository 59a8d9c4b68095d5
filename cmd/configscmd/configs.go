// Package configscmd implements `massgen configs`: list the built-in configs, validate config
// files, and show a config (as written, or resolved with every path absolute).
package configscmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
)

// NewCmd returns the `configs` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "configs",
		Short: "List, validate and show configs",
		Long: `Configs are MassGen-style YAML files. --config takes a path, a built-in name, or
@examples/NAME (built-ins are listed by "massgen configs list").`,
	}
	cmd.AddCommand(newListCmd(f), newValidateCmd(f), newShowCmd(f))
	return cmd
}

// ListOptions are the inputs of `configs list`.
type ListOptions struct {
	IO *cmdutil.IOStreams
}

func newListCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ListOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in configs (use them as --config @examples/NAME)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return listRun(opts) },
	}
}

func listRun(opts *ListOptions) error {
	for _, name := range configs.Examples() {
		fmt.Fprintf(opts.IO.Out, "@examples/%s\n", name)
	}
	return nil
}

// ValidateOptions are the inputs of `configs validate`.
type ValidateOptions struct {
	IO     *cmdutil.IOStreams
	Loader func(name string) (*configs.Config, []configs.Warning, error)
	Files  []string
}

func newValidateCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ValidateOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check config files (exit 0 when valid, 2 with file:line: message when not)",
		Long: `Checks each config's YAML, schema and values. Problems are printed as file:line: message
and make the command exit 2. Unknown keys and context paths that do not exist here are
warnings (context paths are checked again when a run starts).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			opts.Loader = loader(f)
			return validateRun(opts)
		},
	}
}

func validateRun(opts *ValidateOptions) error {
	failed := 0
	for _, name := range opts.Files {
		cfg, warnings, err := opts.Loader(name)
		PrintWarnings(opts.IO.ErrOut, warnings)
		if err != nil {
			failed++
			PrintLoadError(opts.IO.ErrOut, name, err)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "%s: ok (%d %s)\n", name, len(cfg.Agents), plural(len(cfg.Agents), "agent"))
	}
	if failed > 0 {
		return cmdutil.Silent(cmdutil.ExitUsage)
	}
	return nil
}

// ShowOptions are the inputs of `configs show`.
type ShowOptions struct {
	IO       *cmdutil.IOStreams
	Loader   func(name string) (*configs.Config, []configs.Warning, error)
	Name     string
	Resolved bool
}

func newShowCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ShowOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "show [--resolved] FILE",
		Short: "Print a config: as written, or --resolved (effective values, every path absolute)",
		Long: `Without --resolved, prints the config file as written (handy to copy a built-in:
massgen configs show @examples/NAME > my.yaml). With --resolved, prints the effective config
as YAML: single agent: turned into agents:, ${VAR} expanded, every path absolute and relocated
under ./.massgen/, defaults filled in. API keys and MCP server env values are masked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.Loader = loader(f)
			return showRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Resolved, "resolved", false, "print the effective config with every path absolute")
	return cmd
}

func showRun(opts *ShowOptions) error {
	cfg, warnings, err := opts.Loader(opts.Name)
	PrintWarnings(opts.IO.ErrOut, warnings)
	if err != nil {
		PrintLoadError(opts.IO.ErrOut, opts.Name, err)
		return cmdutil.Silent(cmdutil.ExitUsage)
	}
	if !opts.Resolved {
		_, err := opts.IO.Out.Write(cfg.Raw())
		return err
	}
	enc := yaml.NewEncoder(opts.IO.Out)
	enc.SetIndent(2)
	if err := enc.Encode(cfg.Redacted()); err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("configs show: %w", err))
	}
	return enc.Close()
}

// loader loads configs the way a run does: relative to the current directory, with the
// user's home and environment.
func loader(f *cmdutil.Factory) func(string) (*configs.Config, []configs.Warning, error) {
	return func(name string) (*configs.Config, []configs.Warning, error) {
		o, err := LoadOptionsFor(f, name)
		if err != nil {
			return nil, nil, err
		}
		return configs.Load(o)
	}
}

// LoadOptionsFor builds configs.LoadOptions for name from the factory (current directory,
// home, environment).
func LoadOptionsFor(f *cmdutil.Factory, name string) (configs.LoadOptions, error) {
	wd, err := f.Getwd()
	if err != nil {
		return configs.LoadOptions{}, fmt.Errorf("current directory: %w", err)
	}
	home, _ := f.HomeDir() // no home: ~/.massgen/.env is simply skipped
	return configs.LoadOptions{Name: name, BaseDir: wd, Home: home, LookupEnv: f.LookupEnv}, nil
}

// PrintWarnings prints each warning as "file:line: warning: message".
func PrintWarnings(w io.Writer, warnings []configs.Warning) {
	for _, x := range warnings {
		fmt.Fprintln(w, x.String())
	}
}

// PrintLoadError prints a load failure: one "file:line: message" per problem.
func PrintLoadError(w io.Writer, name string, err error) {
	var ve *configs.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Fprintln(w, p.String())
		}
		return
	}
	fmt.Fprintf(w, "%s: %v\n", name, err)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
