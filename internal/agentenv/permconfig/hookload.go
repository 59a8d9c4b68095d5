package permconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/launch"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/permissions/hooks"
	"github.com/massgen-go/massgen/permissions/toolargs"
	"github.com/massgen-go/massgen/permissions/trust"
)

// HookPrograms are the programs and scripts hs run (hooks.Analyze), by path with symlinks
// resolved, with the SHA-256 of their content now: what the approval of the rules file that
// defines them records besides the file itself. baseDir resolves relative paths (massgen's
// working directory, the project), environ's PATH bare names.
func HookPrograms(hs []configs.Hook, baseDir string, environ []string) (map[string]string, error) {
	out := map[string]string{}
	for _, h := range hs {
		progs, err := hooks.Analyze(h.Command, baseDir, environ)
		if err != nil {
			return nil, fmt.Errorf("hook %q: %w", h.Command, err)
		}
		for _, p := range progs {
			sum, err := launch.Sum(p.Real)
			if err != nil {
				return nil, fmt.Errorf("hook %q: %w", h.Command, err)
			}
			out[p.Real] = sum
		}
	}
	return out, nil
}

// ConfigHooks are the hooks a config defines: its global section's, then every agent's.
func ConfigHooks(cfg *configs.Config) []configs.Hook {
	var out []configs.Hook
	add := func(p *configs.Permissions) {
		if p != nil {
			out = append(append(out, p.Hooks.PreToolUse...), p.Hooks.PostToolUse...)
		}
	}
	add(&cfg.Permissions)
	for i := range cfg.Agents {
		add(cfg.Agents[i].Permissions)
	}
	return out
}

// AllHooks are the hooks a project rules file defines: its top level's, then every agent
// section's.
func (pr *ProjectRules) AllHooks() []configs.Hook {
	if pr == nil {
		return nil
	}
	out := append(append([]configs.Hook(nil), pr.Hooks.PreToolUse...), pr.Hooks.PostToolUse...)
	for _, a := range pr.Agents {
		out = append(append(out, a.Hooks.PreToolUse...), a.Hooks.PostToolUse...)
	}
	return out
}

// configNeedsApproval: a config's hooks take effect only once approved, unless it is built in
// (@examples) or built in code (no file).
func configNeedsApproval(cfg *configs.Config) bool {
	return cfg.Source != "" && !strings.HasPrefix(cfg.Source, "@examples/")
}

// HookLoadOptions are what LoadHooks needs besides the config.
type HookLoadOptions struct {
	// Project is the project rules file's rules for the agent (ProjectRules.For), or nil.
	Project *configs.Permissions
	// Environ is the environment hooks get their PATH from (os.Environ()).
	Environ []string
	// Shaped says why some agent could change what lies at a path (it may write there, or
	// massgen copies agents' work there), "" when none can. nil: no agent can write anywhere.
	Shaped func(path string) string
	// Store holds the approvals (nil: trust.Default()).
	Store *trust.Store
}

// LoadHooks readies agentID's hooks (the global section, the project file, the agent's section,
// as HooksFor merges them) to run: each hook's command line is read for the programs and
// scripts it names, and the rules refuse to load
//   - when one of them lies where an agent could change it (o.Shaped), naming the path and the
//     way out;
//   - when one of them is not the one the approval of the file defining the hook covers (a
//     *trust.UntrustedError: the approval is stale).
//
// Each program then carries the hash it must have when the hook runs: the approved one, or for
// rules that need no approval the one it has now.
func LoadHooks(cfg *configs.Config, agentID string, o HookLoadOptions) (pre, post []hooks.Hook, err error) {
	st := o.Store
	if st == nil {
		s, err := trust.Default()
		if err == nil {
			st = &s
		}
	}
	type layer struct {
		p        *configs.Permissions
		file     string
		approved bool // its approval covers its hooks' programs
		what     string
	}
	layers := []layer{{&cfg.Permissions, cfg.Source, configNeedsApproval(cfg), ConfigHooksWhat}}
	if o.Project != nil {
		layers = append(layers, layer{o.Project, cfg.Layout().ProjectRules(), true, ProjectRulesWhat})
	}
	if a, ok := cfg.AgentByID(agentID); ok && a.Permissions != nil {
		layers = append(layers, layer{a.Permissions, cfg.Source, configNeedsApproval(cfg), ConfigHooksWhat})
	}
	var errs []error
	if h := HooksFor(cfg, agentID, o.Project); o.Shaped != nil && len(h.PreToolUse)+len(h.PostToolUse) > 0 {
		// What a hook's programs start by name is looked up on this PATH.
		for _, kv := range o.Environ {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				for _, d := range filepath.SplitList(v) {
					if !filepath.IsAbs(d) {
						continue // relative to the hook's empty private folder
					}
					if why := o.Shaped(filepath.Clean(d)); why != "" {
						return nil, nil, fmt.Errorf("permissions: hooks were not loaded: massgen's PATH holds %s, and %s; the programs a hook starts by name would be looked up there. Remove it from PATH", d, why)
					}
				}
			}
		}
	}
	for _, l := range layers {
		var approved map[string]string
		if l.approved && len(l.p.Hooks.PreToolUse)+len(l.p.Hooks.PostToolUse) > 0 {
			if st == nil {
				return nil, nil, fmt.Errorf("permissions: %s defines hooks and its approval cannot be checked: no approval store", l.file)
			}
			if approved, err = st.Programs(l.file); err != nil {
				return nil, nil, fmt.Errorf("permissions: %w", err)
			}
		}
		load := func(hs []configs.Hook) []hooks.Hook {
			var out []hooks.Hook
			for _, h := range hs {
				hk, err := loadHook(h, l.file, l.approved, approved, cfg.BaseDir, o)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				out = append(out, hk)
			}
			return out
		}
		pre = append(pre, load(l.p.Hooks.PreToolUse)...)
		post = append(post, load(l.p.Hooks.PostToolUse)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return pre, post, nil
}

func loadHook(h configs.Hook, file string, needsApproval bool, approved map[string]string, baseDir string, o HookLoadOptions) (hooks.Hook, error) {
	where := ""
	if file != "" {
		where = " of " + file
	}
	progs, err := hooks.Analyze(h.Command, baseDir, o.Environ)
	if err != nil {
		return hooks.Hook{}, fmt.Errorf("permissions: hook %q%s: %w", h.Command, where, err)
	}
	var stale []string
	for i := range progs {
		p := &progs[i]
		if o.Shaped != nil {
			if why := p.ShapedBy(o.Shaped); why != "" {
				again := ""
				if needsApproval {
					again = fmt.Sprintf(", then approve %s again with: %s %s", file, trust.Command, file)
				}
				return hooks.Hook{}, fmt.Errorf("permissions: hook %q%s was not loaded: %s. A hook runs outside every sandbox: "+
					"move %s out of every path an agent may write (workspaces, writable context paths, massgen's snapshots and temp workspaces), "+
					"or name a program outside them%s", h.Command, where, why, p.Path, again)
			}
		}
		sum, err := launch.Sum(p.Real)
		if err != nil {
			return hooks.Hook{}, fmt.Errorf("permissions: hook %q%s: %w", h.Command, where, err)
		}
		p.Sum = sum
		if needsApproval {
			if approved[p.Real] != sum {
				stale = append(stale, p.Real)
			}
			p.Sum = approved[p.Real]
		}
	}
	if len(stale) > 0 {
		what := ConfigHooksWhat
		if layout.IsProjectRules(file) {
			what = ProjectRulesWhat
		}
		return hooks.Hook{}, fmt.Errorf("permissions: %w", &trust.UntrustedError{File: file, What: what, Changed: true, Stale: stale})
	}
	return hooks.Hook{Hook: h, File: file, Programs: progs}, nil
}

// RulesFilePrograms are the programs and scripts the hooks of a rules file run, hashed
// (HookPrograms): a project rules file (<project>/.massgen/permissions.yaml, relative paths
// relative to <project>) or a config file (relative to baseDir, massgen's working directory),
// data its content; tools: see ParseProjectFile; actions: configs.LoadOptions.Actions
// (filesystem.MassGenActions). It is what approving the file records with it.
func RulesFilePrograms(path string, data []byte, baseDir string, environ []string, tools toolargs.Table, actions map[string]string) (map[string]string, error) {
	var hs []configs.Hook
	if layout.IsProjectRules(path) {
		pr, err := ParseProjectFile(path, data, tools)
		if err != nil {
			return nil, err
		}
		hs, baseDir = pr.AllHooks(), filepath.Dir(filepath.Dir(path))
	} else {
		cfg, _, err := configs.LoadBytes(path, data, configs.LoadOptions{BaseDir: baseDir, Actions: actions})
		if err != nil {
			return nil, err
		}
		hs = ConfigHooks(cfg)
	}
	return HookPrograms(hs, baseDir, environ)
}
