// Package permissions decides, for an agent in a role and a tool call with its arguments, whether
// the call is allowed, and why. Decisions are pure: a Policy is built once per agent per run and is
// immutable, so concurrent agents share nothing mutable. Asking the user, hooks and the audit log
// wrap Decide (see Guard); they do not live inside it.
package permissions

import (
	"context"

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
	Read  = toolargs.Read
	Write = toolargs.Write
)

// Mode is the spec-004 permission mode.
type Mode string

const (
	ModeAcceptEdits Mode = "acceptEdits" // default: path rules decide, nobody is asked
	ModeDefault     Mode = "default"     // also ask before final writes to context paths and unlisted commands
	ModeBypass      Mode = "bypassPermissions"
)

// ContextPath is a user path (file or directory), absolute, with absolute protected paths.
type ContextPath struct {
	Path      string
	Write     bool // configured permission; only honoured for the Final role
	Protected []string
}

// Spec is everything a Policy is built from. Paths are absolute (configs.Resolve makes them so).
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
}

// Request is one tool call.
type Request struct {
	Tool string
	Args map[string]any
}

// Decision is the answer, with the path and rule that decided it.
type Decision struct {
	Allow bool
	// Ask is set (with Allow false) when mode "default" wants the user asked; Guard turns it
	// into an allow or a deny.
	Ask    bool
	Path   string // the path that decided (the first denied one, or the last checked)
	Access Access
	Rule   string // short rule id, e.g. "protected-path", "outside-managed-paths"
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
	Rule   string
	Reason string
}

// Asker asks the user. The CLI implements it with a huh prompt; without a terminal the Guard
// uses no Asker and an ask becomes a deny whose reason says how to allow it.
type Asker interface {
	Ask(ctx context.Context, req AskRequest) (AskAnswer, error)
}
