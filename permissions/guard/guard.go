// Package guard wraps the permission engine's decisions (permissions.Policy) with their side
// effects: asking the user when the mode wants it, pre- and post-tool-use hooks (package hooks)
// and the audit log (package audit). The engine stays pure; everything here may block, run
// programs or write.
package guard

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/audit"
	"github.com/massgen-go/massgen/permissions/hooks"
)

// Options wire the side effects around a Policy.
type Options struct {
	Asker  permissions.Asker // nil: asks become denies (no terminal)
	Hooks  hooks.Set         // pre/post tool-use hooks, ready to run (permconfig.LoadHooks, hooks.Prepare)
	Audit  Auditor           // nil: no audit
	Logger *zap.Logger       // nil: no logs
	// Grants, when set, shares "allow for this run" answers between the Guards of one run
	// (an agent's coordination and final phases). nil: this Guard keeps its own.
	Grants *Grants
}

// Grants remembers "allow for this run" answers by agent + tool + paths.
type Grants struct {
	mu sync.Mutex
	m  map[string]bool
}

// NewGrants returns an empty set of run-wide grants.
func NewGrants() *Grants { return &Grants{m: map[string]bool{}} }

func (g *Grants) has(k string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[k]
}

func (g *Grants) add(k string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.m[k] = true
}

// Guard wraps a Policy with asks, hooks (package hooks) and the audit log (package audit). One
// per agent per role per run.
type Guard struct {
	p      *permissions.Policy
	spec   permissions.Spec // p's, read once: the agent, role and workspace hooks and the audit name
	o      Options
	log    *zap.Logger
	grants *Grants
}

// New returns a Guard over p.
func New(p *permissions.Policy, o Options) *Guard {
	g := &Guard{p: p, spec: p.Spec(), o: o, log: o.Logger, grants: o.Grants}
	if g.log == nil {
		g.log = zap.NewNop()
	}
	if g.grants == nil {
		g.grants = NewGrants()
	}
	return g
}

// Policy returns the guarded policy.
func (g *Guard) Policy() *permissions.Policy { return g.p }

func roleName(r permissions.Role) string {
	if r == permissions.Final {
		return "final"
	}
	return "coordination"
}

// Check decides a call: the policy first, then pre-tool-use hooks, then the user when the mode
// asks. The result is audited. Allow is final.
func (g *Guard) Check(ctx context.Context, r permissions.Request) permissions.Decision {
	d, paths := g.p.DecideWithPaths(r)
	if d.Allow || d.Ask {
		d = g.preHooks(ctx, r, d)
	}
	if d.Ask {
		d = g.ask(ctx, r, d, paths)
	}
	d = permissions.WithRule(d)
	g.audit(r.Tool, paths, d)
	if !d.Allow {
		g.log.Info("tool call denied", zap.String("agent", g.spec.Agent), zap.String("tool", r.Tool),
			zap.String("rule", string(d.Rule)), zap.String("reason", d.Reason))
	}
	return d
}

// CheckPath checks one path inside a batch tool (each matched file); audited, never asks.
func (g *Guard) CheckPath(ctx context.Context, tool, path string, a permissions.Access) permissions.Decision {
	d := g.p.CheckPath(path, a)
	g.audit(tool, []string{d.Path}, d)
	return d
}

// CheckCanonical is CheckPath for a path already canonical (an entry reached through directory
// descriptors, see Policy.CheckCanonical); audited, never asks.
func (g *Guard) CheckCanonical(ctx context.Context, tool, path string, a permissions.Access) permissions.Decision {
	d := g.p.CheckCanonical(path, a)
	g.audit(tool, []string{d.Path}, d)
	return d
}

func (g *Guard) ask(ctx context.Context, r permissions.Request, d permissions.Decision, paths []string) permissions.Decision {
	key := g.spec.Agent + "\x00" + r.Tool + "\x00" + strings.Join(paths, "\x00")
	if g.p.IsCommand(r) { // a command's grant is for that command line, not for every command
		if c, ok := r.Args["command"].(string); ok {
			key += "\x00" + c
		}
	}
	if g.grants.has(key) {
		return permissions.Decision{Allow: true, Path: d.Path, Access: d.Access, Rule: "user-allowed-run", Reason: "allowed by the user for this run"}
	}
	if g.o.Asker == nil {
		return permissions.Decision{Path: d.Path, Access: d.Access, Rule: "ask-no-terminal", Reason: fmt.Sprintf(
			"Access denied: %s; nobody can be asked (no terminal). To allow it, add a rule such as %q to permissions.allow, or use mode acceptEdits",
			d.Reason, suggestRule(r, g.p.IsCommand(r)))}
	}
	ans, err := g.o.Asker.Ask(ctx, permissions.AskRequest{Agent: g.spec.Agent, Role: g.spec.Role, Tool: r.Tool,
		Args: r.Args, Paths: paths, Rule: d.Rule, Reason: d.Reason})
	if err != nil {
		return permissions.Decision{Path: d.Path, Access: d.Access, Rule: "ask-failed", Reason: fmt.Sprintf("Access denied: asking the user failed: %v", err)}
	}
	switch ans {
	case permissions.AskAllowOnce:
		return permissions.Decision{Allow: true, Path: d.Path, Access: d.Access, Rule: "user-allowed-once", Reason: "allowed by the user"}
	case permissions.AskAllowRun:
		g.grants.add(key)
		return permissions.Decision{Allow: true, Path: d.Path, Access: d.Access, Rule: "user-allowed-run", Reason: "allowed by the user for this run"}
	}
	return permissions.Decision{Path: d.Path, Access: d.Access, Rule: "user-denied", Reason: "Access denied: the user refused this call"}
}

// suggestRule is a rule that would allow r; command: r runs a shell command (Policy.IsCommand).
func suggestRule(r permissions.Request, command bool) string {
	if command {
		if c, ok := r.Args["command"].(string); ok {
			f := strings.Fields(c)
			if len(f) > 0 {
				return fmt.Sprintf("%s(%s*)", permissions.BaseToolName(r.Tool), f[0])
			}
		}
	}
	return permissions.BaseToolName(r.Tool)
}

func (g *Guard) hookInput(event string, r permissions.Request, d permissions.Decision) hooks.Input {
	return hooks.Input{Event: event, Agent: g.spec.Agent, Role: roleName(g.spec.Role), Tool: r.Tool,
		Arguments: r.Args, Decision: hooks.Decision{Allow: d.Allow, Ask: d.Ask, Rule: string(d.Rule), Reason: d.Reason},
		Workspace: g.spec.Workspace}
}

func (g *Guard) preHooks(ctx context.Context, r permissions.Request, d permissions.Decision) permissions.Decision {
	if len(g.o.Hooks.Pre) == 0 {
		return d
	}
	o := g.o.Hooks.Runner.Pre(ctx, g.o.Hooks.Pre, []string{r.Tool, permissions.BaseToolName(r.Tool)}, g.hookInput(hooks.PreToolUse, r, d), os.Environ())
	switch o.Verdict {
	case hooks.Fail:
		return permissions.Decision{Path: d.Path, Access: d.Access, Rule: "hook-failed", Reason: fmt.Sprintf("Access denied: pre_tool_use hook %q failed: %s", o.Hook, o.Reason)}
	case hooks.Deny:
		return permissions.Decision{Path: d.Path, Access: d.Access, Rule: "hook-denied", Reason: fmt.Sprintf("Access denied by pre_tool_use hook %q: %s", o.Hook, o.Reason)}
	case hooks.Allow:
		if d.Ask { // an allow settles a question; it never turns a deny into an allow
			return permissions.Decision{Allow: true, Path: d.Path, Access: d.Access, Rule: "hook-allowed", Reason: fmt.Sprintf("allowed by pre_tool_use hook %q", o.Hook)}
		}
	}
	return d
}

// Done runs the post-tool-use hooks; their failures are logged, the call already happened.
func (g *Guard) Done(ctx context.Context, r permissions.Request, d permissions.Decision, result string, isError bool) {
	if len(g.o.Hooks.Post) == 0 {
		return
	}
	in := g.hookInput(hooks.PostToolUse, r, permissions.Decision{Allow: d.Allow, Rule: d.Rule, Reason: d.Reason})
	in.Result, in.IsError = &result, &isError
	for _, f := range g.o.Hooks.Runner.Post(ctx, g.o.Hooks.Post, []string{r.Tool, permissions.BaseToolName(r.Tool)}, in, os.Environ()) {
		g.log.Warn("post_tool_use hook failed", zap.String("hook", f.Hook), zap.Int("status", f.Status),
			zap.String("stderr", f.Stderr), zap.Error(f.Err))
	}
}

// Auditor records decisions; *audit.Log is one.
type Auditor interface {
	Write(audit.Entry) error
}

func (g *Guard) audit(tool string, paths []string, d permissions.Decision) {
	if g.o.Audit == nil {
		return
	}
	dec := "deny"
	if d.Allow {
		dec = "allow"
	}
	if paths == nil {
		paths = []string{}
	}
	if err := g.o.Audit.Write(audit.Entry{Time: time.Now().UTC(), Agent: g.spec.Agent, Role: roleName(g.spec.Role),
		Tool: tool, Paths: paths, Decision: dec, Rule: string(d.Rule), Reason: d.Reason}); err != nil {
		g.log.Warn("audit log write failed", zap.Error(err))
	}
}
