package agentenv

import (
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// secureServers are the servers whose security: section lets them start; each refused one is
// reported through Warn, as a server that failed to start is.
func (e *Env) secureServers(agentID string, servers []configs.MCPServer) []configs.MCPServer {
	var out []configs.MCPServer
	for _, s := range servers {
		if refused := s.SecurityProblems(); len(refused) > 0 {
			err := fmt.Errorf("MCP server %q: %s: %s", s.Name, configs.SecurityRefusal, strings.Join(refused, "; "))
			e.log.Warn("mcp server refused", zap.String("agent", agentID), zap.Error(err))
			if e.o.Warn != nil {
				e.o.Warn(agentID, err)
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// commandRules are MassGen's command_line_blocked_commands and command_line_allowed_commands as
// deny rules on execute_command (permissions' "re:" rules): each blocked pattern denies the
// commands that run a matching program, and the allowed patterns together deny every command
// running a program none of them matches.
func commandRules(b configs.Backend) []string {
	var out []string
	for _, p := range b.CommandLineBlockedCommands {
		out = append(out, filesystem.ExecuteCommand+"(re:"+p+")")
	}
	if len(b.CommandLineAllowedCommands) > 0 {
		out = append(out, filesystem.ExecuteCommand+"(!re:"+strings.Join(b.CommandLineAllowedCommands, "|")+")")
	}
	return out
}

// hidden reports whether a tool is kept from the agent: named in its exclude_tools (by the name
// it is offered under, or, for an MCP server's tool, by the server's own name, as MassGen
// matches them), or left out by its server's allowed_tools or exclude_tools. server is "" for a
// built-in tool.
func (a *Agent) hidden(server, tool string) bool {
	b := a.cfg.Backend
	full := tool
	if server != "" {
		full = toolargs.MCPName(server, tool)
	}
	for _, x := range b.ExcludeTools {
		if x == full || x == tool {
			return true
		}
	}
	if server == "" {
		return false
	}
	for _, s := range b.MCPServers {
		if s.Name == server {
			return (s.AllowedTools != nil && !slices.Contains(s.AllowedTools, tool)) || slices.Contains(s.ExcludeTools, tool)
		}
	}
	return false
}

// splitConfigured finds the configured MCP server of an offered name mcp__<server>__<tool>
// (toolargs.SplitMCPName, as the Toolset resolves them).
func (a *Agent) splitConfigured(name string) (server, tool string, ok bool) {
	servers := make([]string, len(a.cfg.Backend.MCPServers))
	for i, s := range a.cfg.Backend.MCPServers {
		servers[i] = s.Name
	}
	return toolargs.SplitMCPName(name, servers)
}

// hiddenName is hidden for a name as offered.
func (a *Agent) hiddenName(name string) bool {
	if server, tool, ok := a.splitConfigured(name); ok {
		return a.hidden(server, tool)
	}
	return a.hidden("", name)
}
