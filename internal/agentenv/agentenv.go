// Package agentenv builds an agent's environment from a config: its permission Spec, Policy and
// Guard (project and per-agent rules, mode, hooks, command sandbox, audit log, grants), its
// Toolset, and its MCP servers. The run and every command that shows what an agent may do
// (tools list|call, permissions check, mcp serve) build it here and nowhere else, so what they
// say is what the run does. The permission sections of the config and the project rules file
// are read into a Spec and hooks by its sub-package permconfig.
package agentenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/agentenv/permconfig"
	"github.com/massgen-go/massgen/internal/customtools"
	"github.com/massgen-go/massgen/internal/launch"
	"github.com/massgen-go/massgen/internal/mcpclient"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/roots"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/wsowner"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/audit"
	"github.com/massgen-go/massgen/permissions/guard"
	"github.com/massgen-go/massgen/permissions/hooks"
	"github.com/massgen-go/massgen/permissions/toolargs"
	"github.com/massgen-go/massgen/snapshots"
)

// Role is the role an agent's tools are built for.
type Role = permissions.Role

// The roles: coordination (context paths read-only) and final (their configured permission).
const (
	Coordination = permissions.Coordination
	Final        = permissions.Final
)

// Options are the inputs of one run's environments. What only a run knows has a default that
// the inspection commands share, so they decide as a run with the same inputs would.
type Options struct {
	Config *configs.Config
	// RunDir is the run's log folder: the audit log is RunDir/permissions.jsonl and deletions
	// from context paths go to <.massgen>/trash/<base of RunDir>. "": no audit log, and the
	// trash folder is named after the current time.
	RunDir string
	// ReadOnly are extra read-only roots for every agent: earlier turns' workspaces (default none).
	ReadOnly []string
	// TempWorkspace returns an agent's temporary workspace (default
	// <orchestrator.agent_temporary_workspace>/<agent id>, where the run's snapshot store puts it).
	TempWorkspace func(agentID string) string
	// Asker resolves "ask" decisions (default nil: an ask is a deny saying how to allow it).
	Asker permissions.Asker
	// Home is used for ~ expansion in rules ("": the user's home).
	Home string
	// DecideOnly builds environments that decide without acting (permissions check): filesystem
	// lookups are memoized (the tree must not change meanwhile), no workspace is created, no MCP
	// server is started and nothing is audited.
	DecideOnly bool
	// NoHooks leaves the pre- and post-tool-use hooks out (permissions check without --hooks).
	NoHooks bool
	// Warn hears about each MCP server that failed to start; the agent goes on without it.
	Warn func(agentID string, err error)
	// External, when set, provides each agent's external tools instead of starting its MCP
	// servers (tests stand in for a server with it).
	External func(ctx context.Context, agent configs.Agent) map[string]filesystem.External
	Logger   *zap.Logger
	// Journal, when set, records the final role's changes to context paths for review and
	// undo (changes.Journal); coordination cannot write there.
	Journal *changes.Journal
}

// ConfigError is a fault of the config or the project rules (as opposed to the machine).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configError(format string, a ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, a...)}
}

// Env holds what a run's agents share: the project rules, the effective command sandbox, the
// audit log and the trash folder. Close releases the agents' MCP servers and the audit log.
type Env struct {
	o         Options
	cfg       *configs.Config
	log       *zap.Logger
	project   *permconfig.ProjectRules
	sandboxed bool
	audit     *audit.Log
	trashDir  string
	// customCache holds the custom tools' functions as read once for the run.
	customCache *customtools.Cache

	mu     sync.Mutex
	agents map[string]*Agent
	closed bool
	// area is the run's private area for the programs massgen starts (MCP servers, hooks);
	// made on first use, removed at Close. images are the hashed copies hooks run from.
	area   *launch.Area
	images *launch.Images
	// shapers decide Shaped: every agent's widest (final-role) policy, built once.
	shapeOnce    sync.Once
	shapers      []shaper
	contentRoots []string
	shapeErr     error
}

// shaper is one agent's policy, asked whether the agent may write a path.
type shaper struct {
	id  string
	pol *permissions.Policy
}

// New reads the project rules (.massgen/permissions.yaml) and opens the audit log.
func New(o Options) (*Env, error) {
	if o.Config == nil {
		return nil, errors.New("agentenv: no config")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	cfg := o.Config
	project, err := permconfig.LoadProjectFile(cfg.MassgenDir())
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	// Commands are only ever run under the sandbox actually available; without one they are
	// refused, except with command_sandbox: none, where MassGen's stricter command rules apply.
	mode, sbErr := sandbox.Effective(cfg.CommandSandbox)
	e := &Env{
		o: o, cfg: cfg, log: o.Logger, project: project,
		sandboxed: sbErr == nil && mode != sandbox.ModeNone,
		trashDir:  filepath.Join(cfg.Layout().Trash(), runID(o.RunDir)),
		agents:    map[string]*Agent{},
	}
	e.customCache = customtools.NewCache()
	if o.RunDir != "" && !o.DecideOnly {
		al, err := audit.Open(filepath.Join(o.RunDir, "permissions.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("agentenv: audit log: %w", err)
		}
		e.audit = al
	}
	return e, nil
}

// runID names the trash folder after the run's log folder.
func runID(runDir string) string {
	if runDir == "" {
		return "run_" + time.Now().UTC().Format("20060102_150405")
	}
	return filepath.Base(runDir)
}

// Sandboxed says commands run under a kernel sandbox (which relaxes MassGen's command rules).
func (e *Env) Sandboxed() bool { return e.sandboxed }

// Close stops every MCP server the agents started and closes the audit log.
func (e *Env) Close() error {
	e.mu.Lock()
	agents := e.agents
	e.agents, e.closed = map[string]*Agent{}, true
	e.mu.Unlock()
	var errs []error
	for _, a := range agents {
		if a.external != nil {
			errs = append(errs, mcpclient.Close(a.external))
		}
		errs = append(errs, a.roots.Close())
	}
	if e.audit != nil {
		errs = append(errs, e.audit.Close())
		e.audit = nil
	}
	e.mu.Lock()
	area, images := e.area, e.images
	e.area, e.images = nil, nil
	e.mu.Unlock()
	if images != nil {
		images.Close()
	}
	errs = append(errs, area.Close())
	return errors.Join(errs...)
}

// privateAreaLocked is the run's private area (internal/launch), made on first use: a 0700
// folder outside every path an agent may use, where MCP servers and hooks run. e.mu is held.
func (e *Env) privateAreaLocked() (*launch.Area, error) {
	if e.area != nil {
		return e.area, nil
	}
	area, err := launch.NewArea(launch.Base(e.cfg.LookupEnv))
	if err != nil {
		return nil, err
	}
	// npx looks for node_modules in the parents of its working directory too.
	for d := area.Dir(); ; d = filepath.Dir(d) {
		if why := e.Shaped(d); why != "" {
			area.Close()
			return nil, fmt.Errorf("massgen's private area %s lies in %s, and %s: programs massgen starts would run where an agent can plant files; set XDG_RUNTIME_DIR (or XDG_CACHE_HOME) to a folder no agent may write", area.Dir(), d, why)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	e.area, e.images = area, launch.NewImages(area)
	return area, nil
}

// hookRunner runs the agents' hooks in the private area, from the hashed copies of their
// programs and scripts.
func (e *Env) hookRunner() (*hooks.Runner, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	area, err := e.privateAreaLocked()
	if err != nil {
		return nil, err
	}
	return &hooks.Runner{Area: area, Images: e.images}, nil
}

// Shaped says why some agent could change what lies at path — it may write there (by its
// final role's rules, the widest), or massgen copies agents' work there
// (permconfig.AgentContentRoots) — or "" when none can. Programs and scripts massgen runs,
// and the folders they run in, must be none of those.
func (e *Env) Shaped(path string) string {
	e.shapeOnce.Do(e.buildShapers)
	if e.shapeErr != nil {
		return fmt.Sprintf("the agents' rules could not be read to tell (%v)", e.shapeErr)
	}
	path = filepath.Clean(path)
	paths := []string{path}
	if real, err := roots.Canonical(path); err == nil && real != path {
		paths = append(paths, real)
	}
	for _, p := range paths {
		for _, r := range e.contentRoots {
			if pathx.Within(p, r) {
				return fmt.Sprintf("massgen copies agents' work into %s (workspaces, snapshots, temp workspaces, sessions, trash, logs)", r)
			}
		}
	}
	for _, sh := range e.shapers {
		if d := sh.pol.CheckPath(path, permissions.Write); d.Allow {
			return fmt.Sprintf("agent %s may write there (%s)", sh.id, d.Rule)
		}
	}
	return ""
}

func (e *Env) buildShapers() {
	for _, r := range permconfig.AgentContentRoots(e.cfg) {
		e.contentRoots = append(e.contentRoots, filepath.Clean(r))
		if real, err := roots.Canonical(filepath.Clean(r)); err == nil && real != filepath.Clean(r) {
			e.contentRoots = append(e.contentRoots, real)
		}
	}
	for _, ac := range e.cfg.Agents {
		spec, err := e.spec(ac, e.project.For(ac.ID), Final)
		if err == nil {
			var pol *permissions.Policy
			if pol, err = permissions.New(spec); err == nil {
				e.shapers = append(e.shapers, shaper{id: ac.ID, pol: pol})
				continue
			}
		}
		e.shapeErr = err
		return
	}
}

// Agent is one agent's environment for the run: its phases share the file tracker, the
// "allow for this run" grants and the MCP servers, which start once (in Env.Agent) and stop at
// Env.Close.
type Agent struct {
	env      *Env
	cfg      configs.Agent
	project  *configs.Permissions // the project file's rules for this agent
	tracker  *filesystem.Tracker
	grants   *guard.Grants
	external map[string]filesystem.External
	customs  *customtools.Provider // nil: no custom_tools
	// pre and post are its hooks, loaded (permconfig.LoadHooks) when it is built.
	pre, post []hooks.Hook

	// roots are its managed roots, resolved and held open once, here (internal/roots): both
	// roles' policies, the command sandbox, the journal and delivery read them. Closed at
	// Env.Close.
	roots *roots.Set

	mu    sync.Mutex
	roles map[Role]*roleEnv
}

// roleEnv is what is built once per role.
type roleEnv struct {
	guard   *guard.Guard
	toolset *filesystem.Toolset
	offered map[string]bool
}

// Agent returns agent id's environment, building it on first use: its workspace is created and
// its MCP servers are started (unless DecideOnly). ctx bounds the servers' lifetime.
func (e *Env) Agent(ctx context.Context, id string) (*Agent, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("agentenv: Agent after Close")
	}
	if a, ok := e.agents[id]; ok {
		return a, nil
	}
	ac, ok := e.cfg.AgentByID(id)
	if !ok {
		ids := make([]string, 0, len(e.cfg.Agents))
		for _, a := range e.cfg.Agents {
			ids = append(ids, a.ID)
		}
		where := ""
		if e.cfg.Source != "" {
			where = e.cfg.Source + ": "
		}
		return nil, configError("%sno agent %q (agents: %s)", where, id, strings.Join(ids, ", "))
	}
	a := &Agent{
		env: e, cfg: *ac, project: e.project.For(id),
		tracker: filesystem.NewTracker(), grants: guard.NewGrants(),
		roles: map[Role]*roleEnv{},
	}
	// A server its security: section refuses never starts, and is not counted as configured.
	a.cfg.Backend.MCPServers = e.secureServers(id, ac.Backend.MCPServers)
	if !e.o.NoHooks {
		// A hook runs outside every sandbox: its program and script must lie where no agent
		// can change them, and be the ones approved.
		var err error
		if a.pre, a.post, err = permconfig.LoadHooks(e.cfg, id, permconfig.HookLoadOptions{
			Project: a.project, Environ: os.Environ(), Shaped: e.Shaped,
		}); err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("agent %q: %w", id, err)}
		}
	}
	if ws := ac.Backend.CWD; ws != "" && !e.o.DecideOnly {
		// The workspace is created on first use (the config names it; MassGen makes it), and
		// recorded as massgen's when it made it: only such a folder is ever cleared.
		how, err := wsowner.Claim(ws, e.cfg.MassgenDir(), ac.Backend.CWDOwned)
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", id, err)
		}
		e.log.Info("workspace", zap.String("agent", id), zap.String("dir", ws), zap.String("owned", how))
	}
	// The roots are resolved once, now that the workspace exists: every later view of them
	// (policy, sandbox, journal, delivery) reads this value.
	if err := a.openRoots(); err != nil {
		return nil, err
	}
	built := false
	defer func() {
		if !built {
			a.roots.Close()
		}
	}()
	var err error
	if a.customs, err = a.customTools(ctx, !e.o.DecideOnly); err != nil {
		return nil, err
	}
	if e.o.External != nil && !e.o.DecideOnly {
		a.external = e.o.External(ctx, a.cfg)
	} else if len(a.cfg.Backend.MCPServers) > 0 && !e.o.DecideOnly {
		// Servers are given the agent's readable roots, the same in both roles.
		pol, err := a.policy(Coordination)
		if err != nil {
			return nil, err
		}
		area, err := e.privateAreaLocked()
		if err != nil {
			return nil, fmt.Errorf("agent %q: MCP servers: %w", id, err)
		}
		ext, errs := mcpclient.ConnectWith(ctx, mcpclient.Options{
			Servers: a.cfg.Backend.MCPServers, AllowedDirs: pol.ReadableRoots(), WorkDir: ac.Backend.CWD,
			PrivateDir: area.Dir(), BaseDir: e.cfg.BaseDir, Shaped: e.Shaped,
			Logger: e.log.With(zap.String("agent", id)),
		})
		for _, err := range errs {
			e.log.Warn("mcp server unavailable", zap.String("agent", id), zap.Error(err))
			if e.o.Warn != nil {
				e.o.Warn(id, err)
			}
		}
		a.external = ext
	}
	e.agents[id] = a
	built = true
	return a, nil
}

// ClearWorkspace empties the agent's workspace for a fresh start (a restart), if massgen owns it
// (internal/wsowner): what it created is deleted; what is in a folder the config gives it
// (cwd_owned) goes to the trash, restorable with `massgen trash restore`. Any other folder is left
// whole and the error says why.
func (a *Agent) ClearWorkspace() error {
	ws := a.cfg.Backend.CWD
	if ws == "" {
		return nil
	}
	return snapshots.Clear(ws, snapshots.ClearOptions{
		MassgenDir: a.env.cfg.MassgenDir(),
		Trash: func(dir, name string) error {
			return changes.MoveToTrash(a.env.trashDir, filepath.Join(dir, name), a.cfg.ID)
		},
	})
}

// ID is the agent's id.
func (a *Agent) ID() string { return a.cfg.ID }

// Config is the agent's section of the config.
func (a *Agent) Config() configs.Agent { return a.cfg }

// Tracker is the agent's record of files read and created, shared by its phases.
func (a *Agent) Tracker() *filesystem.Tracker { return a.tracker }

// Hooks are the pre- and post-tool-use hooks of the global section, the project file (its top
// level, then the agent's section) and the agent's own section, in that order.
func (a *Agent) Hooks() configs.Hooks {
	return permconfig.HooksFor(a.env.cfg, a.cfg.ID, a.project)
}

// Spec is the agent's permission Spec for role: the one place it is made. Rules add up from the
// config's global section, the project file (top level, then its section for this agent) and
// the agent's own section; the most specific mode wins.
func (a *Agent) Spec(role Role) (permissions.Spec, error) {
	spec, err := a.env.spec(a.cfg, a.project, role)
	spec.Roots = a.roots
	return spec, err
}

// openRoots resolves the agent's managed roots once and holds them (a.roots).
func (a *Agent) openRoots() error {
	spec, err := a.env.spec(a.cfg, a.project, Final)
	if err != nil {
		return err
	}
	in, err := permissions.RootsInput(spec)
	if err != nil {
		return &ConfigError{Err: fmt.Errorf("agent %q: %w", a.cfg.ID, err)}
	}
	set, err := roots.Open(in)
	if err != nil {
		return &ConfigError{Err: fmt.Errorf("agent %q: permissions: %w", a.cfg.ID, err)}
	}
	a.roots = set
	return nil
}

// Roots are the agent's managed roots, resolved once when its environment was built.
func (a *Agent) Roots() *roots.Set { return a.roots }

// spec is the Spec of the agent ac (project: the project file's rules for it) in role.
func (e *Env) spec(ac configs.Agent, project *configs.Permissions, role Role) (permissions.Spec, error) {
	temp := filepath.Join(e.cfg.Orchestrator.AgentTemporaryWorkspace, ac.ID)
	if e.o.TempWorkspace != nil {
		temp = e.o.TempWorkspace(ac.ID)
	}
	var temps []string
	if filepath.IsAbs(temp) {
		temps = []string{temp}
	}
	spec, err := permconfig.SpecFromConfig(e.cfg, ac.ID, role, permconfig.SpecOptions{
		TempWorkspaces: temps,
		ReadOnly:       slices.Clone(e.o.ReadOnly),
		Sandboxed:      e.sandboxed,
		Home:           e.o.Home,
		ProjectRules:   project,
	})
	if err != nil {
		return permissions.Spec{}, &ConfigError{Err: fmt.Errorf("agent %q: %w", ac.ID, err)}
	}
	// The built-in tools' path arguments come from their one declaration.
	spec.Tools = filesystem.Table()
	// The backend's command lists are rules like any other: every view decides by them.
	spec.Deny = append(spec.Deny, commandRules(ac.Backend)...)
	return spec, nil
}

func (a *Agent) policy(role Role) (*permissions.Policy, error) {
	spec, err := a.Spec(role)
	if err != nil {
		return nil, err
	}
	newPolicy := permissions.New
	if a.env.o.DecideOnly {
		newPolicy = permissions.NewSnapshot
	}
	pol, err := newPolicy(spec)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("agent %q: %w", a.cfg.ID, err)}
	}
	return pol, nil
}

// role builds (once) the Guard and Toolset of role.
func (a *Agent) role(role Role) (*roleEnv, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.roles[role]; ok {
		return r, nil
	}
	e := a.env
	pol, err := a.policy(role)
	if err != nil {
		return nil, err
	}
	log := e.log.With(zap.String("agent", a.cfg.ID))
	set := hooks.Set{Pre: a.pre, Post: a.post}
	if len(a.pre)+len(a.post) > 0 {
		if set.Runner, err = e.hookRunner(); err != nil {
			return nil, fmt.Errorf("agent %q: hooks: %w", a.cfg.ID, err)
		}
	}
	g := guard.New(pol, guard.Options{
		Asker: e.o.Asker, Hooks: set, Audit: e.audit, Logger: log, Grants: a.grants,
	})
	var journal *changes.Journal
	if role == Final {
		journal = e.o.Journal
	}
	network, err := a.commandNetwork()
	if err != nil {
		return nil, err
	}
	ts, err := filesystem.NewToolset(filesystem.ToolsetOptions{
		Journal:                 journal,
		Guard:                   g,
		TrashDir:                e.trashDir,
		EnforceReadBeforeDelete: e.cfg.EnforceReadBeforeDelete(),
		Tracker:                 a.tracker,
		Sandbox:                 e.cfg.CommandSandbox,
		CommandLimits:           a.commandLimits(),
		CommandNetwork:          network,
		External:                a.external,
		Custom:                  a.custom(),
		ExternalOnly:            a.cfg.Backend.CWD == "",
		Hide:                    a.hidden,
		Planning:                role == Coordination && e.cfg.Orchestrator.Coordination.EnablePlanningMode,
		Logger:                  log,
	})
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("agent %q: tools: %w", a.cfg.ID, err)}
	}
	r := &roleEnv{guard: g, toolset: ts, offered: map[string]bool{}}
	for _, t := range ts.Tools() {
		r.offered[t.Name] = true
	}
	a.roles[role] = r
	return r, nil
}

// Guard is the agent's permission Guard for role (one per role, built once).
func (a *Agent) Guard(role Role) (*guard.Guard, error) {
	r, err := a.role(role)
	if err != nil {
		return nil, err
	}
	return r.guard, nil
}

// Toolset is the agent's Toolset for role (one per role, built once): file tools only with a
// workspace, write tools only where it may write, and its MCP servers' tools.
func (a *Agent) Toolset(role Role) (*filesystem.Toolset, error) {
	r, err := a.role(role)
	if err != nil {
		return nil, err
	}
	return r.toolset, nil
}

// RuleNotOffered is the rule of a decision on a tool the agent is not offered.
const RuleNotOffered = "not-offered"

// Decide is the decision a call would get in role, without running it: a tool the agent is not
// offered is denied (rule "not-offered"), anything else is decided by the Guard. With DecideOnly
// no MCP server runs, so a tool of a configured server counts as offered.
func (a *Agent) Decide(ctx context.Context, role Role, req permissions.Request) (permissions.Decision, error) {
	r, err := a.role(role)
	if err != nil {
		return permissions.Decision{}, err
	}
	if !r.offered[req.Tool] && !a.configuredExternal(r, req.Tool) {
		return permissions.Decision{Rule: RuleNotOffered, Reason: a.notOfferedReason(role, req.Tool)}, nil
	}
	return r.guard.Check(ctx, req), nil
}

// configuredExternal: with DecideOnly, mcp__<server>__<tool> of a server in the agent's config,
// unless it is a write tool and the agent may write nowhere (Toolset.Tools hides those).
func (a *Agent) configuredExternal(r *roleEnv, tool string) bool {
	if !a.env.o.DecideOnly || !toolargs.IsMCPName(tool) {
		return false
	}
	if permissions.IsWriteTool(tool) && !r.guard.Policy().CanWrite() {
		return false
	}
	server, name, ok := a.splitConfigured(tool)
	return ok && !a.hidden(server, name)
}

func (a *Agent) notOfferedReason(role Role, tool string) string {
	who := fmt.Sprintf("agent %s (%s role)", a.cfg.ID, roleName(role))
	_, builtin := filesystem.Builtin(tool)
	switch {
	case a.hiddenName(tool):
		return fmt.Sprintf("%s is not offered to %s: exclude_tools (or its MCP server's allowed_tools) leaves it out", tool, who)
	case builtin && a.cfg.Backend.CWD == "":
		return fmt.Sprintf("%s is not offered to %s: it has no workspace (no cwd), so no file tools", tool, who)
	case builtin:
		return fmt.Sprintf("%s is not offered to %s: it may not write anywhere in this role", tool, who)
	case toolargs.IsMCPName(tool):
		return fmt.Sprintf("%s is not offered to %s: no such tool among its MCP servers' tools", tool, who)
	default:
		return fmt.Sprintf("unknown tool %s: not offered to %s", tool, who)
	}
}

func roleName(r Role) string {
	if r == Final {
		return "final"
	}
	return "coordination"
}
