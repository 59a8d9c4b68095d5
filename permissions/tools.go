package permissions

import (
	"errors"
	"fmt"

	"github.com/massgen-go/massgen/permissions/shellcmd"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// Tool-argument classification lives in toolargs; these are the names the rest of massgen
// calls, and the step classification leaves to this package: analysing a command's words.

// BaseToolName strips every mcp__<server>__ prefix: mcp__fs__read_file -> read_file.
func BaseToolName(tool string) string { return toolargs.BaseToolName(tool) }

// IsCommand reports whether the call r runs shell commands: by its declaration (r.Decl, else
// the one the Policy's tool table holds), or, for a tool nobody declares, by its name
// (toolargs.Table.IsCommand). The rules, the classification and the Guard's grants all judge
// command-ness here.
func (p *Policy) IsCommand(r Request) bool { return isCommandCall(p.spec.Tools, r.Tool, r.Decl) }

// isCommandCall: decl (the caller's declaration, may be nil) says the tool runs commands, or the
// table judges it one (its declaration, else its name).
func isCommandCall(tools toolargs.Table, tool string, decl *toolargs.Tool) bool {
	return (decl != nil && decl.Command) || tools.IsCommand(tool)
}

// IsWriteTool reports whether a tool that is not massgen's own may modify files (see
// toolargs.IsWriteTool); massgen's tools say so in their table.
func IsWriteTool(tool string) bool { return toolargs.IsWriteTool(tool) }

// errNoPath is returned (wrapped) for file-related tools where no path could be found.
var errNoPath = toolargs.ErrNoPath

// ExtractPaths classifies a call to a tool that is not massgen's own (an MCP server's, or a
// native tool of another runtime) and returns every path argument with what the call does to
// it, as a Policy given tools (its Spec.Tools: filesystem.Table(), whose names and arguments the
// reference MCP filesystem server shares) does. An error means the call cannot be judged and
// must be denied (fail closed).
func ExtractPaths(tools toolargs.Table, tool string, args map[string]any) ([]PathAccess, error) {
	ex, err := extractWith(nil, tools, tool, args, false)
	if err != nil {
		return nil, err
	}
	return ex.paths, nil
}

// extraction is a classified call; commands carry their analysis. declared counts the leading
// paths that are the tool's own arguments (the rest come from the command's words).
type extraction struct {
	paths    []PathAccess
	declared int
	command  string
	cmd      *shellcmd.Analysis
}

// extractWith classifies a call: by decl when given (the caller's table entry), else by table,
// the reference MCP filesystem server's tools and heuristics. strict: commands run without the
// kernel sandbox (see cmdAnalysis).
func extractWith(decl *toolargs.Tool, table toolargs.Table, tool string, args map[string]any, strict bool) (*extraction, error) {
	var c *toolargs.Call
	var err error
	if decl != nil {
		c, err = toolargs.ClassifyDeclared(*decl, tool, args)
	} else {
		c, err = table.Classify(tool, args)
	}
	if err != nil {
		return nil, err
	}
	ex := &extraction{paths: c.Paths, declared: len(c.Paths)}
	if c.HasCommand {
		a, err := shellcmd.Analyze(c.Command, c.WorkDir, strict)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		ex.command = c.Command
		ex.cmd = a
		ex.paths = append(ex.paths, a.Paths...)
	}
	return ex, nil
}

// isNoPath reports a file-looking tool without a path argument.
func isNoPath(err error) bool { return errors.Is(err, errNoPath) }
