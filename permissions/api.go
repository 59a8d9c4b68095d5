// Package permissions decides, for an agent in a role and a tool call with its arguments, whether
// the call is allowed, and why. Decisions are pure: a Policy is built once per agent per run and is
// immutable, so concurrent agents share nothing mutable. Asking the user, hooks and the audit log
// wrap Decide (package permissions/guard); they do not live inside it, and neither does building
// a Spec from the config (internal/agentenv/permconfig): this package imports no configs.
package permissions

import (
	"context"
	"fmt"

	"github.com/massgen-go/massgen/internal/roots"
	"github.com/massgen-go/massgen/internal/vocab"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// Role is the phase an agent is in.
type Role int

const (
	// Coordination agents read context paths whatever their configured permission.
	Coordination Role = iota
	// Final is the presenting agent: context paths get their configured permission.
	Final
)

// Access is what an operation needs on a path (see toolargs).
type Access = toolargs.Access

const (
	Read   = toolargs.Read
	Write  = toolargs.Write
	Delete = toolargs.Delete
)

// Mode is the spec-004 permission mode (its words are declared once, in vocab.PermissionMode).
type Mode = vocab.PermissionMode

const (
	ModeAcceptEdits = vocab.PermissionAcceptEdits // default: path rules decide, nobody is asked
	ModeDefault     = vocab.PermissionDefault     // also ask before final writes to context paths and unlisted commands
	ModeBypass      = vocab.PermissionBypass
)

// ContextAccess is a context path's configured permission for the Final role (its words are
// declared once, in vocab.Access); ContextPath.Write is what the engine keeps of it.
type ContextAccess = vocab.Access

const (
	ContextRead  = vocab.AccessRead
	ContextWrite = vocab.AccessWrite
)

// ContextPath is a user path (file or directory), absolute, with absolute protected paths.
type ContextPath struct {
	Path      string
	Write     bool // configured permission; only honoured for the Final role
	Protected []string
}

// Spec is everything a Policy is built from. Paths are absolute (configs.Load relocates them so).
type Spec struct {
	Agent          string
	Role           Role
	Workspace      string   // the agent's own workspace: read+write
	TempWorkspaces []string // other agents' snapshots: read
	ReadOnly       []string // other read-only roots (e.g. the previous turn's workspace)
	ContextPaths   []ContextPath
	// ReadPaths/WritePaths: the folder guard (spec 003). When non-empty they limit further.
	ReadPaths  []string
	WritePaths []string
	Mode       Mode
	Allow      []string // rules such as "execute_command(npm test*)"
	Deny       []string
	// Sandboxed is true when commands run under a kernel sandbox; when false the stricter
	// MassGen command rules (no expansions, backticks, process substitution) also apply.
	Sandboxed bool
	// Home is used for ~ expansion (empty: os.UserHomeDir()).
	Home string
	// Private are paths no tool may touch, reads included, even when they lie inside a context
	// path: other agents' workspaces and the snapshot storage (which holds real agent ids).
	Private []string
	// Tools declares massgen's built-in tools (filesystem.Table()): their path arguments are
	// known, never guessed from names. nil: only the reference MCP filesystem server's tools
	// are known, and the rest is classified by heuristics.
	Tools toolargs.Table
	// Roots, when set, are the managed roots above (workspace, temp workspaces, read-only,
	// context, protected and private paths) already resolved and held open, once, by the agent's
	// environment (RootsInput, roots.Open): the Policy decides on their canonical paths. nil: New
	// resolves them itself.
	Roots *roots.Set
}

// Request is one tool call.
type Request struct {
	Tool string
	Args map[string]any
	// Decl, when set, declares the tool called (the caller's table entry, which Spec.Tools
	// also holds when the caller filled it): its path arguments are taken from it.
	Decl *toolargs.Tool
	// Resolver, when set, resolves the tool's own path arguments for a caller that acts on what
	// the resolution found (the file tools): the decision is made on exactly that. nil: paths
	// are resolved here, by string (commands and external tools: the sandbox or the server acts).
	Resolver Resolver
}

// Resolver walks a path once for the caller, which keeps what it found to act on.
type Resolver interface {
	// Resolve walks abs (absolute, not cleaned; ".." applies to the directory reached) for the
	// argument arg. entry: when the last component is a link, the link itself is the result
	// (it is removed or moved, not followed). It returns the canonical, symlink-free path, or an
	// error, preferably a *ResolveError saying where the walk stopped.
	Resolve(arg, abs string, entry bool) (string, error)
}

// ResolveError says where a resolution stopped: At is the canonical path whose lookup failed, so
// a denial can tell a failure inside a managed root from one outside, which must not be shown.
type ResolveError struct {
	Abs, At string
	Err     error // nil: At is not a directory
}

func (e *ResolveError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("cannot resolve %q: %s is not a directory", e.Abs, e.At)
	}
	return fmt.Sprintf("cannot resolve %q: %v", e.Abs, e.Err)
}

func (e *ResolveError) Unwrap() error { return e.Err }

// Decision is the answer, with the path and rule that decided it.
type Decision struct {
	Allow bool
	// Ask is set (with Allow false) when mode "default" wants the user asked; the Guard turns it
	// into an allow or a deny.
	Ask    bool
	Path   string // the path that decided (the first denied one, or the last checked)
	Access Access
	Rule   Rule   // short rule id, e.g. RuleProtected, RuleOutside
	Reason string // human and model readable; names the path and the rule
}

// PathAccess is one path argument found in a tool call and what the call does to it.
type PathAccess = toolargs.PathArg

// AskAnswer is the user's reply to an ask.
type AskAnswer int

const (
	AskDeny AskAnswer = iota
	AskAllowOnce
	AskAllowRun // remembered for this run by agent + tool + path
)

// AskRequest is what the user is shown when mode "default" wants a confirmation.
type AskRequest struct {
	Agent  string
	Role   Role
	Tool   string
	Args   map[string]any
	Paths  []string
	Rule   Rule
	Reason string
}

// Asker asks the user. The CLI implements it with a huh prompt; without a terminal the Guard
// uses no Asker and an ask becomes a deny whose reason says how to allow it.
type Asker interface {
	Ask(ctx context.Context, req AskRequest) (AskAnswer, error)
}

// Rule is the id of the rule that decided (docs/permissions.md lists them).
type Rule string

const (
	// Allowed by the kind of managed root the path is in.
	RuleWorkspace     Rule = "workspace"
	RuleTempWorkspace Rule = "temp-workspace"
	RuleReadOnlyPath  Rule = "read-only-path"
	RuleContextPath   Rule = "context-path"
	RuleWorkflowTool  Rule = "workflow-tool"
	RuleNoPaths       Rule = "no-paths"
	RuleAllowRule     Rule = "allow-rule"

	// Path denials.
	RuleOutside           Rule = "outside-managed-paths"
	RulePrivate           Rule = "private-path"
	RuleFileSibling       Rule = "file-context-sibling"
	RuleFolderGuard       Rule = "folder-guard"
	RuleProtected         Rule = "protected-path"
	RuleDefaultExcluded   Rule = "default-excluded"
	RuleReadOnlyWorkspace Rule = "read-only-workspace"
	RuleReadOnlyTemp      Rule = "read-only-temp-workspace"
	RuleReadOnlyReadOnly  Rule = "read-only-read-only-path"
	RuleReadOnlyContext   Rule = "read-only-context-path"
	RuleManagedRoot       Rule = "managed-root"
	RuleContainsReadOnly  Rule = "contains-read-only"
	RuleUnresolvable      Rule = "unresolvable-path"
	RuleGlobTooLarge      Rule = "glob-too-large"

	// Call denials.
	RuleDenyRule         Rule = "deny-rule"
	RuleDangerousCommand Rule = "dangerous-command"
	RuleTooLarge         Rule = "too-large-to-check"
	RuleCannotDetermine  Rule = "cannot-determine-path"
	RuleCommandExpansion Rule = "command-expansion"
	RuleInlineCode       Rule = "inline-code"

	// Asks and their answers, hooks.
	RuleAsk            Rule = "ask"
	RuleAskNoTerminal  Rule = "ask-no-terminal"
	RuleAskFailed      Rule = "ask-failed"
	RuleUserAllowed    Rule = "user-allowed-once"
	RuleUserAllowedRun Rule = "user-allowed-run"
	RuleUserDenied     Rule = "user-denied"
	RuleHookAllowed    Rule = "hook-allowed"
	RuleHookDenied     Rule = "hook-denied"
	RuleHookFailed     Rule = "hook-failed"
)
