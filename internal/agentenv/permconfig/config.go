// Package permconfig assembles what the permission layer is built from out of the config: an
// agent's permissions.Spec (SpecFromConfig: roots, context paths, private paths, mode, rules),
// the project rules file (.massgen/permissions.yaml), the approvals rule files with hooks need,
// and the hooks themselves, ready to run (LoadHooks). The engine (package permissions) knows
// nothing of configs; internal/agentenv builds agents from what this package returns.
package permconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
	"github.com/massgen-go/massgen/permissions/trust"
)

// SpecOptions are the run facts a config does not hold.
type SpecOptions struct {
	// TempWorkspaces replaces <agent_temporary_workspace>/<agentID> when set.
	TempWorkspaces []string
	// ReadOnly are extra read-only roots (e.g. the previous turn's workspace).
	ReadOnly []string
	// Sandboxed: commands run under the kernel sandbox.
	Sandboxed bool
	// Home for ~ expansion ("" = the user's home).
	Home string
	// ProjectRules are .massgen/permissions.yaml's rules (LoadProjectRules), or nil.
	ProjectRules *configs.Permissions
	// Tools are the built-in tools' declarations (filesystem.Table()): the Spec's Tools, which
	// the rules are read with (a rule naming a command tool takes a command line or re:).
	Tools toolargs.Table
}

// SpecFromConfig builds the Spec of one agent in one role from a resolved config (every path
// absolute). Rules are the global section, then the project file, then the agent's own section:
// allow and deny lists add up (deny wins when deciding), the most specific mode wins.
func SpecFromConfig(cfg *configs.Config, agentID string, role permissions.Role, o SpecOptions) (permissions.Spec, error) {
	if cfg == nil {
		return permissions.Spec{}, errors.New("permissions: no config")
	}
	var agent *configs.Agent
	for i := range cfg.Agents {
		if cfg.Agents[i].ID == agentID {
			agent = &cfg.Agents[i]
		}
	}
	if agent == nil {
		ids := make([]string, 0, len(cfg.Agents))
		for _, a := range cfg.Agents {
			ids = append(ids, a.ID)
		}
		return permissions.Spec{}, fmt.Errorf("permissions: no agent %q in the config (agents: %s)", agentID, strings.Join(ids, ", "))
	}
	s := permissions.Spec{
		Agent:      agentID,
		Role:       role,
		Workspace:  agent.Backend.CWD,
		ReadOnly:   append([]string(nil), o.ReadOnly...),
		ReadPaths:  append([]string(nil), agent.ReadPaths...),
		WritePaths: append([]string(nil), agent.WritePaths...),
		Sandboxed:  o.Sandboxed,
		Home:       o.Home,
		Tools:      o.Tools,
	}
	switch {
	case len(o.TempWorkspaces) > 0:
		s.TempWorkspaces = append([]string(nil), o.TempWorkspaces...)
	case cfg.Orchestrator.AgentTemporaryWorkspace != "":
		s.TempWorkspaces = []string{filepath.Join(cfg.Orchestrator.AgentTemporaryWorkspace, agentID)}
	}
	for i, cp := range cfg.Orchestrator.ContextPaths {
		w := cp.Permission == permissions.ContextWrite
		if !filepath.IsAbs(cp.Path) {
			return permissions.Spec{}, fmt.Errorf("permissions: orchestrator.context_paths[%d]: path %q is not absolute (the config was not resolved)", i, cp.Path)
		}
		s.ContextPaths = append(s.ContextPaths, permissions.ContextPath{Path: cp.Path, Write: w, Protected: append([]string(nil), cp.ProtectedPaths...)})
	}
	s.Private = privatePaths(cfg, agentID, agent, s.TempWorkspaces)
	if err := CheckConfigApproval(cfg); err != nil {
		return permissions.Spec{}, err
	}
	layers := []*configs.Permissions{&cfg.Permissions, o.ProjectRules, agent.Permissions}
	for _, l := range layers {
		if l == nil {
			continue
		}
		if l.Mode != "" {
			s.Mode = l.Mode
		}
		s.Allow = append(s.Allow, l.Allow...)
		s.Deny = append(s.Deny, l.Deny...)
	}
	if s.Mode == "" {
		s.Mode = permissions.ModeAcceptEdits
	}
	if err := permissions.ValidateRules(s.Allow, s.Tools); err != nil {
		return permissions.Spec{}, err
	}
	if err := permissions.ValidateRules(s.Deny, s.Tools); err != nil {
		return permissions.Spec{}, err
	}
	return s, nil
}

// privatePaths are the paths no tool of agentID may touch, reads and listings included, even
// inside a context path: massgen's own records name real agents and votes, so they would undo the
// anonymity of the snapshots, and its secrets (the .env files it loaded) hold its API keys. The agent's own workspace, its temp workspace and read-only roots
// (a session's earlier turns) may lie inside them: the deepest root wins, so they stay usable.
func privatePaths(cfg *configs.Config, agentID string, agent *configs.Agent, temps []string) []string {
	var priv []string
	// Other agents' live workspaces: the agent sees their work through its temp workspace.
	for _, a := range cfg.Agents {
		if a.ID != agentID && a.Backend.CWD != "" && a.Backend.CWD != agent.Backend.CWD {
			priv = append(priv, a.Backend.CWD)
		}
	}
	l := cfg.Layout() // the configured storage folders, else the defaults under .massgen/
	snaps, tempRoot := cfg.Orchestrator.SnapshotStorage, cfg.Orchestrator.AgentTemporaryWorkspace
	if filepath.IsAbs(cfg.BaseDir) {
		// Logs (every answer under real ids, API traffic), sessions (metadata.json and
		// SESSION_SUMMARY.txt: winners and votes), trash (meta.json).
		priv = append(priv, l.Logs(), l.Sessions(), l.Trash())
		snaps, tempRoot = l.Snapshots(), l.TempWorkspaces()
	}
	// The snapshot storage and temp root may be configured outside .massgen/.
	if snaps != "" {
		priv = append(priv, snaps)
	}
	// The temp workspace root holds one folder per agent, named by its real id: only the agent's
	// own folder (the deeper root, so it wins) is readable; the root's listing and the siblings
	// would map anonymous ids to real agents.
	if tr := tempRoot; tr != "" && filepath.IsAbs(tr) {
		tr = filepath.Clean(tr)
		coversRoot := false
		for _, t := range temps {
			if pathx.Within(tr, filepath.Clean(t)) {
				coversRoot = true // the agent was given the whole root on purpose
			}
		}
		if !coversRoot {
			priv = append(priv, tr)
			for _, a := range cfg.Agents {
				if a.ID != agentID {
					priv = append(priv, filepath.Join(tr, a.ID))
				}
			}
		}
	}
	// The rule files: the project's (its per-agent sections name real agents) and the run's
	// config (it names the agents in the order of their anonymous ids).
	if filepath.IsAbs(cfg.BaseDir) {
		priv = append(priv, l.ProjectRules())
	}
	if filepath.IsAbs(cfg.Source) {
		priv = append(priv, cfg.Source)
	}
	// The approvals of rule files: an agent that could write them could approve its own rules.
	if st, err := trust.Default(); err == nil {
		priv = append(priv, st.Dir())
	}
	// The .env files massgen read its API keys from (./.env is in the project with --context .).
	for _, f := range cfg.EnvFilesLoaded {
		if filepath.IsAbs(f) {
			priv = append(priv, f)
		}
	}
	return outermost(priv)
}

// AgentContentRoots are the folders whose content agents shape although no tool of theirs may
// write there: every agent's workspace (another agent's is private to the rest, not to its
// owner), and massgen's copies of their work — snapshots, temp workspaces, sessions (earlier
// turns' workspaces), trash (files the final agent deleted), logs (tool results). Nothing massgen
// runs or loads may come from them.
func AgentContentRoots(cfg *configs.Config) []string {
	var roots []string
	for _, a := range cfg.Agents {
		if a.Backend.CWD != "" {
			roots = append(roots, a.Backend.CWD)
		}
	}
	l := cfg.Layout()
	snaps, tempRoot := cfg.Orchestrator.SnapshotStorage, cfg.Orchestrator.AgentTemporaryWorkspace
	if filepath.IsAbs(cfg.BaseDir) {
		roots = append(roots, l.Logs(), l.Sessions(), l.Trash())
		snaps, tempRoot = l.Snapshots(), l.TempWorkspaces()
	}
	for _, r := range []string{snaps, tempRoot} {
		if filepath.IsAbs(r) {
			roots = append(roots, r)
		}
	}
	return outermost(roots)
}

// outermost drops the paths that lie in another one of paths (and duplicates), keeping the
// order: a path inside a private path is private already, and the command sandbox hides each
// entry with a mount of its own.
func outermost(paths []string) []string {
	var out []string
	for i, p := range paths {
		p = filepath.Clean(p)
		inner := false
		for j, q := range paths {
			q = filepath.Clean(q)
			if (p != q && pathx.Within(p, q)) || (p == q && j < i) {
				inner = true
				break
			}
		}
		if !inner {
			out = append(out, p)
		}
	}
	return out
}

// CheckConfigApproval refuses a config file that defines hooks (commands run outside every
// sandbox) unless the user approved its content (the bytes it was loaded from) and the programs
// and scripts its hooks run (HookPrograms); the error then wraps a *trust.UntrustedError.
// Built-in configs and configs built in code need no approval.
func CheckConfigApproval(cfg *configs.Config) error {
	if !configNeedsApproval(cfg) || !DefinesHooks(cfg) {
		return nil
	}
	st, err := trust.Default()
	if err != nil {
		return fmt.Errorf("permissions: %s defines hooks and its approval cannot be checked: %w", cfg.Source, err)
	}
	if err := st.Check(cfg.Source, cfg.Raw(), ConfigHooksWhat); err != nil {
		return fmt.Errorf("permissions: %w", err)
	}
	progs, err := HookPrograms(ConfigHooks(cfg), cfg.BaseDir, os.Environ())
	if err != nil {
		return fmt.Errorf("permissions: %s: %w", cfg.Source, err)
	}
	if err := st.CheckPrograms(cfg.Source, progs, ConfigHooksWhat); err != nil {
		return fmt.Errorf("permissions: %w", err)
	}
	return nil
}

// ConfigHooksWhat and ProjectRulesWhat say, in refusals, what an unapproved file could do.
const (
	ConfigHooksWhat  = "defines hooks (commands massgen runs outside the sandbox)"
	ProjectRulesWhat = "sets permission rules (allow, deny, mode) and hooks (commands massgen runs outside the sandbox)"
)

// DefinesHooks reports whether the config's global or any agent's section has a hook.
func DefinesHooks(cfg *configs.Config) bool {
	has := func(p *configs.Permissions) bool {
		return p != nil && len(p.Hooks.PreToolUse)+len(p.Hooks.PostToolUse) > 0
	}
	if has(&cfg.Permissions) {
		return true
	}
	for i := range cfg.Agents {
		if has(cfg.Agents[i].Permissions) {
			return true
		}
	}
	return false
}

// HooksFor merges the hooks of the global section, the project file and the agent's section.
func HooksFor(cfg *configs.Config, agentID string, project *configs.Permissions) configs.Hooks {
	var h configs.Hooks
	layers := []*configs.Permissions{&cfg.Permissions, project}
	if a, ok := cfg.AgentByID(agentID); ok {
		layers = append(layers, a.Permissions)
	}
	for _, l := range layers {
		if l == nil {
			continue
		}
		h.PreToolUse = append(h.PreToolUse, l.Hooks.PreToolUse...)
		h.PostToolUse = append(h.PostToolUse, l.Hooks.PostToolUse...)
	}
	return h
}

// ProjectRules is .massgen/permissions.yaml: a permissions section (mode, allow, deny, hooks)
// plus optional per-agent sections under `agents:`.
type ProjectRules struct {
	configs.Permissions `yaml:",inline"`
	Agents              map[string]configs.Permissions `yaml:"agents,omitempty"`
}

// For returns the project rules that apply to agentID: the file's top level with the agent's
// section over it (lists added, the agent's mode winning).
func (pr *ProjectRules) For(agentID string) *configs.Permissions {
	if pr == nil {
		return nil
	}
	out := pr.Permissions
	out.Allow = append([]string(nil), pr.Allow...)
	out.Deny = append([]string(nil), pr.Deny...)
	out.Hooks = configs.Hooks{PreToolUse: append([]configs.Hook(nil), pr.Hooks.PreToolUse...),
		PostToolUse: append([]configs.Hook(nil), pr.Hooks.PostToolUse...)}
	if a, ok := pr.Agents[agentID]; ok {
		if a.Mode != "" {
			out.Mode = a.Mode
		}
		out.Allow = append(out.Allow, a.Allow...)
		out.Deny = append(out.Deny, a.Deny...)
		out.Hooks.PreToolUse = append(out.Hooks.PreToolUse, a.Hooks.PreToolUse...)
		out.Hooks.PostToolUse = append(out.Hooks.PostToolUse, a.Hooks.PostToolUse...)
	}
	return &out
}

// LoadProjectRules reads <massgenDir>/permissions.yaml and returns its top-level rules (use
// LoadProjectFile(...).For(agent) for per-agent sections). A missing file is (nil, nil); a file
// the user has not approved (see LoadProjectFile) is an error. tools: see ParseProjectFile.
func LoadProjectRules(massgenDir string, tools toolargs.Table) (*configs.Permissions, error) {
	pr, err := LoadProjectFile(massgenDir, tools)
	if pr == nil || err != nil {
		return nil, err
	}
	return &pr.Permissions, nil
}

// LoadProjectFile reads <massgenDir>/permissions.yaml whole. A missing file is (nil, nil). The
// file is read once; its content and the programs and scripts its hooks run must be the ones the
// user approved (`massgen permissions trust`, kept in trust.Default()), else the error is a
// *trust.UntrustedError and nothing is loaded.
func LoadProjectFile(massgenDir string, tools toolargs.Table) (*ProjectRules, error) {
	st, err := trust.Default()
	if err != nil {
		path := layout.At(massgenDir).ProjectRules()
		if _, serr := os.Lstat(path); errors.Is(serr, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("permissions: %s: its approval cannot be checked: %w", path, err)
	}
	return LoadProjectFileWith(massgenDir, st, tools)
}

// LoadProjectFileWith is LoadProjectFile with the approvals kept in st.
func LoadProjectFileWith(massgenDir string, st trust.Store, tools toolargs.Table) (*ProjectRules, error) {
	path, data, err := readProjectFile(massgenDir)
	if data == nil || err != nil {
		return nil, err
	}
	if err := st.Check(path, data, ProjectRulesWhat); err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	pr, err := ParseProjectFile(path, data, tools)
	if err != nil {
		return nil, err
	}
	progs, err := HookPrograms(pr.AllHooks(), filepath.Dir(massgenDir), os.Environ())
	if err != nil {
		return nil, fmt.Errorf("permissions: %s: %w", path, err)
	}
	if err := st.CheckPrograms(path, progs, ProjectRulesWhat); err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	return pr, nil
}

// ReadProjectFile reads and parses <massgenDir>/permissions.yaml without asking whether it is
// approved (for showing it before approving). It returns the path and the exact bytes parsed;
// a missing file is ("", nil, nil, nil).
func ReadProjectFile(massgenDir string, tools toolargs.Table) (string, []byte, *ProjectRules, error) {
	path, data, err := readProjectFile(massgenDir)
	if data == nil || err != nil {
		return path, nil, nil, err
	}
	pr, err := ParseProjectFile(path, data, tools)
	return path, data, pr, err
}

func readProjectFile(massgenDir string) (string, []byte, error) {
	path := layout.At(massgenDir).ProjectRules()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil, nil
	}
	if err != nil {
		return path, nil, fmt.Errorf("permissions: reading %s: %w", path, err)
	}
	if data == nil {
		data = []byte{}
	}
	return path, data, nil
}

// ParseProjectFile parses the content of a project rules file (path names it in errors); its
// rules are read as a Policy given tools (the built-in tools' declarations, filesystem.Table())
// reads them.
func ParseProjectFile(path string, data []byte, tools toolargs.Table) (*ProjectRules, error) {
	var pr ProjectRules
	if err := configs.DecodeStrict(path, data, &pr); err != nil {
		if configs.IsValidationError(err) { // names the file and line itself
			return nil, fmt.Errorf("permissions: %w", err)
		}
		return nil, fmt.Errorf("permissions: %s: %w", path, err)
	}
	check := func(where string, p configs.Permissions) error {
		if err := permissions.ValidateRules(p.Allow, tools); err != nil {
			return fmt.Errorf("%s: %s%w", path, where, err)
		}
		if err := permissions.ValidateRules(p.Deny, tools); err != nil {
			return fmt.Errorf("%s: %s%w", path, where, err)
		}
		return nil
	}
	if err := check("", pr.Permissions); err != nil {
		return nil, err
	}
	for id, a := range pr.Agents {
		if err := check("agents."+id+": ", a); err != nil {
			return nil, err
		}
	}
	return &pr, nil
}
