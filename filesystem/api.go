// Package filesystem owns what agents call: the workspace and context-path file tools, the
// command tool (confined by internal/sandbox), deletion with trash, and the Toolset that puts every call
// (ours and external MCP tools alike) through the permission layer first. What the tools change
// in context paths is recorded by package changes (ToolsetOptions.Journal).
package filesystem

import (
	"context"
	"os"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/permissions"
)

// Tool is one tool offered to a model. Parameters is a JSON schema object.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
	// Write is true for tools that modify files (hidden when the agent may write nowhere).
	Write bool
	// ReadOnly: the tool never changes anything. For massgen's own tools it follows from the
	// declaration (no path it writes or deletes, no command); an external tool has it when its
	// server declares so (the MCP readOnlyHint annotation), and planning mode runs only those.
	ReadOnly bool
	// Destructive: the tool may overwrite or remove what exists (delete, move, overwrite, a
	// command; MCP's destructiveHint). False for read-only tools and for tools that only add
	// (create_directory). Tools massgen knows nothing about (custom, external and not read-only)
	// are taken to be destructive.
	Destructive bool
}

// Result is a tool's answer. Content is a JSON object; IsError marks a denial or a failure
// (the reason is in Content), which goes back to the model and never stops the run. The typed
// fields say the same things for the orchestrator and displays, which never parse Content.
type Result struct {
	Content string
	IsError bool
	// Denied is the decision that refused the call (or one path inside it); nil otherwise.
	Denied *permissions.Decision
	// Message is the one-line error or denial reason ("" on success).
	Message string
	// Changes are the resolved paths the call created, modified or deleted, in order.
	Changes []changes.Change
}

// External is a provider of tools that are not ours (an MCP server). The Toolset checks every
// call with the permission layer before it reaches Call.
type External interface {
	Tools() []Tool
	Call(ctx context.Context, name string, args map[string]any) Result
}

// Custom is a provider of tools that run as processes in the agent's command sandbox (the
// config's custom_tools). The Toolset offers them under their own names, checks every call with
// the permission layer, then hands Call the agent's sandbox; calls are cancelled with the run.
type Custom interface {
	Tools() []Tool
	Call(ctx context.Context, name string, args map[string]any, sb CommandSandbox) Result
}

// CommandSandbox is what a process started for an agent runs under: its command sandbox
// (execute_command's), with the agent's policy for the Toolset's role.
type CommandSandbox struct {
	Mode   sandbox.Mode   // command_sandbox ("" is auto)
	Policy sandbox.Policy // what the process may touch
	// Workspace is the agent's workspace ("" when it has none).
	Workspace string
	// Trash receives what the sandbox's clean-up takes away (nil: it is deleted).
	Trash func(dir *os.File, name, path string) (string, error)
	Log   *zap.Logger
	// Limits bound the process (memory, processes, CPU time, file size; zero: the defaults).
	Limits sandbox.Limits
	// Network is what the process may reach (zero: nothing).
	Network sandbox.Network
}
