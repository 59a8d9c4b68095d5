package configs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/filesystem/sandbox/netproxy"
)

// CommandNetwork is the network a command an agent runs may reach (`command_network:`, per
// agent and under orchestrator for every agent): mode none (nothing: the default), allowlist
// (the hosts of AllowedDomains, through massgen's proxy) or open (any host). docs/tools.md
// says how each system enforces it.
type CommandNetwork struct {
	Mode           string   `yaml:"mode,omitempty" json:"mode,omitempty"`
	AllowedDomains []string `yaml:"allowed_domains,omitempty" json:"allowed_domains,omitempty"`
}

// Command network modes.
const (
	NetworkNone      = "none"
	NetworkAllowlist = "allowlist"
	NetworkOpen      = "open"
)

var networkModes = []string{NetworkNone, NetworkAllowlist, NetworkOpen}

// CommandNetworkOf is the network of agent id's commands: its own command_network field by
// field over orchestrator.command_network. A mode given nowhere is none, or allowlist when
// allowed_domains are given.
func (c *Config) CommandNetworkOf(id string) CommandNetwork {
	var out CommandNetwork
	if n := c.Orchestrator.CommandNetwork; n != nil {
		out = CommandNetwork{Mode: n.Mode, AllowedDomains: slices.Clone(n.AllowedDomains)}
	}
	if a, ok := c.AgentByID(id); ok && a.CommandNetwork != nil {
		if a.CommandNetwork.Mode != "" {
			out.Mode = a.CommandNetwork.Mode
		}
		if a.CommandNetwork.AllowedDomains != nil {
			out.AllowedDomains = slices.Clone(a.CommandNetwork.AllowedDomains)
		}
	}
	if out.Mode == "" {
		out.Mode = NetworkNone
		if len(out.AllowedDomains) > 0 {
			out.Mode = NetworkAllowlist
		}
	}
	return out
}

// validateNetwork checks a command_network section: its mode, and each allowed_domains entry
// as the proxy reads it (a host, *.domain or an address, each with an optional :port).
func validateNetwork(path string, n *CommandNetwork, add func(path, format string, args ...any)) {
	if n == nil {
		return
	}
	if n.Mode != "" && !slices.Contains(networkModes, n.Mode) {
		add(path+".mode", "unknown mode %q (known: %s)", n.Mode, strings.Join(networkModes, ", "))
	}
	if len(n.AllowedDomains) > 0 && (n.Mode == NetworkNone || n.Mode == NetworkOpen) {
		add(path+".allowed_domains", "has no effect with mode %s: set mode: allowlist to let commands reach these hosts only", n.Mode)
	}
	for j, dom := range n.AllowedDomains {
		if _, err := netproxy.ParseEntry(dom); err != nil {
			add(fmt.Sprintf("%s.allowed_domains[%d]", path, j), "%v", err)
		}
	}
}
