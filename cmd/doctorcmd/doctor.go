// Package doctorcmd implements `massgen doctor`: whether everything a run needs is in place here
// (API keys, MCP server commands, a command sandbox, a writable .massgen/, a valid config), each
// fact taken from the code the run itself uses, with exit 0 when all is well and 1 otherwise.
package doctorcmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/versioncmd"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/internal/vocab"
)

// Statuses of a check.
const (
	statusOK          = "ok"
	statusFail        = "FAIL" // keeps a run from starting or working: exit 1
	statusWarn        = "warn" // worth knowing; does not fail doctor
	statusUnavailable = "-"    // an alternative that does not work here (another one does)
	statusInfo        = ""
)

// check is one line of the report.
type check struct {
	Name   string
	Status string
	Detail string
}

// section is a titled group of checks.
type section struct {
	Title  string
	Checks []check
}

// Options are the inputs of `massgen doctor`.
type Options struct {
	IO         *cmdutil.IOStreams
	LoadConfig func(name string) (*configs.Config, []configs.Warning, error)
	Getwd      func() (string, error)
	HomeDir    func() (string, error)
	LookupEnv  func(string) (string, bool)
	LookPath   func(string) (string, error) // nil: exec.LookPath
	Version    func() versioncmd.Info

	ConfigName string // --config
}

// NewCmd returns the `doctor` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, LoadConfig: f.LoadConfig, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv,
		LookPath: f.LookPath, Version: versioncmd.Read}
	cmd := &cobra.Command{
		Use:   "doctor [--config FILE]",
		Short: "Check that everything a run needs is in place here (exit 0) or say what is missing (exit 1)",
		Long: `Reports, with the checks a run makes before it starts:
  - the version, and which config is used (the lookup order) and which .env files are read;
  - each agent's API key, by variable name (values are never printed);
  - each MCP server command, found on PATH or not;
  - the command sandboxes that work here, why the others do not, and the one the config uses;
  - the network each agent's commands get (command_network) and how it is enforced here;
  - the config's findings (those of massgen configs validate);
  - whether .massgen/ (where runs keep their state) is writable.
Exit 0 when all is well, 1 when something would keep a run from starting or working.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return Run(opts) },
	}
	cmd.Flags().StringVarP(&opts.ConfigName, "config", "c", "", "config to check (default: the one a run would use)")
	return cmd
}

// Run prints the report on stdout.
func Run(opts *Options) error {
	lookPath := opts.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	// The project a run from here works in (its .massgen/ found from any folder below it):
	// the default config and the state folder are the run's, not the current directory's.
	wd, proj, err := cmdutil.FindProject(nil, opts.Getwd, opts.HomeDir)
	if err != nil {
		return err
	}
	home, _ := opts.HomeDir()

	v := opts.Version()
	commit := v.Commit
	if commit == "" {
		commit = "unknown"
	} else if v.Modified {
		commit += " (modified)"
	}
	sections := []section{{Title: "Version", Checks: []check{{Status: statusInfo,
		Name: fmt.Sprintf("massgen %s, commit %s, %s %s", v.Version, commit, v.GoVersion, v.Platform)}}}}

	cfgSec, cfg, loadProbs, warnings := configSection(opts, wd, proj, home)
	sections = append(sections, cfgSec)
	var probs []configs.Problem
	if cfg != nil {
		var more []configs.Warning
		probs, more = cmdutil.CheckConfig(cfg, lookPath)
		warnings = append(warnings, more...)
	}
	shown := map[string]bool{} // problem keys reported in the keys and MCP sections
	sections = append(sections,
		keysSection(cfg, probs, shown, opts.LookupEnv),
		mcpSection(cfg, probs, shown, lookPath))

	var configured sandbox.Mode
	if cfg != nil {
		configured = cfg.CommandSandbox
	}
	modes, chosen := sandboxChecks(configured)
	if chosen.Status == statusFail && (cfg == nil || !cfg.HasWorkspaces()) {
		// No agent runs commands: a missing sandbox is worth knowing, not a failure.
		chosen.Status = statusWarn
		if cfg != nil {
			chosen.Detail += " (no agent has a workspace, so none runs commands)"
		}
	}
	sections = append(sections, section{Title: "Command sandbox", Checks: append(modes, chosen)},
		section{Title: "Command network", Checks: networkChecks(cfg)})

	var findings []check
	for _, p := range append(loadProbs, probs...) {
		if !shown[p.Key] || p.Key == "" {
			findings = append(findings, check{Status: statusFail, Name: p.String()})
		}
	}
	for _, w := range warnings {
		findings = append(findings, check{Status: statusWarn, Name: w.String()})
	}
	shownProbs := len(loadProbs) + len(probs) // all shown in the sections above when findings is empty
	switch {
	case len(findings) > 0:
	case cfg != nil && shownProbs > 0:
		// Not "ok": the problems above keep a run from starting.
		what := fmt.Sprintf("the %d problems above are", shownProbs)
		if shownProbs == 1 {
			what = "the problem above is"
		}
		findings = append(findings, check{Status: statusInfo, Name: "nothing more: " + what + " what keeps a run from starting"})
	case cfg != nil:
		findings = append(findings, check{Status: statusOK, Name: "no problem or warning (massgen configs validate agrees)"})
	default:
		findings = append(findings, check{Status: statusInfo, Name: "not checked: no config"})
	}
	sections = append(sections, section{Title: "Config findings", Checks: findings},
		section{Title: "State", Checks: []check{stateCheck(proj)}})

	failures := render(opts.IO.Out, sections)
	if failures > 0 {
		fmt.Fprintf(opts.IO.Out, "\n%d %s to fix before a run.\n", failures, plural(failures, "problem"))
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	fmt.Fprintln(opts.IO.Out, "\nEverything a run needs is in place.")
	return nil
}

// configSection loads the config a run would use (or --config) and says where it was looked
// for, and which .env files are read.
func configSection(opts *Options, wd, proj, home string) (section, *configs.Config, []configs.Problem, []configs.Warning) {
	sec := section{Title: "Config"}
	name := opts.ConfigName
	if name == "" {
		def, _, ok := configs.DefaultConfigName(proj, home, opts.LookupEnv)
		var looked []string
		for _, c := range configs.ConfigCandidates(proj, home, opts.LookupEnv) {
			mark := "absent"
			switch {
			case ok && c == def:
				mark = "used"
			case exists(c):
				mark = "not used"
			}
			looked = append(looked, fmt.Sprintf("%s (%s)", c, mark))
		}
		sec.Checks = append(sec.Checks, check{Status: statusInfo, Name: "lookup without --config", Detail: strings.Join(looked, ", ")})
		if !ok {
			sec.Checks = append(sec.Checks, check{Status: statusWarn, Name: "no default config",
				Detail: "runs need --config FILE (massgen configs list shows the built-ins); check one with massgen doctor --config FILE"})
			return withEnvFiles(sec, opts, wd, home), nil, nil, nil
		}
	}
	cfg, warnings, err := opts.LoadConfig(name)
	sec = withEnvFiles(sec, opts, wd, home)
	if err != nil {
		var ve *configs.ValidationError
		if errors.As(err, &ve) {
			sec.Checks = append(sec.Checks, check{Status: statusFail, Name: "config", Detail: "does not load (see Config findings)"})
			return sec, nil, ve.Problems, warnings
		}
		sec.Checks = append(sec.Checks, check{Status: statusFail, Name: "config", Detail: err.Error()})
		return sec, nil, nil, warnings
	}
	sec.Checks = append(sec.Checks, check{Status: statusOK, Name: "config",
		Detail: fmt.Sprintf("%s (%d %s)", cfg.Source, len(cfg.Agents), plural(len(cfg.Agents), "agent"))})
	return sec, cfg, nil, warnings
}

func withEnvFiles(sec section, opts *Options, wd, home string) section {
	var files []string
	for _, f := range configs.EnvFiles(wd, home, opts.LookupEnv) {
		mark := "absent"
		if exists(f) {
			mark = "read"
		}
		files = append(files, fmt.Sprintf("%s (%s)", f, mark))
	}
	sec.Checks = append(sec.Checks, check{Status: statusInfo, Name: ".env files, lowest priority first", Detail: strings.Join(files, ", ")})
	return sec
}

// keysSection tells, per agent, which variable holds its API key and whether it is set. A missing
// key is the problem CheckConfig found (the run's own check); KeyInfo only names the source.
func keysSection(cfg *configs.Config, probs []configs.Problem, shown map[string]bool, lookupEnv func(string) (string, bool)) section {
	sec := section{Title: "API keys"}
	if cfg == nil {
		sec.Checks = append(sec.Checks, check{Status: statusInfo, Name: "not checked: no config"})
		return sec
	}
	for i, a := range cfg.Agents {
		name := fmt.Sprintf("%s (%s)", a.ID, a.Backend.Type)
		key := fmt.Sprintf("agents[%d].backend.api_key", i)
		if p, ok := problemAt(probs, key); ok {
			shown[key] = true
			msg := strings.TrimPrefix(strings.TrimPrefix(p.Message, key+": "), fmt.Sprintf("agent %q: ", a.ID))
			sec.Checks = append(sec.Checks, check{Name: name, Status: statusFail, Detail: msg})
			continue
		}
		if !cmdutil.Runnable(a.Backend) {
			sec.Checks = append(sec.Checks, check{Name: name, Status: statusInfo, Detail: "not checked: the backend cannot run (see Config findings)"})
			continue
		}
		ks, err := backends.KeyInfo(a.Backend, cfg.LookupEnv)
		c := check{Name: name, Status: statusOK}
		switch {
		case err != nil:
			c.Status, c.Detail = statusFail, err.Error()
		case !ks.Needed:
			c.Detail = "no key needed"
		case ks.From == "api_key":
			c.Detail = "api_key is set in the config"
		default:
			where := "a .env file"
			if _, ok := lookupEnv(ks.From); ok {
				where = "the environment"
			}
			c.Detail = fmt.Sprintf("%s is set (in %s)", ks.From, where)
		}
		sec.Checks = append(sec.Checks, c)
	}
	return sec
}

// mcpSection tells, per MCP server, whether its command is found (the run's own check, from
// CheckConfig) and where.
func mcpSection(cfg *configs.Config, probs []configs.Problem, shown map[string]bool, lookPath func(string) (string, error)) section {
	sec := section{Title: "MCP servers"}
	if cfg == nil {
		sec.Checks = append(sec.Checks, check{Status: statusInfo, Name: "not checked: no config"})
		return sec
	}
	for i, a := range cfg.Agents {
		for j, s := range a.Backend.MCPServers {
			name := fmt.Sprintf("%s: %s", a.ID, s.Name)
			key := fmt.Sprintf("agents[%d].backend.mcp_servers[%d].command", i, j)
			c := check{Name: name, Status: statusOK}
			if p, ok := problemAt(probs, key); ok {
				shown[key] = true
				c.Status, c.Detail = statusFail, strings.TrimPrefix(p.Message, key+": ")
			} else if cmd := strings.TrimSpace(s.Command); cmd != "" && (s.Type == "" || s.Type == vocab.MCPStdio) {
				c.Detail = cmd
				if p, err := lookPath(cmd); err == nil {
					c.Detail = fmt.Sprintf("%s (%s)", cmd, p)
				} else {
					c.Detail += " (looked up in the agent's workspace when the run starts)"
				}
			} else {
				c.Status, c.Detail = statusInfo, s.URL+" (a URL: reached when the run starts)"
			}
			sec.Checks = append(sec.Checks, c)
		}
	}
	if len(sec.Checks) == 0 {
		sec.Checks = append(sec.Checks, check{Status: statusInfo, Name: "none configured"})
	}
	return sec
}

func problemAt(probs []configs.Problem, key string) (configs.Problem, bool) {
	for _, p := range probs {
		if p.Key == key {
			return p, true
		}
	}
	return configs.Problem{}, false
}

// stateCheck says whether runs can keep their state in the project's .massgen/: it is a
// writable directory, or it does not exist yet and the project folder is writable. It writes and
// removes a temporary file to know.
func stateCheck(wd string) check {
	dir := layout.OfProject(wd).Dir()
	c := check{Name: dir, Status: statusOK}
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		c.Status, c.Detail = statusFail, "is not a directory: runs cannot keep their workspaces, sessions and logs"
	case err == nil:
		if err := probeWrite(dir); err != nil {
			c.Status, c.Detail = statusFail, "is not writable: "+err.Error()
		} else {
			c.Detail = "writable"
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := probeWrite(wd); err != nil {
			c.Status, c.Detail = statusFail, "does not exist and cannot be created: "+err.Error()
		} else {
			c.Detail = "does not exist yet; the first run creates it"
		}
	default:
		c.Status, c.Detail = statusFail, err.Error()
	}
	return c
}

func probeWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".massgen-doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// render prints the sections and returns the number of failed checks.
func render(w io.Writer, sections []section) int {
	failures := 0
	for i, s := range sections {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, s.Title)
		for _, c := range s.Checks {
			if c.Status == statusFail {
				failures++
			}
			line := c.Name
			if c.Detail != "" {
				line += ": " + c.Detail
			}
			// Details echo what servers, files and tools said: cleaned for the terminal.
			fmt.Fprintf(w, "  %-5s %s\n", c.Status, termtext.Line(line))
		}
	}
	return failures
}

func exists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
