package filesystem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/internal/vocab"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// ToolsetOptions configures a Toolset for one agent in one role.
type ToolsetOptions struct {
	Guard                   *guard.Guard // every call goes through Guard.Check first
	TrashDir                string       // <.massgen>/trash/<run-id>; "" = deletions from context paths are refused
	EnforceReadBeforeDelete bool
	Tracker                 *Tracker       // files read/created this run; nil: new
	Sandbox                 sandbox.Mode   // "" is auto
	CommandLimits           sandbox.Limits // bounds on each command (zero fields: the defaults)
	// CommandNetwork is what commands and custom tool processes may reach (zero: nothing);
	// the Toolset reports each connection its proxy allows or refuses (network.go).
	CommandNetwork sandbox.Network
	External       map[string]External // MCP server name -> tools, offered as mcp__<server>__<tool>
	// ExternalOnly offers the External tools only: an agent without a workspace has no file tools.
	ExternalOnly bool
	// Custom, when set, provides the config's custom_tools (offered with or without a workspace).
	Custom Custom
	// Hide, when set, hides tools from the agent (not offered, and refused if called): a
	// built-in tool is asked with server "", an External one with its server and own name.
	Hide func(server, tool string) bool
	// Planning is MassGen's planning mode (coordination with enable_planning_mode): an External
	// tool not declared read-only may act on the world outside massgen's sandbox, so it is not
	// run; the call is answered with a note that the agent presenting the final answer will.
	Planning bool
	Logger   *zap.Logger
	// Journal, when set, keeps the original of every entry of a writable context path before a
	// tool first changes it in this turn (change review and undo: a *changes.Journal). Leave it
	// nil (not a nil *changes.Journal) when there is none.
	Journal changes.Recorder
}

// Toolset is the set of tools one agent is offered in one role. It is safe for concurrent use.
type Toolset struct {
	o       ToolsetOptions
	guard   *guard.Guard
	pol     *permissions.Policy
	tracker *Tracker
	log     *zap.Logger
	builtin map[string]builtin // massgen's own tools by name (Builtins gives their order)
	custom  map[string]bool    // names of the Custom tools

	budget budgets // what one call of a gathering tool may return

	// beforeUse, when set (tests only), runs after the permission decision and before the tool
	// acts, so tests can swap a link in deterministically.
	beforeUse func()
}

// call is one invocation of a built-in tool: its arguments (bound into the tool's parameters
// before its handler runs), the walks its path arguments were judged on (the tool acts on those),
// and what it changed.
type call struct {
	name    string
	args    map[string]any
	walks   *walks
	changes []changes.Change
}

// changed records a path the call changed (canonical).
func (c *call) changed(path string, op changes.ChangeOp) {
	c.changes = append(c.changes, changes.Change{Path: path, Op: op})
}

// NewToolset builds a Toolset.
func NewToolset(o ToolsetOptions) (*Toolset, error) {
	if o.Guard == nil {
		return nil, errors.New("filesystem: NewToolset: nil Guard")
	}
	pol := o.Guard.Policy()
	if pol == nil {
		return nil, errors.New("filesystem: NewToolset: Guard has no Policy")
	}
	if o.Tracker == nil {
		o.Tracker = NewTracker()
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if j, ok := o.Journal.(*changes.Journal); ok && j == nil {
		o.Journal = nil // a nil *Journal is no journal, not one to call
	}
	t := &Toolset{o: o, guard: o.Guard, pol: pol, tracker: o.Tracker, log: o.Logger, builtin: map[string]builtin{}, budget: defaultBudgets()}
	for _, b := range registered {
		t.builtin[b.Name()] = b
	}
	if o.Custom != nil {
		t.custom = map[string]bool{}
		for _, tl := range o.Custom.Tools() {
			if _, clash := t.builtin[tl.Name]; clash || toolargs.IsMCPName(tl.Name) {
				return nil, fmt.Errorf("filesystem: NewToolset: custom tool %q clashes with massgen's tool names", tl.Name)
			}
			t.custom[tl.Name] = true
		}
	}
	if tb := pol.Spec().Tools; tb != nil {
		// The Policy was given the tool table: it must be this one, or decisions made without
		// a Toolset (permissions check) would differ from the run's.
		for _, b := range registered {
			if got, ok := tb[b.Name()]; !ok || !sameDecl(got, b.Decl()) {
				return nil, fmt.Errorf("filesystem: NewToolset: the Policy's tool table declares %s differently from filesystem.Table()", b.Name())
			}
		}
	}
	_, serr := sandbox.Effective(o.Sandbox)
	var unknown *vocab.UnknownError
	switch {
	case errors.As(serr, &unknown):
		return nil, fmt.Errorf("filesystem: %w", serr)
	case o.Sandbox == sandbox.ModeNone:
		t.log.Warn("command_sandbox: none: agent commands run WITHOUT a kernel sandbox; only the permission rules protect your files",
			zap.String("agent", pol.Spec().Agent))
	case serr != nil:
		t.log.Warn("execute_command will refuse to run commands", zap.Error(serr))
	}
	return t, nil
}

// DescribeRoots lists the roots the agent may read, one line each, in the words
// list_allowed_directories uses: what the agent's prompt shows.
func (t *Toolset) DescribeRoots() string { return t.pol.DescribeRoots() }

// DescribeLimits is the agent's directory limits, as Tools appends them to every description.
func (t *Toolset) DescribeLimits() string { return strings.TrimSpace(t.pol.DescribeLimits()) }

// Tracker returns the tracker of files read or created this run.
func (t *Toolset) Tracker() *Tracker { return t.tracker }

// Tools returns the tools offered: write tools only when the agent may write somewhere; every
// description ends with the agent's directory limits.
func (t *Toolset) Tools() []Tool {
	limits := strings.TrimSpace(t.pol.DescribeLimits())
	canWrite := t.pol.CanWrite()
	var out []Tool
	add := func(tl Tool) {
		if tl.Write && !canWrite {
			return
		}
		if limits != "" {
			tl.Description = strings.TrimRight(tl.Description, "\n") + "\n\n" + limits
		}
		out = append(out, tl)
	}
	for _, b := range registered {
		if !t.o.ExternalOnly && !t.hidden("", b.Name()) {
			add(Tool{Name: b.Name(), Description: b.Description(), Parameters: b.Schema(), Write: b.Writes(),
				ReadOnly: b.ReadOnly(), Destructive: b.Destructive()})
		}
	}
	if t.o.Custom != nil {
		for _, tl := range t.o.Custom.Tools() {
			if !t.hidden("", tl.Name) {
				tl.Write = tl.Write || permissions.IsWriteTool(tl.Name)
				tl.ReadOnly, tl.Destructive = false, true // Python code that may write where the agent may
				add(tl)
			}
		}
	}
	for _, server := range t.serverNames() {
		for _, tl := range t.o.External[server].Tools() {
			if t.hidden(server, tl.Name) {
				continue
			}
			tl.Name = toolargs.MCPName(server, tl.Name)
			tl.Write = tl.Write || permissions.IsWriteTool(tl.Name)
			tl.ReadOnly = tl.ReadOnly && !tl.Write // never announce as read-only what massgen treats as writing
			tl.Destructive = !tl.ReadOnly          // all a server tells is whether it is read-only
			add(tl)
		}
	}
	return out
}

func (t *Toolset) hidden(server, tool string) bool { return t.o.Hide != nil && t.o.Hide(server, tool) }

// Planned reports whether planning mode keeps a tool from running (ToolsetOptions.Planning).
func (t *Toolset) Planned(name string) bool {
	server, tool, ok := t.splitExternal(name)
	return ok && t.planned(server, tool)
}

// planned: in planning mode, every external tool its server does not declare read-only.
func (t *Toolset) planned(server, tool string) bool {
	if !t.o.Planning {
		return false
	}
	for _, tl := range t.o.External[server].Tools() {
		if tl.Name == tool {
			return !tl.ReadOnly
		}
	}
	return true
}

// plannedResult answers a call that planning mode does not run. It is an error result: the
// call did not do what was asked.
func plannedResult(name string) Result {
	msg := fmt.Sprintf("not run: planning mode: during coordination %s is not executed, since it may act outside massgen's sandbox (its server does not declare it read-only). "+
		"Describe what you would do with it; the agent presenting the final answer will run it.", name)
	return errResult(msg, nil)
}

func (t *Toolset) serverNames() []string {
	names := make([]string, 0, len(t.o.External))
	for s := range t.o.External {
		names = append(names, s)
	}
	sort.Strings(names)
	return names
}

// splitExternal finds the server of a prefixed tool name (toolargs.SplitMCPName).
func (t *Toolset) splitExternal(name string) (server, tool string, ok bool) {
	return toolargs.SplitMCPName(name, t.serverNames())
}

// Call runs one tool call: parse, permission check, run, post hooks. It never panics; denials
// and failures are error Results whose Content is a JSON object with the reason.
func (t *Toolset) Call(ctx context.Context, name string, raw json.RawMessage) Result {
	return t.CallArgs(ctx, name, tooldecl.Decode(raw))
}

// CallArgs is Call for arguments already decoded (tooldecl.Decode): the orchestrator decodes a
// call's arguments once, for its summary and for the call.
func (t *Toolset) CallArgs(ctx context.Context, name string, a tooldecl.Args) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			t.log.Error("tool panicked", zap.String("tool", name), zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			res = errResult(fmt.Sprintf("internal error in %s: %v", name, r), nil)
		}
	}()
	if a.Err != nil {
		return errResult(fmt.Sprintf("%s: arguments are not a JSON object: %v", name, a.Err), nil)
	}
	args := a.Map
	req := permissions.Request{Tool: name, Args: args}

	if server, tool, ok := t.splitExternal(name); ok {
		if t.hidden(server, tool) {
			return errResult(fmt.Sprintf("%s is not offered to this agent (exclude_tools)", name), nil)
		}
		if t.planned(server, tool) {
			return plannedResult(name)
		}
		d := t.guard.Check(ctx, req)
		if !d.Allow {
			return denied(d)
		}
		r := t.o.External[server].Call(ctx, tool, args)
		t.guard.Done(ctx, req, d, r.Content, r.IsError)
		return r
	}
	if t.custom[name] {
		return t.callCustom(ctx, req)
	}
	def, ok := t.builtin[name]
	if !ok {
		return errResult(fmt.Sprintf("unknown tool %q", name), nil)
	}
	if t.hidden("", name) {
		return errResult(fmt.Sprintf("%s is not offered to this agent (exclude_tools)", name), nil)
	}
	if t.o.ExternalOnly {
		return errResult(fmt.Sprintf("%s is not available: this agent has no workspace, so no file tools", name), nil)
	}
	if def.Writes() && !t.pol.CanWrite() {
		return errResult(fmt.Sprintf("%s is not available: this agent may not write anywhere", name), nil)
	}
	// Each path argument is walked once, by the decision; the tool acts on those walks.
	ws := newWalks()
	defer ws.close()
	decl := def.Decl()
	req.Decl, req.Resolver = &decl, ws
	d := t.guard.Check(ctx, req)
	if !d.Allow {
		return denied(d)
	}
	if t.beforeUse != nil {
		t.beforeUse()
	}
	c := &call{name: name, args: args, walks: ws}
	out, err := def.run(t, ctx, c)
	if err != nil {
		var de deniedError
		if errors.As(err, &de) {
			res = denied(de.d)
		} else {
			res = errResult(fmt.Sprintf("%s: %v", name, err), out)
		}
	} else {
		b, merr := marshalResult(out)
		if merr != nil {
			res = errResult(fmt.Sprintf("%s: encoding result: %v", name, merr), nil)
		} else {
			res = Result{Content: b}
			if f, ok := out.(interface{ failure() string }); ok {
				if msg := f.failure(); msg != "" {
					res.IsError, res.Message = true, msg
				}
			}
		}
	}
	res.Changes = c.changes
	t.guard.Done(ctx, req, d, res.Content, res.IsError)
	return res
}

// marshalResult encodes a tool's result straight into the string returned (a result the size of
// a budget is not copied again). HTML characters stay as they are: models read the result, not a
// browser, and "<" as \u003c would take six bytes of every budget instead of one.
func marshalResult(v any) (string, error) {
	var sb strings.Builder
	if h, ok := v.(interface{ sizeHint() int }); ok {
		sb.Grow(h.sizeHint())
	}
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(sb.String(), "\n"), nil
}

// callCustom runs a custom tool: permission check, then the process in the agent's sandbox.
func (t *Toolset) callCustom(ctx context.Context, req permissions.Request) Result {
	if t.hidden("", req.Tool) {
		return errResult(fmt.Sprintf("%s is not offered to this agent (exclude_tools)", req.Tool), nil)
	}
	if permissions.IsWriteTool(req.Tool) && !t.pol.CanWrite() {
		return errResult(fmt.Sprintf("%s is not available: this agent may not write anywhere", req.Tool), nil)
	}
	d := t.guard.Check(ctx, req)
	if !d.Allow {
		return denied(d)
	}
	r := t.o.Custom.Call(ctx, req.Tool, req.Args, CommandSandbox{
		Mode: t.o.Sandbox, Policy: t.sandboxPolicy(), Workspace: SandboxWorkspace(t.pol), Trash: t.trashFromDir, Log: t.log,
		Limits: t.o.CommandLimits, Network: t.commandNetwork(ctx, req.Tool),
	})
	t.guard.Done(ctx, req, d, r.Content, r.IsError)
	return r
}

// Cancellable reports whether stopping the run should cancel a call of the named tool:
// commands, custom and external tools are cancelled; massgen's file tools finish what they started (a
// file operation is never left half done).
func (t *Toolset) Cancellable(name string) bool {
	if d, ok := t.builtin[name]; ok {
		return d.Decl().Cancellable
	}
	return true
}

func sameDecl(a, b toolargs.Tool) bool {
	return a.Name == b.Name && a.Command == b.Command && a.Cancellable == b.Cancellable && slices.Equal(a.Args, b.Args)
}

// deniedError carries a Decision from a per-file check inside a tool.
type deniedError struct{ d permissions.Decision }

func (e deniedError) Error() string { return e.d.Reason }

func denied(d permissions.Decision) Result {
	m := map[string]any{"error": d.Reason, "denied": true}
	if d.Rule != "" {
		m["rule"] = d.Rule
	}
	if d.Path != "" {
		m["path"] = d.Path
	}
	b, _ := json.Marshal(m)
	return Result{Content: string(b), IsError: true, Denied: &d, Message: d.Reason}
}

// errResult is an error Result; extra (a map or struct, may be nil) adds fields next to "error".
func errResult(msg string, extra any) Result {
	m := map[string]any{}
	if extra != nil {
		if b, err := json.Marshal(extra); err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	m["error"] = msg
	b, _ := json.Marshal(m)
	return Result{Content: string(b), IsError: true, Message: msg}
}

// checkEntry is the per-entry check of tools that walk a tree: path is canonical (reached
// through directory descriptors from a walked argument), so nothing is resolved again. Audited.
func (t *Toolset) checkEntry(ctx context.Context, tool, path string, a permissions.Access) error {
	d := t.guard.CheckCanonical(ctx, tool, path, a)
	if !d.Allow {
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("access to %s denied", path)
		}
		return deniedError{d}
	}
	return nil
}

// Tracker remembers the files an agent read or created during a run (read-before-delete).
// It is safe for concurrent use and shared across an agent's phases.
type Tracker struct {
	mu    sync.Mutex
	paths map[string]bool // path -> whole tree (a directory the agent created)
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker { return &Tracker{paths: map[string]bool{}} }

// Mark records that the agent read or created path (absolute, resolved).
func (tr *Tracker) Mark(path string) {
	tr.mu.Lock()
	tr.paths[filepath.Clean(path)] = false
	tr.mu.Unlock()
}

// MarkTree records a directory the agent created (or copied or moved): everything under it
// counts as created.
func (tr *Tracker) MarkTree(dir string) {
	tr.mu.Lock()
	tr.paths[filepath.Clean(dir)] = true
	tr.mu.Unlock()
}

// Known reports whether path was read or created (itself, or under a directory it created).
func (tr *Tracker) Known(path string) bool {
	path = filepath.Clean(path)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if _, ok := tr.paths[path]; ok {
		return true
	}
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		if tree, ok := tr.paths[p]; ok && tree {
			return true
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}

// move re-keys what is known under src (itself and below) to dst, after a rename.
func (tr *Tracker) move(src, dst string) {
	src, dst = filepath.Clean(src), filepath.Clean(dst)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	moved := map[string]bool{}
	for p, tree := range tr.paths {
		if pathx.Within(p, src) {
			moved[dst+strings.TrimPrefix(p, src)] = tree
			delete(tr.paths, p)
		}
	}
	// A known ancestor tree of src (a directory the agent created) covers src's content too.
	for p := filepath.Dir(src); ; p = filepath.Dir(p) {
		if tree, ok := tr.paths[p]; ok && tree {
			moved[dst] = true
			break
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	for p, tree := range moved {
		tr.paths[p] = tree
	}
}

// forget drops path and everything under it (after a delete or a move).
func (tr *Tracker) forget(path string) {
	path = filepath.Clean(path)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for p := range tr.paths {
		if pathx.Within(p, path) {
			delete(tr.paths, p)
		}
	}
}
