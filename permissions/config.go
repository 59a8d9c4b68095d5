package permissions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen/configs"
)

// ProjectRulesFile is the per-project rules file inside .massgen/.
const ProjectRulesFile = "permissions.yaml"

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
}

// SpecFromConfig builds the Spec of one agent in one role from a resolved config (every path
// absolute). Rules are the global section, then the project file, then the agent's own section:
// allow and deny lists add up (deny wins when deciding), the most specific mode wins.
func SpecFromConfig(cfg *configs.Config, agentID string, role Role, o SpecOptions) (Spec, error) {
	if cfg == nil {
		return Spec{}, errors.New("permissions: no config")
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
		return Spec{}, fmt.Errorf("permissions: no agent %q in the config (agents: %s)", agentID, strings.Join(ids, ", "))
	}
	s := Spec{
		Agent:      agentID,
		Role:       role,
		Workspace:  agent.Backend.CWD,
		ReadOnly:   append([]string(nil), o.ReadOnly...),
		ReadPaths:  append([]string(nil), agent.ReadPaths...),
		WritePaths: append([]string(nil), agent.WritePaths...),
		Sandboxed:  o.Sandboxed,
		Home:       o.Home,
	}
	switch {
	case len(o.TempWorkspaces) > 0:
		s.TempWorkspaces = append([]string(nil), o.TempWorkspaces...)
	case cfg.Orchestrator.AgentTemporaryWorkspace != "":
		s.TempWorkspaces = []string{filepath.Join(cfg.Orchestrator.AgentTemporaryWorkspace, agentID)}
	}
	for i, cp := range cfg.Orchestrator.ContextPaths {
		var w bool
		switch cp.Permission {
		case "write":
			w = true
		case "read", "":
		default:
			return Spec{}, fmt.Errorf("permissions: orchestrator.context_paths[%d] (%s): invalid permission %q (read or write)", i, cp.Path, cp.Permission)
		}
		if !filepath.IsAbs(cp.Path) {
			return Spec{}, fmt.Errorf("permissions: orchestrator.context_paths[%d]: path %q is not absolute (the config was not resolved)", i, cp.Path)
		}
		s.ContextPaths = append(s.ContextPaths, ContextPath{Path: cp.Path, Write: w, Protected: append([]string(nil), cp.ProtectedPaths...)})
	}
	// Other agents' live workspaces and the raw snapshots are not for this agent to read: it
	// sees the others' work through its temp workspace, anonymised.
	for _, a := range cfg.Agents {
		if a.ID != agentID && a.Backend.CWD != "" && a.Backend.CWD != agent.Backend.CWD {
			s.Private = append(s.Private, a.Backend.CWD)
		}
	}
	// A config that did not go through configs.Load may leave these empty: the orchestrator then
	// uses the defaults under .massgen/, and so do we.
	snaps, tempRoot := cfg.Orchestrator.SnapshotStorage, cfg.Orchestrator.AgentTemporaryWorkspace
	if filepath.IsAbs(cfg.BaseDir) {
		if snaps == "" {
			snaps = filepath.Join(cfg.MassgenDir(), configs.SnapshotsDirName)
		}
		if tempRoot == "" {
			tempRoot = filepath.Join(cfg.MassgenDir(), configs.TempDirName)
		}
	}
	if snaps != "" {
		s.Private = append(s.Private, snaps)
	}
	if filepath.IsAbs(cfg.BaseDir) {
		// The run logs hold every agent's answers under real ids (and API traffic).
		s.Private = append(s.Private, cfg.LogsDir())
	}
	// The temp workspace root holds one folder per agent, named by its real id: only the agent's
	// own folder (the deeper root, so it wins) is readable; the root's listing and the siblings
	// would map anonymous ids to real agents.
	if tr := tempRoot; tr != "" && filepath.IsAbs(tr) {
		tr = filepath.Clean(tr)
		coversRoot := false
		for _, t := range s.TempWorkspaces {
			if within(tr, filepath.Clean(t)) {
				coversRoot = true // the agent was given the whole root on purpose
			}
		}
		if !coversRoot {
			s.Private = append(s.Private, tr)
			for _, a := range cfg.Agents {
				if a.ID != agentID {
					s.Private = append(s.Private, filepath.Join(tr, a.ID))
				}
			}
		}
	}
	layers := []*configs.Permissions{&cfg.Permissions, o.ProjectRules, agent.Permissions}
	for _, l := range layers {
		if l == nil {
			continue
		}
		if l.Mode != "" {
			s.Mode = Mode(l.Mode)
		}
		s.Allow = append(s.Allow, l.Allow...)
		s.Deny = append(s.Deny, l.Deny...)
	}
	switch s.Mode {
	case "":
		s.Mode = ModeAcceptEdits
	case ModeAcceptEdits, ModeDefault, ModeBypass:
	default:
		return Spec{}, fmt.Errorf("permissions: unknown mode %q (known: acceptEdits, default, bypassPermissions)", s.Mode)
	}
	if _, err := parseRules(s.Allow); err != nil {
		return Spec{}, err
	}
	if _, err := parseRules(s.Deny); err != nil {
		return Spec{}, err
	}
	return s, nil
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
// LoadProjectFile(...).For(agent) for per-agent sections). A missing file is (nil, nil).
func LoadProjectRules(massgenDir string) (*configs.Permissions, error) {
	pr, err := LoadProjectFile(massgenDir)
	if pr == nil || err != nil {
		return nil, err
	}
	return &pr.Permissions, nil
}

// LoadProjectFile reads <massgenDir>/permissions.yaml whole. A missing file is (nil, nil).
func LoadProjectFile(massgenDir string) (*ProjectRules, error) {
	path := filepath.Join(massgenDir, ProjectRulesFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("permissions: reading %s: %w", path, err)
	}
	var pr ProjectRules
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&pr); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("permissions: %s: %w", path, err)
	}
	check := func(where string, p configs.Permissions) error {
		switch Mode(p.Mode) {
		case "", ModeAcceptEdits, ModeDefault, ModeBypass:
		default:
			return fmt.Errorf("permissions: %s: %sunknown mode %q (known: acceptEdits, default, bypassPermissions)", path, where, p.Mode)
		}
		if _, err := parseRules(p.Allow); err != nil {
			return fmt.Errorf("%s: %s%w", path, where, err)
		}
		if _, err := parseRules(p.Deny); err != nil {
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
