package configs

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/vocab"
)

// expandHome turns "~" and "~/x" into paths under home.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		return filepath.Join(home, p[2:])
	}
	return p
}

// underMassgen reports whether a clean relative path starts with .massgen/.
func underMassgen(rel string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first == layout.DirName
}

// escapes reports whether a clean relative path climbs out of its base.
func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(filepath.ToSlash(rel), "../")
}

// within reports whether path is root or lies below it (made clean first: pathx.Within).
func within(root, path string) bool {
	return pathx.Within(filepath.Clean(path), filepath.Clean(root))
}

// relocateUnder resolves a state path the way MassGen does: absolute paths and relative paths
// already under .massgen/ stay (the latter resolved against baseDir, the project's folder); any other relative path
// goes under parent (a folder inside .massgen/). A relative path may not climb out of parent.
func relocateUnder(value, baseDir, parent, home string) (string, error) {
	p := expandHome(value, home)
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	clean := filepath.Clean(p)
	if underMassgen(clean) {
		return filepath.Join(baseDir, clean), nil
	}
	if escapes(clean) {
		return "", fmt.Errorf("relative path %q would leave %s (use an absolute path to put it elsewhere)", value, parent)
	}
	return filepath.Join(parent, clean), nil
}

// resolveAgainst makes p absolute relative to base (after ~ expansion).
func resolveAgainst(p, base, home string) string {
	p = expandHome(p, home)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// resolveContextPath makes a context path and its protected paths absolute: the path against
// baseDir, protected paths against the context path (they may not leave it).
func resolveContextPath(cp ContextPath, baseDir, home string) (ContextPath, error) {
	out := ContextPath{Path: resolveAgainst(strings.TrimSpace(cp.Path), baseDir, home), Permission: cp.Permission}
	for _, pp := range cp.ProtectedPaths {
		abs := resolveAgainst(strings.TrimSpace(pp), out.Path, home)
		if !within(out.Path, abs) {
			return out, fmt.Errorf("protected path %q is outside its context path %s", pp, out.Path)
		}
		if abs == out.Path {
			return out, fmt.Errorf("protected path %q is the context path itself (use permission: read instead)", pp)
		}
		out.ProtectedPaths = append(out.ProtectedPaths, abs)
	}
	return out, nil
}

// relocate makes every path absolute: state folders under .massgen/, context paths against the
// current directory, and fills in the default state folders.
func (c *Config) relocate(d *document, home string) []Problem {
	var probs []Problem
	add := func(path string, err error) {
		probs = append(probs, Problem{File: d.file, Line: d.lineOf(path), Message: path + ": " + err.Error()})
	}
	mg := c.MassgenDir()
	defaults := layout.OfProject(c.projectDir()) // the storage folders the config does not move
	for i := range c.Agents {
		a := &c.Agents[i]
		p := fmt.Sprintf("agents[%d]", i)
		if a.Backend.CWD != "" {
			cwd, err := relocateUnder(a.Backend.CWD, c.projectDir(), defaults.Workspaces(), home)
			if err != nil {
				add(p+".backend.cwd", err)
			}
			a.Backend.CWD = cwd
		}
		for j, rp := range a.ReadPaths {
			a.ReadPaths[j] = resolveAgainst(rp, c.BaseDir, home)
		}
		for j, wp := range a.WritePaths {
			a.WritePaths[j] = resolveAgainst(wp, c.BaseDir, home)
		}
		c.relocateCustomTools(a, home)
	}
	o := &c.Orchestrator
	for _, f := range []struct {
		key  string
		val  *string
		dflt string
	}{
		{"snapshot_storage", &o.SnapshotStorage, defaults.Snapshots()},
		{"agent_temporary_workspace", &o.AgentTemporaryWorkspace, defaults.TempWorkspaces()},
		{"session_storage", &o.SessionStorage, defaults.Sessions()},
	} {
		if strings.TrimSpace(*f.val) == "" {
			*f.val = f.dflt
			continue
		}
		v, err := relocateUnder(*f.val, c.projectDir(), mg, home)
		if err != nil {
			add("orchestrator."+f.key, err)
		}
		*f.val = v
	}
	c.splitSharedWorkspaces()
	// Two agents relocated onto the same folder would share a workspace.
	seen := map[string]string{}
	for i, a := range c.Agents {
		if a.Backend.CWD == "" {
			continue
		}
		if other, ok := seen[a.Backend.CWD]; ok {
			add(fmt.Sprintf("agents[%d].backend.cwd", i), fmt.Errorf("workspace %s is already used by agent %q", a.Backend.CWD, other))
		}
		seen[a.Backend.CWD] = a.ID
	}
	for i, cp := range o.ContextPaths {
		p := fmt.Sprintf("orchestrator.context_paths[%d]", i)
		if cp.Permission == "" {
			cp.Permission = vocab.AccessRead // least privilege when the YAML does not say
		}
		r, err := resolveContextPath(cp, c.BaseDir, home)
		if err != nil {
			add(p+".protected_paths", err)
		}
		o.ContextPaths[i] = r
	}
	return probs
}

// splitSharedWorkspaces gives each agent of a group naming the same workspace folder (after
// relocation) a folder of its own, <folder>_<agent id>, as MassGen gives every agent its own
// copy (it adds a random suffix to every cwd, each run; massgen keeps the names stable so that
// sessions and restarts find them). The split is remembered for `configs show --resolved`.
func (c *Config) splitSharedWorkspaces() {
	groups := map[string][]int{}
	var order []string
	for i, a := range c.Agents {
		if a.Backend.CWD == "" {
			continue
		}
		if len(groups[a.Backend.CWD]) == 0 {
			order = append(order, a.Backend.CWD)
		}
		groups[a.Backend.CWD] = append(groups[a.Backend.CWD], i)
	}
	for _, cwd := range order {
		idx := groups[cwd]
		if len(idx) < 2 {
			continue
		}
		ids := make([]string, len(idx))
		for k, i := range idx {
			ids[k] = c.Agents[i].ID
		}
		for _, i := range idx {
			a := &c.Agents[i]
			a.Backend.CWD = cwd + "_" + a.ID
			if c.sharedCWD == nil {
				c.sharedCWD = map[int]string{}
			}
			c.sharedCWD[i] = fmt.Sprintf("agents %s all name %s: each has its own folder, as in MassGen", strings.Join(ids, ", "), cwd)
		}
	}
}

// SharedWorkspaceNote says, for agent i, that its workspace was split from a folder several
// agents name ("" when it was not).
func (c *Config) SharedWorkspaceNote(i int) string { return c.sharedCWD[i] }
