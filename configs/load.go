package configs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/vocab"
)

// Load resolves o.Name, reads it, merges the .env chain, parses it (yaml.v3 nodes, so every
// problem has a line), expands ${VAR}, validates and relocates every path. Invalid configs
// return a *ValidationError; any error from Load is a configuration (exit 2) error.
func Load(o LoadOptions) (*Config, []Warning, error) {
	if o.BaseDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, fmt.Errorf("configs: current directory: %w", err)
		}
		o.BaseDir = wd
	}
	base, err := filepath.Abs(o.BaseDir)
	if err != nil {
		return nil, nil, fmt.Errorf("configs: %s: %w", o.BaseDir, err)
	}
	o.BaseDir = base
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
	src, err := resolveName(o)
	if err != nil {
		return nil, nil, err
	}
	return loadSource(o, src)
}

// LoadBytes loads a config from memory (file names the source in messages); see Load.
func LoadBytes(file string, data []byte, o LoadOptions) (*Config, []Warning, error) {
	if o.BaseDir == "" {
		o.BaseDir, _ = os.Getwd()
	}
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
	return loadSource(o, source{display: file, origin: file, data: data})
}

func loadSource(o LoadOptions, src source) (*Config, []Warning, error) {
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	env, envFiles, err := loadEnvChain(EnvFiles(o.BaseDir, o.Home, o.LookupEnv))
	if err != nil {
		return nil, nil, fmt.Errorf("configs: .env: %w", err)
	}
	lookup := func(k string) (string, bool) {
		if v, ok := o.LookupEnv(k); ok {
			return v, true
		}
		v, ok := env[k]
		return v, ok
	}

	d, err := parseDocument(src.display, src.data)
	if err != nil {
		return nil, nil, err
	}
	var warnings []Warning
	warn := func(line int, msg string) {
		warnings = append(warnings, Warning{File: src.display, Line: line, Message: msg})
	}
	probs := d.normalize()
	d.expandVars(lookup, warn)
	d.index(d.root, typeOfConfig, "")
	var words []Problem // words outside their vocabulary, blanked: reported with validate's problems
	d.checkWords(d.root, typeOfConfig, "", func(p Problem) { words = append(words, p) })
	var refused []Problem // reported with validate's problems, not instead of them
	checkKeys(d.root, d.aliases(), func(f keyFinding) {
		if f.status == Refused {
			refused = append(refused, Problem{File: d.file, Line: f.key.Line, Message: f.message, Key: f.path})
			return
		}
		warnings = append(warnings, Warning{File: d.file, Line: f.key.Line, Message: f.message, Key: f.path, Suggestion: f.suggestion})
	})
	if err := d.aliasProblem(); err != nil {
		return nil, nil, err // the walks stopped at that alias: nothing else they found is whole
	}
	cfg := &Config{}
	probs = append(probs, d.decode(cfg)...)
	if dt := cfg.UI.DisplayType; dt != "" {
		// MassGen reads any display_type; so does massgen, saying which one it does not know.
		if _, err := vocab.ParseDisplay(dt); err != nil {
			const key = "ui.display_type"
			warnings = append(warnings, Warning{File: d.file, Line: d.lineOf(key), Key: key,
				Message: fmt.Sprintf("%s: %v; not used: the display is auto (live on a terminal, else plain) unless --display says", key, err)})
		}
	}
	if len(probs) == 0 {
		cfg.resolveBuiltinTools(src.origin)
		probs = append(probs, cfg.validate(d)...)
	}
	probs = append(probs, words...)
	probs = append(probs, refused...)
	cfg.ProjectDir = o.ProjectDir
	cfg.Source, cfg.BaseDir, cfg.Env, cfg.realEnv, cfg.home, cfg.raw = src.origin, o.BaseDir, env, o.LookupEnv, o.Home, src.data
	cfg.EnvFilesLoaded = envFiles
	cfg.file, cfg.lines = d.file, d.lines
	if len(probs) == 0 {
		probs = append(probs, cfg.relocate(d, o.Home)...)
	}
	if len(probs) == 0 {
		probs = append(probs, cfg.checkWorkspaces(d)...)
	}
	if len(probs) == 0 {
		probs = append(probs, cfg.checkCost(d, o.Home)...)
	}
	if len(probs) > 0 {
		sortProblems(probs)
		return nil, sortWarnings(warnings), &ValidationError{Problems: probs}
	}
	// MassGen keys massgen has under another name: mapped onto it, with what differs said.
	mapped := func(key string, line int, msg string) {
		warnings = append(warnings, Warning{File: d.file, Line: line, Key: key, Message: msg})
	}
	cfg.mapSRT(d, mapped)
	cfg.mapBackendPermissions(d, o.Actions, mapped)
	for i, a := range cfg.Agents {
		if a.Backend.CWD != "" && !within(cfg.MassgenDir(), a.Backend.CWD) {
			key := fmt.Sprintf("agents[%d].backend.cwd", i)
			warnings = append(warnings, Warning{File: d.file, Line: d.lineOf(key), Key: key,
				Message: fmt.Sprintf("agent %s's workspace %s is outside .massgen/: the agent may change anything in it", a.ID, a.Backend.CWD)})
		}
	}
	for i, cp := range cfg.Orchestrator.ContextPaths {
		if err := statContextPath(cp.Path); err != nil {
			key := fmt.Sprintf("orchestrator.context_paths[%d].path", i)
			warnings = append(warnings, Warning{File: d.file, Line: d.lineOf(key), Key: key,
				Message: fmt.Sprintf("context path %s (checked again when a run starts)", err)})
		}
	}
	warnings = sortWarnings(warnings)
	for _, w := range warnings {
		log.Warn("config", zap.String("warning", w.String()))
	}
	log.Debug("config loaded", zap.String("source", cfg.Source), zap.Int("agents", len(cfg.Agents)))
	return cfg, warnings, nil
}

// checkWorkspaces refuses a cwd that is an existing folder massgen did not make: an agent's
// workspace is emptied when the agent restarts, so a cwd pointing at the project, a source tree
// or any folder of the user's would lose its files. Existing folders under .massgen/workspaces/
// are massgen's; anything else needs cwd_owned: true, and a folder holding massgen's own state
// (the project folder, .massgen/ or a folder in it) is refused even then.
func (c *Config) checkWorkspaces(d *document) []Problem {
	var probs []Problem
	mg := realPath(c.MassgenDir())
	workspaces := layout.At(mg).Workspaces()
	for i, a := range c.Agents {
		if a.Backend.CWD == "" {
			continue
		}
		real, err := filepath.EvalSymlinks(a.Backend.CWD)
		if err != nil {
			continue // missing: massgen creates it, so it is massgen's
		}
		key := fmt.Sprintf("agents[%d].backend.cwd", i)
		shown := a.Backend.CWD
		if real != a.Backend.CWD {
			shown += " (" + real + ")"
		}
		var msg string
		switch {
		case within(real, mg):
			msg = fmt.Sprintf("%s: %s holds massgen's own state (%s), and an agent's workspace is emptied when the agent restarts; give the agent a folder of its own (a relative cwd goes under .massgen/workspaces/)", key, shown, mg)
		case within(workspaces, real) && real != workspaces:
			continue
		case within(mg, real):
			msg = fmt.Sprintf("%s: %s is one of massgen's own folders, and an agent's workspace is emptied when the agent restarts; give the agent a folder under .massgen/workspaces/ (a relative cwd goes there)", key, shown)
		case a.Backend.CWDOwned:
			continue
		default:
			msg = fmt.Sprintf("%s: %s is an existing folder outside .massgen/workspaces/, and massgen empties an agent's workspace when the agent restarts, so it only uses folders it creates: name a new folder (a relative cwd goes under .massgen/workspaces/), or add cwd_owned: true to let massgen own this one (what it clears then goes to .massgen/trash/)", key, shown)
		}
		probs = append(probs, Problem{File: d.file, Line: d.lineOf(key), Key: key, Message: msg})
	}
	return probs
}

// realPath resolves the symlinks of p's longest existing prefix (p itself may not exist yet).
func realPath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(realPath(parent), filepath.Base(p))
}

func sortProblems(p []Problem) {
	sort.SliceStable(p, func(i, j int) bool { return p[i].Line < p[j].Line })
}

func sortWarnings(w []Warning) []Warning {
	sort.SliceStable(w, func(i, j int) bool { return w[i].Line < w[j].Line })
	return w
}

// source is a config's text with the names it goes by.
type source struct {
	display string // in messages: the path as given, or @examples/NAME.yaml
	origin  string // Config.Source: absolute path, or @examples/NAME
	data    []byte
}

// resolveName finds the config: @examples/NAME is a built-in; otherwise the exact path
// (relative to BaseDir) when it exists; otherwise a built-in of that name.
func resolveName(o LoadOptions) (source, error) {
	name := strings.TrimSpace(o.Name)
	if name == "" {
		return source{}, errors.New("no config given: pass --config FILE or --config @examples/NAME (see `massgen configs list`)")
	}
	if rest, ok := strings.CutPrefix(name, "@examples/"); ok {
		return builtin(rest)
	}
	path := resolveAgainst(name, o.BaseDir, o.Home)
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return source{}, fmt.Errorf("config %s is a directory, not a YAML file", name)
	case err == nil:
		data, err := os.ReadFile(path)
		if err != nil {
			return source{}, fmt.Errorf("config %s: %w", name, err)
		}
		return source{display: name, origin: path, data: data}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return source{}, fmt.Errorf("config %s: %w", name, err)
	}
	src, berr := builtin(name)
	if berr == nil {
		return src, nil
	}
	return source{}, fmt.Errorf("config %s: no such file, and %w", name, berr)
}

// CheckContextPaths returns an error listing every context path that does not exist (or cannot
// be read), in the spec's format ("Context paths not found:\n  - /path"), and refuses a
// workspace that is or contains a context path: an agent may always write its workspace, so
// it would change the user's files during coordination.
func (c *Config) CheckContextPaths() error {
	var missing, overlap []string
	for _, cp := range c.Orchestrator.ContextPaths {
		if err := statContextPath(cp.Path); err != nil {
			missing = append(missing, "  - "+err.Error())
		}
		for _, a := range c.Agents {
			if a.Backend.CWD != "" && within(filepath.Clean(a.Backend.CWD), filepath.Clean(cp.Path)) {
				overlap = append(overlap, fmt.Sprintf("  - agent %s's workspace %s contains context path %s", a.ID, a.Backend.CWD, cp.Path))
			}
		}
	}
	var msgs []string
	if len(missing) > 0 {
		msgs = append(msgs, "Context paths not found:\n"+strings.Join(missing, "\n"))
	}
	if len(overlap) > 0 {
		msgs = append(msgs, "Workspaces must not contain context paths (agents always write their workspace):\n"+strings.Join(overlap, "\n"))
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// statContextPath says what is wrong with a context path, or nil. Files and directories are
// both fine.
func statContextPath(p string) error {
	_, err := os.Stat(p)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	default:
		return fmt.Errorf("%s: %w", p, err)
	}
}

// accessLike returns the access word ("read" or "write") word is a typo of or another tool's
// name for (ro, rw), or "".
func accessLike(word string) string {
	switch strings.ToLower(word) {
	case "r", "ro", "readonly", "read-only":
		return string(vocab.AccessRead)
	case "w", "rw", "readwrite", "read-write":
		return string(vocab.AccessWrite)
	}
	return suggest(word, vocab.Words[vocab.Access]())
}

// ParseContextFlag parses --context "PATH[:read|write]" (default write). The path is not
// resolved here; Resolve does that.
func ParseContextFlag(s string) (ContextPath, error) {
	path, perm := s, vocab.AccessWrite
	if i := strings.LastIndex(s, ":"); i >= 0 {
		suffix := s[i+1:]
		a, err := vocab.ParseAccess(suffix)
		switch {
		case err == nil && a != "":
			path, perm = s[:i], a
		case err != nil && !strings.ContainsAny(suffix, `/\`):
			// A near miss of an access word is a typo, not part of a file name: checking the
			// path ".:wrte" would only say it does not exist.
			if w := accessLike(suffix); w != "" {
				return ContextPath{}, fmt.Errorf("--context %q: unknown access %q (did you mean %q?); want PATH[:%s]", s, suffix, w, strings.Join(vocab.Words[vocab.Access](), "|"))
			}
		}
	}
	if strings.TrimSpace(path) == "" {
		return ContextPath{}, fmt.Errorf("--context %q: empty path (want PATH[:%s])", s, strings.Join(vocab.Words[vocab.Access](), "|"))
	}
	return ContextPath{Path: path, Permission: perm}, nil
}

// LookupEnv reads a variable: real environment > ./.env > ~/.config/massgen/.env >
// ~/.massgen/.env > built-in defaults (see EnvFiles).
func (c *Config) LookupEnv(key string) (string, bool) {
	if c.realEnv != nil {
		if v, ok := c.realEnv(key); ok {
			return v, true
		}
	}
	v, ok := c.Env[key]
	return v, ok
}

// AgentByID returns the agent with that id.
func (c *Config) AgentByID(id string) (*Agent, bool) {
	for i := range c.Agents {
		if c.Agents[i].ID == id {
			return &c.Agents[i], true
		}
	}
	return nil, false
}

// HasWorkspaces reports whether some agent has a cwd (filesystem support is on).
func (c *Config) HasWorkspaces() bool {
	for _, a := range c.Agents {
		if a.Backend.CWD != "" {
			return true
		}
	}
	return false
}

// Layout is where this config's project keeps massgen's state: <ProjectDir>/.massgen
// (ProjectDir defaults to BaseDir), with snapshot_storage, agent_temporary_workspace and
// session_storage where the config puts them (absolute after Load). A config built in code
// without them gets the defaults from the Layout too: nobody else fills them in.
func (c *Config) Layout() layout.Layout {
	o := &c.Orchestrator
	return layout.OfProject(c.projectDir()).WithStorage(o.SnapshotStorage, o.AgentTemporaryWorkspace, o.SessionStorage)
}

// MassgenDir is <ProjectDir>/.massgen, where all run state lives (Layout().Dir()).
func (c *Config) MassgenDir() string { return c.Layout().Dir() }

// projectDir is ProjectDir (internal/project.Find), else BaseDir.
func (c *Config) projectDir() string {
	if c.ProjectDir != "" {
		return c.ProjectDir
	}
	return c.BaseDir
}

// EnforceReadBeforeDelete is orchestrator.enforce_read_before_delete, true by default.
func (c *Config) EnforceReadBeforeDelete() bool {
	if p := c.Orchestrator.EnforceReadBeforeDelete; p != nil {
		return *p
	}
	return true
}

// DefaultMaxTaskBytes is the largest task accepted unless the config or --max-task-bytes says
// otherwise: a task goes into every agent's every prompt, the logs and the session.
const DefaultMaxTaskBytes = 1 << 20

// MaxTaskBytes is orchestrator.max_task_bytes, DefaultMaxTaskBytes by default.
func (c *Config) MaxTaskBytes() int {
	if n := c.Orchestrator.MaxTaskBytes; n > 0 {
		return n
	}
	return DefaultMaxTaskBytes
}

// OverallTimeout is orchestrator.timeout_seconds, else
// timeout_settings.orchestrator_timeout_seconds, else 30 minutes.
func (c *Config) OverallTimeout() time.Duration {
	d, _ := c.OverallTimeoutSource()
	return d
}

// OverallTimeoutKey is the key that sets the overall timeout when none does (the default).
const OverallTimeoutKey = "orchestrator.timeout_seconds"

// OverallTimeoutSource is OverallTimeout with the config key it comes from
// ("orchestrator.timeout_seconds", "timeout_settings.orchestrator_timeout_seconds"), or
// "default" when neither is set: messages name the key to raise.
func (c *Config) OverallTimeoutSource() (time.Duration, string) {
	if s := c.Orchestrator.TimeoutSeconds; s > 0 {
		return time.Duration(s) * time.Second, OverallTimeoutKey
	}
	if s := c.TimeoutSettings.OrchestratorTimeoutSeconds; s > 0 {
		return time.Duration(s) * time.Second, "timeout_settings.orchestrator_timeout_seconds"
	}
	return defaultTimeout, "default"
}

// DefaultRoundTimeoutGrace is MassGen's round_timeout_grace_seconds when the config sets none.
const DefaultRoundTimeoutGrace = 120 * time.Second

// RoundTimeout is how long an agent's coordination round may last: round 0 (its first
// execution) timeout_settings.initial_round_timeout_seconds, every later one
// subsequent_round_timeout_seconds, each plus round_timeout_grace_seconds (default 120). MassGen
// asks the agent to submit when the round's time is up and, after the grace, lets it call only
// new_answer and vote; massgen's agent timeouts stop the agent there (what it answered and
// voted so far stands). ok is false when the round has no bound; what names the keys, for
// the reason a stopped agent is given.
func (c *Config) RoundTimeout(round int) (d time.Duration, what string, ok bool) {
	ts := c.TimeoutSettings
	key, s := "initial_round_timeout_seconds", ts.InitialRoundTimeoutSeconds
	if round > 0 {
		key, s = "subsequent_round_timeout_seconds", ts.SubsequentRoundTimeoutSeconds
	}
	if s <= 0 {
		return 0, "", false
	}
	grace := time.Duration(c.roundGraceSeconds()) * time.Second
	return time.Duration(s)*time.Second + grace, fmt.Sprintf("round timeout (timeout_settings.%s %ds + round_timeout_grace_seconds %ds)", key, s, int(grace/time.Second)), true
}

func (c *Config) roundGraceSeconds() int {
	if g := c.TimeoutSettings.RoundTimeoutGraceSeconds; g != nil {
		return *g
	}
	return int(DefaultRoundTimeoutGrace / time.Second)
}

// Raw returns the config file as written.
func (c *Config) Raw() []byte { return c.raw }

// Redacted returns a copy safe to print: API keys and MCP server env values are masked. The
// copy shares nothing with c (deepCopy), so masking it leaves c as it is.
func (c *Config) Redacted() *Config {
	cp := deepCopy(c)
	for i := range cp.Agents {
		b := &cp.Agents[i].Backend
		if b.APIKey != "" {
			b.APIKey = redacted
		}
		for _, s := range b.MCPServers {
			for k := range s.Env {
				s.Env[k] = redacted
			}
		}
		b.CustomTools = redactCustomTools(b.CustomTools)
	}
	return cp
}

const redacted = "<redacted>"
