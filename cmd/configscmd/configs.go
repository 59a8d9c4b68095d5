// Package configscmd implements `massgen configs`: list the built-in configs, validate config
// files as a run would before calling a model, and show a config (as written, or resolved with
// every path absolute and every key massgen does not act on marked).
package configscmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/termtext"
)

// NewCmd returns the `configs` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "configs",
		Aliases: []string{"config"},
		Short:   "List, validate and show configs",
		Long: `Configs are MassGen-style YAML files. --config takes a path, a built-in name, or
@examples/NAME (built-ins are listed by "massgen configs list").`,
	}
	cmd.AddCommand(newListCmd(f), newValidateCmd(f), newShowCmd(f))
	return cmd
}

// ListOptions are the inputs of `configs list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Loader func(name string) (*configs.Config, []configs.Warning, error)
	// LookPath finds MCP server commands (nil: exec.LookPath).
	LookPath func(string) (string, error)
	// Dial checks that a local model server listens at addr (nil: a TCP connect, 300 ms).
	Dial func(addr string) error
}

// dialLocal is ListOptions.Dial's default: a TCP connect to a server on this machine, which is
// refused at once when nothing listens.
func dialLocal(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return err
	}
	return c.Close()
}

func newListCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ListOptions{IO: f.IO, LookPath: f.LookPath}
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in configs: what each is, its agents, the keys it needs, and whether it can run here",
		Long: `Lists the built-in configs (use them as --config @examples/NAME). For each: its description
(the first line of the file), its agents' backends and models, the API keys it needs (the
variable names, and whether each is set), and, when it cannot run here, why: the checks a run
makes before it starts (a backend type massgen refuses, a missing key, an MCP command not on
PATH) and context paths that do not exist. A config whose agents talk to a model server on this
machine (lmstudio, vllm, sglang, a localhost base_url) is "ready" only while that server accepts
connections (a TCP connect to it, nothing sent); otherwise it "needs local server".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Loader = loader(f)
			return listRun(opts)
		},
	}
}

func listRun(opts *ListOptions) error {
	names := configs.Examples()
	ready, local := 0, 0
	for i, name := range names {
		if i > 0 {
			fmt.Fprintln(opts.IO.Out)
		}
		e := describeExample(opts, name)
		status := "ready"
		switch {
		case len(e.why) > 0:
			status = "cannot run here"
			e.why = append(e.why, e.servers...)
		case len(e.servers) > 0:
			status = "needs local server"
			e.why = e.servers
			local++
		default:
			ready++
		}
		fmt.Fprintf(opts.IO.Out, "@examples/%s  (%s)\n    %s\n", name, status, e.description)
		if e.agents != "" {
			fmt.Fprintf(opts.IO.Out, "    agents: %s\n", e.agents)
		}
		fmt.Fprintf(opts.IO.Out, "    keys:   %s\n", e.keys)
		if len(e.why) > 0 {
			fmt.Fprintf(opts.IO.Out, "    why:    %s\n", strings.Join(e.why, "; "))
		}
	}
	more := ""
	if local > 0 {
		more = fmt.Sprintf(" (%d more once their local model server runs)", local)
	}
	fmt.Fprintf(opts.IO.Out, "\n%d of %d built-ins can run here%s. massgen doctor --config @examples/NAME says more about one.\n", ready, len(names), more)
	return nil
}

// example is what `configs list` shows of a built-in.
type example struct {
	description string
	agents      string   // "gemini gemini-2.5-flash, 2 × openai gpt-5-nano, ..."
	keys        string   // "OPENAI_API_KEY (set), XAI_API_KEY (missing)", or "none needed"
	why         []string // why it cannot run here; empty when it can
	servers     []string // local model servers it needs that do not answer ("no server at localhost:1234 (lmstudio)")
}

// describeExample loads a built-in as a run would and asks the run's own checks
// (cmdutil.CheckConfig) whether it could start here.
func describeExample(opts *ListOptions, name string) example {
	data, _ := configs.Example(name)
	e := example{description: configs.Description(data), keys: "none needed"}
	cfg, _, err := opts.Loader("@examples/" + name)
	if err != nil {
		e.why = append(e.why, "does not load: "+strings.ReplaceAll(err.Error(), "\n", "; "))
		return e
	}
	e.agents = agentSummary(cfg)

	var keys []string
	seen := map[string]bool{}
	for _, a := range cfg.Agents {
		if !cmdutil.Runnable(a.Backend) {
			continue
		}
		ks, err := backends.KeyInfo(a.Backend, cfg.LookupEnv)
		if err != nil || !ks.Needed {
			continue
		}
		k := strings.Join(ks.Vars, " or ")
		if ks.From == "api_key" {
			k = "api_key in the config"
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		if ks.From == "" {
			keys = append(keys, k+" (missing)")
		} else {
			keys = append(keys, k+" (set)")
		}
	}
	if len(keys) > 0 {
		e.keys = strings.Join(keys, ", ")
	}

	seenWhy := map[string]bool{}
	addWhy := func(s string) {
		if !seenWhy[s] {
			seenWhy[s] = true
			e.why = append(e.why, s)
		}
	}
	probs, _ := cmdutil.CheckConfig(cfg, opts.LookPath) // warnings do not keep a run from starting
	for _, p := range probs {
		addWhy(shortReason(cfg, p))
	}
	for _, cp := range cfg.Orchestrator.ContextPaths {
		if _, err := os.Stat(cp.Path); err != nil {
			addWhy(fmt.Sprintf("context path %s does not exist", cp.Path))
		}
	}
	dial := opts.Dial
	if dial == nil {
		dial = dialLocal
	}
	probed := map[string]bool{}
	for _, a := range cfg.Agents {
		addr, ok := backends.LocalServer(a.Backend)
		if !ok || probed[addr] {
			continue
		}
		probed[addr] = true
		if dial(addr) != nil {
			e.servers = append(e.servers, fmt.Sprintf("no server at %s (%s; start it, or set base_url)", addr, a.Backend.Type))
		}
	}
	return e
}

// shortReason says in a few words what a problem found by CheckConfig is about: the variables
// of a missing key, a backend type that cannot run; other problems keep their message.
func shortReason(cfg *configs.Config, p configs.Problem) string {
	for i, a := range cfg.Agents {
		prefix := fmt.Sprintf("agents[%d].backend", i)
		switch p.Key {
		case prefix + ".api_key":
			if ks, err := backends.KeyInfo(a.Backend, cfg.LookupEnv); err == nil && ks.From == "" {
				return "no " + strings.Join(ks.Vars, " or ")
			}
		case prefix + ".type":
			bt, _ := configs.LookupBackendType(a.Backend.Type)
			if bt.Status == configs.Refused {
				// The first clause of the key table's note ("cannot run yet"); validate shows all.
				why, _, _ := strings.Cut(bt.Note, ":")
				why, _, _ = strings.Cut(why, ";")
				return fmt.Sprintf("backend %s: %s", a.Backend.Type, strings.TrimSuffix(why, "."))
			}
		}
	}
	return strings.TrimPrefix(p.Message, p.Key+": ")
}

// agentSummary is "type model, ..." per agent, identical backends counted ("20 × gemini
// gemini-2.5-pro").
func agentSummary(cfg *configs.Config) string {
	var order []string
	count := map[string]int{}
	for _, a := range cfg.Agents {
		k := a.Backend.Type
		if a.Backend.Model != "" {
			k += " " + a.Backend.Model
		}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = k
		if count[k] > 1 {
			parts[i] = fmt.Sprintf("%d × %s", count[k], k)
		}
	}
	return strings.Join(parts, ", ")
}

// ValidateOptions are the inputs of `configs validate`.
type ValidateOptions struct {
	IO     *cmdutil.IOStreams
	Loader func(name string) (*configs.Config, []configs.Warning, error)
	// LookPath finds MCP server commands (nil: exec.LookPath).
	LookPath func(string) (string, error)
	Files    []string
	Strict   bool // --strict: warnings are errors
	JSON     bool // --json: findings as JSON on stdout
}

func newValidateCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ValidateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "validate [--strict] [--json] FILE...",
		Short: "Check config files before a run (exit 0 when valid, 2 with file:line: message when not)",
		Long: `Checks each config as a run would, before any model is called: YAML, schema and values;
keys massgen refuses (exit 2) or ignores (a warning saying what happens instead); unknown keys,
with the key they most likely meant; backend types that cannot run; a missing model; the API key
of every agent (by variable name); options a backend refuses; MCP server commands not on PATH;
context paths that do not exist here (a warning: a run checks them again). A run makes the same
checks before its first prompt and refuses to start (exit 2) on any error. docs/massgen-compatibility.md lists every key's status.

--strict makes warnings errors. --json prints {"valid", "files", "findings"} on stdout, each
finding with file, line, key, severity, message and suggestion.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			opts.Loader = loader(f)
			return validateRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "treat warnings as errors")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the findings as JSON")
	return cmd
}

// Finding is one result of `configs validate --json`.
type Finding struct {
	File       string `json:"file"`
	Line       int    `json:"line,omitempty"`
	Key        string `json:"key,omitempty"`
	Severity   string `json:"severity"` // "error" or "warning"
	Message    string `json:"message"`
	Suggestion string `json:"suggestion,omitempty"`
}

// FileResult summarizes one file of `configs validate --json`.
type FileResult struct {
	File     string `json:"file"`
	Valid    bool   `json:"valid"`
	Agents   int    `json:"agents"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
}

// Report is the output of `configs validate --json`.
type Report struct {
	Valid    bool         `json:"valid"`
	Files    []FileResult `json:"files"`
	Findings []Finding    `json:"findings"`
	// Notes say which API key variable is used where more than one is set (each note once).
	Notes []string `json:"notes,omitempty"`
}

func validateRun(opts *ValidateOptions) error {
	report := Report{Valid: true, Files: []FileResult{}, Findings: []Finding{}}
	noted := map[string]bool{}
	for _, name := range opts.Files {
		res, probs, warns, notes := validateFile(opts, name)
		for _, n := range notes {
			if noted[n] {
				continue
			}
			noted[n] = true
			report.Notes = append(report.Notes, n)
			if !opts.JSON {
				fmt.Fprintln(opts.IO.ErrOut, "note: "+n)
			}
		}
		if opts.Strict {
			for _, w := range warns {
				probs = append(probs, configs.Problem(w))
			}
			warns = nil
		}
		res.Errors, res.Warnings, res.Valid = len(probs), len(warns), len(probs) == 0
		report.Valid = report.Valid && res.Valid
		report.Files = append(report.Files, res)
		if opts.JSON {
			report.Findings = append(report.Findings, findings(name, probs, warns)...)
			continue
		}
		PrintWarnings(opts.IO.ErrOut, warns)
		for _, p := range probs {
			fmt.Fprintln(opts.IO.ErrOut, p.String())
		}
		if res.Valid {
			fmt.Fprintf(opts.IO.Out, "%s: ok (%d %s)\n", name, res.Agents, plural(res.Agents, "agent"))
		}
	}
	if opts.JSON {
		enc := json.NewEncoder(termtext.JSONWriter(opts.IO.Out))
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("configs validate: %w", err))
		}
	}
	if !report.Valid {
		return cmdutil.Silent(cmdutil.ExitUsage)
	}
	return nil
}

// validateFile loads one config and runs every check a run would make before calling a model.
func validateFile(opts *ValidateOptions, name string) (FileResult, []configs.Problem, []configs.Warning, []string) {
	res := FileResult{File: name}
	cfg, warns, err := opts.Loader(name)
	if err != nil {
		var ve *configs.ValidationError
		if errors.As(err, &ve) {
			return res, ve.Problems, warns, nil
		}
		return res, []configs.Problem{{File: name, Message: err.Error()}}, warns, nil
	}
	res.Agents = len(cfg.Agents)
	probs, more := cmdutil.CheckConfig(cfg, opts.LookPath)
	probs = append(probs, CheckCustomTools(context.Background(), cfg, probs)...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	warns = append(warns, more...)
	sort.SliceStable(warns, func(i, j int) bool { return warns[i].Line < warns[j].Line })
	return res, probs, warns, keyNotes(cfg)
}

// keyNotes say, for each backend type whose key more than one set variable could give, which
// one massgen uses ("gemini: API key from GEMINI_API_KEY; GOOGLE_API_KEY is set too and not used").
func keyNotes(cfg *configs.Config) []string {
	var notes []string
	for _, a := range cfg.Agents {
		if !cmdutil.Runnable(a.Backend) {
			continue
		}
		ks, err := backends.KeyInfo(a.Backend, cfg.LookupEnv)
		if err != nil || ks.From == "" || ks.From == "api_key" {
			continue
		}
		var unused []string
		for _, v := range ks.Vars {
			if val, ok := cfg.LookupEnv(v); ok && strings.TrimSpace(val) != "" && v != ks.From {
				unused = append(unused, v)
			}
		}
		if len(unused) == 0 {
			continue
		}
		verb := "is"
		if len(unused) > 1 {
			verb = "are"
		}
		notes = append(notes, fmt.Sprintf("%s: API key from %s; %s %s set too and not used", a.Backend.Type, ks.From, strings.Join(unused, " and "), verb))
	}
	return notes
}

func findings(file string, probs []configs.Problem, warns []configs.Warning) []Finding {
	var out []Finding
	add := func(severity, f string, line int, key, msg, sugg string) {
		if f == "" {
			f = file
		}
		if key != "" {
			msg = strings.TrimPrefix(msg, key+": ")
		}
		out = append(out, Finding{File: f, Line: line, Key: key, Severity: severity, Message: msg, Suggestion: sugg})
	}
	for _, p := range probs {
		add("error", p.File, p.Line, p.Key, p.Message, p.Suggestion)
	}
	for _, w := range warns {
		add("warning", w.File, w.Line, w.Key, w.Message, w.Suggestion)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
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
under ./.massgen/, defaults filled in. API keys and MCP server env values are masked. A key
massgen does not act on carries "# ignored: what happens instead" on its line, a backend type
that cannot run "# refused: why".`,
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
	out, err := cfg.ResolvedYAML()
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("configs show: %w", err))
	}
	_, err = opts.IO.Out.Write(out)
	return err
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
	return configs.LoadOptions{Name: name, BaseDir: wd, Home: home, LookupEnv: f.LookupEnv, Actions: filesystem.MassGenActions()}, nil
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
