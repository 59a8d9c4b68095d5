package filesystem

import (
	"context"
	"fmt"
	"slices"

	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// Each of massgen's own tools is declared once, in its own file (<name>.go, its description in
// <name>.md beside it): parameters, description, flags, summary, preview and handler. Names and
// argument names follow the reference MCP filesystem server and MassGen's workspace tools: models
// and configs rely on them. Adding a tool is adding its file: its init registers it here, and
// everything that lists tools (the run, `tools list`, `mcp serve`, `permissions check`, the docs
// test) reads Builtins.

// builtin is a registered tool: its declaration and its handler, which binds the call's
// arguments into the declaration's parameters and runs.
type builtin struct {
	tooldecl.Tool
	run func(t *Toolset, ctx context.Context, c *call) (any, error)
}

// registered are the built-in tools in their Order. Only the tool files' init functions write
// it (Go runs them once, in one goroutine, before anything can read it); it is read-only after.
var registered []builtin

// register declares a built-in tool with its handler; its file's init calls it. A malformed
// declaration, a name or an Order taken twice panics when the package loads (every test sees it).
func register[P any](def tooldecl.Def[P], run func(t *Toolset, ctx context.Context, c *call, p P) (any, error)) {
	d := tooldecl.New(def)
	if d.MassGenAction() && len(permissions.Classes(d.Decl())) != 1 {
		panic(fmt.Sprintf("filesystem: tool %s: a MassGen action must map onto one class, not %v", d.Name(), permissions.Classes(d.Decl())))
	}
	for _, b := range registered {
		if b.Name() == d.Name() || b.Order() == d.Order() {
			panic(fmt.Sprintf("filesystem: tool %s: name or order %d already taken by %s", d.Name(), d.Order(), b.Name()))
		}
	}
	b := builtin{Tool: d, run: func(t *Toolset, ctx context.Context, c *call) (any, error) {
		p, err := d.Bind(c.args)
		if err != nil {
			return nil, err
		}
		return run(t, ctx, c, p)
	}}
	i, _ := slices.BinarySearchFunc(registered, d.Order(), func(b builtin, o int) int { return b.Order() - o })
	registered = slices.Insert(registered, i, b)
}

// Builtins are massgen's own tools, in the order they are offered.
func Builtins() tooldecl.Set {
	out := make(tooldecl.Set, len(registered))
	for i, b := range registered {
		out[i] = b.Tool
	}
	return out
}

// Builtin finds one of massgen's own tools by its exact name (an MCP server's tool of the same
// name, mcp__<server>__<name>, is not one).
func Builtin(name string) (tooldecl.Tool, bool) { return Builtins().Lookup(name) }

// Table is what the permission engine knows about massgen's built-in tools: their path
// arguments with their access, and their flags. Give it to permissions.Spec.Tools.
func Table() toolargs.Table { return Builtins().Table() }

// MassGenActions maps each MassGen 0.1.97 backend.permissions action that is a built-in tool's
// name (its declaration says so: MassGenAction) onto the permission engine's class the tool is
// in: read_file -> @read. Give it to configs.LoadOptions.Actions.
func MassGenActions() map[string]string {
	out := map[string]string{}
	for _, b := range registered {
		if b.MassGenAction() {
			out[b.Name()] = permissions.Classes(b.Decl())[0]
		}
	}
	return out
}

// patternsOr is the batch tools' include_patterns: everything ("*") when none are given.
func patternsOr(include []string) []string {
	if len(include) == 0 {
		return []string{"*"}
	}
	return include
}
