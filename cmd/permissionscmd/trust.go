package permissionscmd

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/agentenv/permconfig"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/permissions/trust"
)

// TrustOptions are the inputs of `permissions trust`.
type TrustOptions struct {
	IO        *cmdutil.IOStreams
	Getwd     func() (string, error)
	HomeDir   func() (string, error)
	LookupEnv func(string) (string, bool)
	Now       func() time.Time

	File string // "" = ./.massgen/permissions.yaml
}

// NewCmdTrust returns `permissions trust`; runF replaces trustRun in tests (nil: trustRun).
func NewCmdTrust(f *cmdutil.Factory, runF func(*TrustOptions) error) *cobra.Command {
	opts := &TrustOptions{IO: f.IO, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Approve a rules file (.massgen/permissions.yaml, or a config with hooks) after reviewing it",
		Long: `A .massgen/permissions.yaml sets permission rules and hooks, and a config file may define
hooks: commands massgen runs outside every sandbox. Any program that can write there (an agent
with a writable context path, too) could have written them, so massgen loads such a file only
while its content is the one you approved. "massgen permissions trust" shows what FILE (default
./.massgen/permissions.yaml) would do — its mode, allow and deny rules and hooks — and records
its SHA-256 as approved, in $XDG_CONFIG_HOME/massgen/trust.json (default
~/.config/massgen/trust.json), a place no agent can read or write. Any later change needs a new
approval.`,
		Example: `  massgen permissions trust
  massgen permissions trust my-config.yaml`,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return trustRun(opts)
		},
	}
	return cmd
}

// pendingFile is a file that needs the user's approval: what it does, and the exact bytes
// shown (the ones approved).
type pendingFile struct {
	path string
	data []byte
	show func(io.Writer)
	// programs are the programs and scripts its hooks run, with their SHA-256 now: approved
	// with the file, and shown.
	programs map[string]string
}

// withPrograms finds the programs and scripts hs run (resolved from baseDir and environ's PATH,
// as a run resolves them) and hashes them.
func (pf *pendingFile) withPrograms(hs []configs.Hook, baseDir string, environ []string) (*pendingFile, error) {
	progs, err := permconfig.HookPrograms(hs, baseDir, environ)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pf.path, err)
	}
	pf.programs = progs
	return pf, nil
}

// showPrograms prints what approving pf covers besides its content.
func (pf *pendingFile) showPrograms(w io.Writer) {
	for _, p := range slices.Sorted(maps.Keys(pf.programs)) {
		fmt.Fprintf(w, "  runs %s (sha256 %s)\n", safe(p), pf.programs[p])
	}
}

func trustRun(opts *TrustOptions) error {
	wd, err := opts.Getwd()
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("current directory: %w", err))
	}
	file := opts.File
	if file == "" {
		// The project's rules file, the one a run from here loads (found from any folder below it).
		_, proj, err := cmdutil.FindProject(nil, opts.Getwd, opts.HomeDir)
		if err != nil {
			return err
		}
		file = layout.OfProject(proj).ProjectRules()
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(wd, file)
	}
	environ := os.Environ()
	if opts.LookupEnv != nil {
		path, _ := opts.LookupEnv("PATH")
		environ = []string{"PATH=" + path}
	}
	var pf *pendingFile
	if isProjectRules(file) {
		pf, err = projectPending(filepath.Dir(file), environ)
		if err == nil && pf == nil {
			err = fmt.Errorf("%s: no such file", file)
		}
	} else {
		home := ""
		if opts.HomeDir != nil {
			home, _ = opts.HomeDir()
		}
		var cfg *configs.Config
		cfg, _, err = configs.Load(configs.LoadOptions{Name: file, BaseDir: wd, Home: home, LookupEnv: opts.LookupEnv, Actions: filesystem.MassGenActions()})
		if err == nil && !permconfig.DefinesHooks(cfg) {
			fmt.Fprintf(opts.IO.ErrOut, "%s defines no hooks: it needs no approval.\n", file)
			return nil
		}
		if err == nil {
			pf, err = configPending(cfg, environ)
		}
	}
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("not approved: %w", err))
	}
	return approve(opts.IO.Out, pf, opts.Now())
}

// isProjectRules reports whether file is a .massgen/permissions.yaml.
func isProjectRules(file string) bool {
	return layout.IsProjectRules(file)
}

// projectPending reads <massgenDir>/permissions.yaml (nil when there is none).
func projectPending(massgenDir string, environ []string) (*pendingFile, error) {
	path, data, pr, err := permconfig.ReadProjectFile(massgenDir, filesystem.Table())
	if data == nil || err != nil {
		return nil, err
	}
	pf := &pendingFile{path: path, data: data, show: func(w io.Writer) { showProjectRules(w, pr) }}
	return pf.withPrograms(pr.AllHooks(), filepath.Dir(massgenDir), environ)
}

func configPending(cfg *configs.Config, environ []string) (*pendingFile, error) {
	pf := &pendingFile{path: cfg.Source, data: cfg.Raw(), show: func(w io.Writer) { showConfigHooks(w, cfg) }}
	return pf.withPrograms(permconfig.ConfigHooks(cfg), cfg.BaseDir, environ)
}

func approve(w io.Writer, pf *pendingFile, now time.Time) error {
	st, err := trust.Default()
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	fmt.Fprintf(w, "%s (sha256 %s):\n", safe(pf.path), trust.Sum(pf.data))
	pf.show(w)
	pf.showPrograms(w)
	if err := st.Approve(pf.path, pf.data, pf.programs, now); err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	fmt.Fprintf(w, "Approved. massgen loads it while its content stays exactly this; any change needs a new approval (kept in %s).\n", st.Path())
	return nil
}

// ApproveOptions are what RequireApproval needs from the run.
type ApproveOptions struct {
	IO  *cmdutil.IOStreams
	Now func() time.Time
	// Yes (--yes) never prompts: an unapproved file is refused.
	Yes bool
}

// RequireApproval is called before a run starts: the project's .massgen/permissions.yaml and a
// config file that defines hooks must be approved. On a terminal (stdin and stderr, without
// --yes) each unapproved file is shown and the user may approve it there; otherwise the run is
// refused (exit 2) with a message naming the file and `massgen permissions trust FILE`.
func RequireApproval(cfg *configs.Config, o ApproveOptions) error {
	var pending []*pendingFile
	var refusals []error
	if _, err := permconfig.LoadProjectFile(cfg.MassgenDir(), filesystem.Table()); err != nil {
		var ue *trust.UntrustedError
		if !errors.As(err, &ue) {
			return cmdutil.WithCode(cmdutil.ExitUsage, err)
		}
		pf, rerr := projectPending(cfg.MassgenDir(), os.Environ())
		if rerr != nil {
			return cmdutil.WithCode(cmdutil.ExitUsage, errors.Join(err, rerr))
		}
		if pf == nil {
			return cmdutil.WithCode(cmdutil.ExitUsage, err)
		}
		pending, refusals = append(pending, pf), append(refusals, err)
	}
	if err := permconfig.CheckConfigApproval(cfg); err != nil {
		var ue *trust.UntrustedError
		if !errors.As(err, &ue) {
			return cmdutil.WithCode(cmdutil.ExitUsage, err)
		}
		pf, rerr := configPending(cfg, os.Environ())
		if rerr != nil {
			return cmdutil.WithCode(cmdutil.ExitUsage, errors.Join(err, rerr))
		}
		pending, refusals = append(pending, pf), append(refusals, err)
	}
	if len(pending) == 0 {
		return nil
	}
	if o.Yes || !o.IO.StdinTTY || !o.IO.StderrTTY {
		return cmdutil.WithCode(cmdutil.ExitUsage, errors.Join(refusals...))
	}
	for i, pf := range pending {
		w := o.IO.ErrOut
		fmt.Fprintf(w, "%v\n\n", refusals[i])
		fmt.Fprintf(w, "%s (sha256 %s):\n", safe(pf.path), trust.Sum(pf.data))
		pf.show(w)
		pf.showPrograms(w)
		fmt.Fprint(w, "Approve this file? [y/N] ")
		ans, err := readAnswer(o.IO.In)
		if err != nil || (ans != "y" && ans != "yes") {
			return cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("not approved: %w", refusals[i]))
		}
		st, err := trust.Default()
		if err != nil {
			return cmdutil.WithCode(cmdutil.ExitFailure, err)
		}
		if err := st.Approve(pf.path, pf.data, pf.programs, o.Now()); err != nil {
			return cmdutil.WithCode(cmdutil.ExitFailure, err)
		}
		fmt.Fprintf(w, "Approved (kept in %s).\n", st.Path())
	}
	return nil
}

// readAnswer reads one line byte by byte, so that nothing after it is taken from stdin (the
// interactive loop reads the tasks that follow).
func readAnswer(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 64 {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				break
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return "", err
		}
	}
	return strings.ToLower(strings.TrimSpace(b.String())), nil
}

// showProjectRules prints what a project rules file does.
func showProjectRules(w io.Writer, pr *permconfig.ProjectRules) {
	showPermissions(w, "  ", pr.Permissions)
	for _, id := range slices.Sorted(maps.Keys(pr.Agents)) {
		fmt.Fprintf(w, "  for agent %s:\n", safe(id))
		showPermissions(w, "    ", pr.Agents[id])
	}
}

// showConfigHooks prints the hooks a config defines.
func showConfigHooks(w io.Writer, cfg *configs.Config) {
	showHooks(w, "  ", cfg.Permissions.Hooks)
	for _, a := range cfg.Agents {
		if a.Permissions != nil && len(a.Permissions.Hooks.PreToolUse)+len(a.Permissions.Hooks.PostToolUse) > 0 {
			fmt.Fprintf(w, "  for agent %s:\n", safe(a.ID))
			showHooks(w, "    ", a.Permissions.Hooks)
		}
	}
}

func showPermissions(w io.Writer, indent string, p configs.Permissions) {
	if p.Mode != "" {
		fmt.Fprintf(w, "%smode: %s\n", indent, safe(string(p.Mode)))
	}
	for _, r := range p.Allow {
		fmt.Fprintf(w, "%sallow: %s\n", indent, safe(r))
	}
	for _, r := range p.Deny {
		fmt.Fprintf(w, "%sdeny: %s\n", indent, safe(r))
	}
	showHooks(w, indent, p.Hooks)
}

func showHooks(w io.Writer, indent string, h configs.Hooks) {
	for _, ev := range []struct {
		name  string
		hooks []configs.Hook
	}{{"pre_tool_use", h.PreToolUse}, {"post_tool_use", h.PostToolUse}} {
		for _, hk := range ev.hooks {
			m := hk.Matcher
			if m == "" {
				m = "*"
			}
			fmt.Fprintf(w, "%shook %s (tools %s, runs outside the sandbox): %s\n", indent, ev.name, safe(m), safe(hk.Command))
		}
	}
}

// safe shows s as is when every character is printable, else quoted with escapes: a file an
// agent wrote must not drive the terminal or hide part of a hook behind control characters.
func safe(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
