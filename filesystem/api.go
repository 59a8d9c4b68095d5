// Package filesystem owns what agents call: the workspace and context-path file tools, the
// command tool and its kernel sandbox, deletion with trash, and the Toolset that puts every call
// (ours and external MCP tools alike) through the permission layer first.
package filesystem

import "context"

// Tool is one tool offered to a model. Parameters is a JSON schema object.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
	// Write is true for tools that modify files (hidden when the agent may write nowhere).
	Write bool
}

// Result is a tool's answer. Content is a JSON object; IsError marks a denial or a failure
// (the reason is in Content), which goes back to the model and never stops the run.
type Result struct {
	Content string
	IsError bool
}

// External is a provider of tools that are not ours (an MCP server). The Toolset checks every
// call with the permission layer before it reaches Call.
type External interface {
	Tools() []Tool
	Call(ctx context.Context, name string, args map[string]any) Result
}
