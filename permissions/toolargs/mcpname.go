package toolargs

import "strings"

// mcpPrefix begins the name an MCP server's tool is offered under: mcp__<server>__<tool>.
const mcpPrefix = "mcp__"

// MCPName is the name a server's tool is offered under: mcp__<server>__<tool>.
func MCPName(server, tool string) string { return mcpPrefix + server + "__" + tool }

// IsMCPName reports whether name is in the MCP servers' namespace (mcp__...).
func IsMCPName(name string) bool { return strings.HasPrefix(name, mcpPrefix) }

// SplitMCPName finds the server (one of servers) and the tool of an offered name
// mcp__<server>__<tool>. The longest matching server name wins, so servers whose names
// contain "__" still resolve.
func SplitMCPName(name string, servers []string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, mcpPrefix)
	if !found {
		return "", "", false
	}
	for _, s := range servers {
		if t, cut := strings.CutPrefix(rest, s+"__"); cut && len(s) > len(server) {
			server, tool = s, t
		}
	}
	return server, tool, server != ""
}
