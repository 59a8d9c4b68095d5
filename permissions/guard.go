package permissions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
)

// defaultHookTimeout applies when a hook sets none.
const defaultHookTimeout = 30 * time.Second

// GuardOptions wire the side effects around a Policy.
type GuardOptions struct {
	Asker  Asker         // nil: asks become denies (no terminal)
	Hooks  configs.Hooks // pre/post tool-use hooks
	Audit  *AuditLog     // nil: no audit
	Logger *zap.Logger   // nil: no logs
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

// Guard wraps a Policy with asks, hooks and the audit log. One per agent per role per run.
type Guard struct {
	p      *Policy
	o      GuardOptions
	log    *zap.Logger
	grants *Grants
}

// NewGuard returns a Guard over p.
func NewGuard(p *Policy, o GuardOptions) *Guard {
	g := &Guard{p: p, o: o, log: o.Logger, grants: o.Grants}
	if g.log == nil {
		g.log = zap.NewNop()
	}
	if g.grants == nil {
		g.grants = NewGrants()
	}
	return g
}

// Policy returns the guarded policy.
func (g *Guard) Policy() *Policy { return g.p }

func roleName(r Role) string {
	if r == Final {
		return "final"
	}
	return "coordination"
}

// Check decides a call: the policy first, then pre-tool-use hooks, then the user when the mode
// asks. The result is audited. Allow is final.
func (g *Guard) Check(ctx context.Context, r Request) Decision {
	d, info := g.p.decide(r)
	if d.Allow || d.Ask {
		d = g.preHooks(ctx, r, d)
	}
	if d.Ask {
		d = g.ask(ctx, r, d, info.paths)
	}
	d = withRule(d)
	g.audit(r.Tool, info.paths, d)
	if !d.Allow {
		g.log.Info("tool call denied", zap.String("agent", g.p.spec.Agent), zap.String("tool", r.Tool),
			zap.String("rule", string(d.Rule)), zap.String("reason", d.Reason))
	}
	return d
}

// CheckPath checks one path inside a batch tool (each matched file); audited, never asks.
func (g *Guard) CheckPath(ctx context.Context, tool, path string, a Access) Decision {
	d := g.p.CheckPath(path, a)
	g.audit(tool, []string{d.Path}, d)
	return d
}

// CheckCanonical is CheckPath for a path already canonical (an entry reached through directory
// descriptors, see Policy.CheckCanonical); audited, never asks.
func (g *Guard) CheckCanonical(ctx context.Context, tool, path string, a Access) Decision {
	d := g.p.CheckCanonical(path, a)
	g.audit(tool, []string{d.Path}, d)
	return d
}

func (g *Guard) ask(ctx context.Context, r Request, d Decision, paths []string) Decision {
	key := g.p.spec.Agent + "\x00" + r.Tool + "\x00" + strings.Join(paths, "\x00")
	if IsCommandTool(r.Tool) {
		if c, ok := r.Args["command"].(string); ok {
			key += "\x00" + c
		}
	}
	if g.grants.has(key) {
		return Decision{Allow: true, Path: d.Path, Access: d.Access, Rule: "user-allowed-run", Reason: "allowed by the user for this run"}
	}
	if g.o.Asker == nil {
		return Decision{Path: d.Path, Access: d.Access, Rule: "ask-no-terminal", Reason: fmt.Sprintf(
			"Access denied: %s; nobody can be asked (no terminal). To allow it, add a rule such as %q to permissions.allow, or use mode acceptEdits",
			d.Reason, suggestRule(r))}
	}
	ans, err := g.o.Asker.Ask(ctx, AskRequest{Agent: g.p.spec.Agent, Role: g.p.spec.Role, Tool: r.Tool,
		Args: r.Args, Paths: paths, Rule: d.Rule, Reason: d.Reason})
	if err != nil {
		return Decision{Path: d.Path, Access: d.Access, Rule: "ask-failed", Reason: fmt.Sprintf("Access denied: asking the user failed: %v", err)}
	}
	switch ans {
	case AskAllowOnce:
		return Decision{Allow: true, Path: d.Path, Access: d.Access, Rule: "user-allowed-once", Reason: "allowed by the user"}
	case AskAllowRun:
		g.grants.add(key)
		return Decision{Allow: true, Path: d.Path, Access: d.Access, Rule: "user-allowed-run", Reason: "allowed by the user for this run"}
	}
	return Decision{Path: d.Path, Access: d.Access, Rule: "user-denied", Reason: "Access denied: the user refused this call"}
}

func suggestRule(r Request) string {
	if IsCommandTool(r.Tool) {
		if c, ok := r.Args["command"].(string); ok {
			f := strings.Fields(c)
			if len(f) > 0 {
				return fmt.Sprintf("%s(%s*)", BaseToolName(r.Tool), f[0])
			}
		}
	}
	return BaseToolName(r.Tool)
}

// hookInput is what a hook reads on stdin.
type hookInput struct {
	Event     string         `json:"event"`
	Agent     string         `json:"agent"`
	Role      string         `json:"role"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Decision  hookDecision   `json:"decision"`
	Result    *string        `json:"result,omitempty"`
	IsError   *bool          `json:"is_error,omitempty"`
}

type hookDecision struct {
	Allow  bool   `json:"allow"`
	Ask    bool   `json:"ask,omitempty"`
	Rule   Rule   `json:"rule"`
	Reason string `json:"reason"`
}

func matchHook(h configs.Hook, tool string) bool {
	if h.Matcher == "" || h.Matcher == "*" {
		return true
	}
	if ok, _ := filepath.Match(h.Matcher, tool); ok {
		return true
	}
	ok, _ := filepath.Match(h.Matcher, BaseToolName(tool))
	return ok
}

func (g *Guard) preHooks(ctx context.Context, r Request, d Decision) Decision {
	for _, h := range g.o.Hooks.PreToolUse {
		if !matchHook(h, r.Tool) {
			continue
		}
		in := hookInput{Event: "pre_tool_use", Agent: g.p.spec.Agent, Role: roleName(g.p.spec.Role), Tool: r.Tool,
			Arguments: r.Args, Decision: hookDecision{Allow: d.Allow, Ask: d.Ask, Rule: d.Rule, Reason: d.Reason}}
		code, stdout, stderr, err := runHook(ctx, h, in)
		switch {
		case err != nil:
			return Decision{Path: d.Path, Access: d.Access, Rule: "hook-failed", Reason: fmt.Sprintf("Access denied: pre_tool_use hook %q failed: %v", h.Command, err)}
		case code == 2:
			msg := strings.TrimSpace(stderr)
			if msg == "" {
				msg = "no reason given"
			}
			return Decision{Path: d.Path, Access: d.Access, Rule: "hook-denied", Reason: fmt.Sprintf("Access denied by pre_tool_use hook %q: %s", h.Command, msg)}
		case code != 0:
			return Decision{Path: d.Path, Access: d.Access, Rule: "hook-failed", Reason: fmt.Sprintf("Access denied: pre_tool_use hook %q exited with status %d: %s", h.Command, code, strings.TrimSpace(stderr))}
		}
		// Exit 0 may carry {"decision": "allow"|"deny", "reason": "..."}; an allow settles an ask.
		var out struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}
		if s := strings.TrimSpace(stdout); strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &out) == nil {
			switch strings.ToLower(out.Decision) {
			case "deny", "block":
				return Decision{Path: d.Path, Access: d.Access, Rule: "hook-denied", Reason: fmt.Sprintf("Access denied by pre_tool_use hook %q: %s", h.Command, out.Reason)}
			case "allow", "approve":
				if d.Ask {
					d = Decision{Allow: true, Path: d.Path, Access: d.Access, Rule: "hook-allowed", Reason: fmt.Sprintf("allowed by pre_tool_use hook %q", h.Command)}
				}
			}
		}
	}
	return d
}

// Done runs the post-tool-use hooks; their failures are logged, the call already happened.
func (g *Guard) Done(ctx context.Context, r Request, d Decision, result string, isError bool) {
	for _, h := range g.o.Hooks.PostToolUse {
		if !matchHook(h, r.Tool) {
			continue
		}
		res, ie := result, isError
		in := hookInput{Event: "post_tool_use", Agent: g.p.spec.Agent, Role: roleName(g.p.spec.Role), Tool: r.Tool,
			Arguments: r.Args, Decision: hookDecision{Allow: d.Allow, Rule: d.Rule, Reason: d.Reason}, Result: &res, IsError: &ie}
		code, _, stderr, err := runHook(ctx, h, in)
		if err != nil || code != 0 {
			g.log.Warn("post_tool_use hook failed", zap.String("hook", h.Command), zap.Int("status", code),
				zap.String("stderr", stderr), zap.Error(err))
		}
	}
}

// runHook runs one hook with `sh -c`, the call as JSON on stdin. err is set when it could not
// run or timed out; otherwise code is its exit status.
func runHook(ctx context.Context, h configs.Hook, in hookInput) (int, string, string, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return -1, "", "", fmt.Errorf("encoding the call: %w", err)
	}
	timeout := defaultHookTimeout
	if h.TimeoutSeconds > 0 {
		timeout = time.Duration(h.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", h.Command)
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return -1, stdout.String(), stderr.String(), fmt.Errorf("timed out after %s", timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stdout.String(), stderr.String(), nil
	}
	if err != nil {
		return -1, stdout.String(), stderr.String(), err
	}
	return 0, stdout.String(), stderr.String(), nil
}

// AuditLog appends one JSON line per decision (permissions.jsonl). Safe for concurrent use.
type AuditLog struct {
	mu sync.Mutex
	f  *os.File
}

// AuditEntry is one line of permissions.jsonl.
type AuditEntry struct {
	Time     time.Time `json:"time"`
	Agent    string    `json:"agent"`
	Role     string    `json:"role"`
	Tool     string    `json:"tool"`
	Paths    []string  `json:"paths"`
	Decision string    `json:"decision"`
	Rule     Rule      `json:"rule"`
	Reason   string    `json:"reason,omitempty"`
}

// OpenAuditLog opens (creating or appending to) the audit file.
func OpenAuditLog(path string) (*AuditLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("permissions: opening audit log: %w", err)
	}
	return &AuditLog{f: f}, nil
}

// Write appends one entry.
func (a *AuditLog) Write(e AuditEntry) error {
	if a == nil {
		return nil
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return errors.New("permissions: audit log closed")
	}
	_, err = a.f.Write(data)
	return err
}

// Close closes the file.
func (a *AuditLog) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

func (g *Guard) audit(tool string, paths []string, d Decision) {
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
	if err := g.o.Audit.Write(AuditEntry{Time: time.Now().UTC(), Agent: g.p.spec.Agent, Role: roleName(g.p.spec.Role),
		Tool: tool, Paths: paths, Decision: dec, Rule: d.Rule, Reason: d.Reason}); err != nil {
		g.log.Warn("audit log write failed", zap.Error(err))
	}
}
