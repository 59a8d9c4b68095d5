package configs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/internal/sandbox/netproxy"
	"github.com/massgen-go/massgen/internal/vocab"
)

// CommandNetwork is the network a command an agent runs may reach (`command_network:`, per
// agent and under orchestrator for every agent): mode none (nothing: the default), allowlist
// (the hosts of AllowedDomains, through massgen's proxy) or open (any host). docs/tools.md
// says how each system enforces it. MassGen 0.1.96's srt keys map onto it (mapSRT).
type CommandNetwork struct {
	Mode           vocab.NetworkMode `yaml:"mode,omitempty" json:"mode,omitempty"`
	AllowedDomains []string          `yaml:"allowed_domains,omitempty" json:"allowed_domains,omitempty"`
}

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
		out.Mode = vocab.NetworkNone
		if len(out.AllowedDomains) > 0 {
			out.Mode = vocab.NetworkAllowlist
		}
	}
	return out
}

// srtNetwork is the command network MassGen's srt execution mode gives an agent: none, or an
// allowlist of command_line_srt_network_allowed_domains; ok is false when the backend does not
// run commands under srt.
func srtNetwork(b Backend) (CommandNetwork, bool) {
	if mode, _ := b.Extra["command_line_execution_mode"].(string); strings.TrimSpace(mode) != "srt" {
		return CommandNetwork{}, false
	}
	var domains []string
	if list, ok := b.Extra["command_line_srt_network_allowed_domains"].([]any); ok {
		for _, d := range list {
			if s, ok := d.(string); ok && strings.TrimSpace(s) != "" {
				domains = append(domains, strings.TrimSpace(s))
			}
		}
	}
	if len(domains) == 0 {
		return CommandNetwork{Mode: vocab.NetworkNone}, true
	}
	return CommandNetwork{Mode: vocab.NetworkAllowlist, AllowedDomains: domains}, true
}

// mapSRT gives each agent whose backend runs commands under MassGen's srt (and that sets no
// command_network itself) the command network srt would, and says what srt means here.
func (c *Config) mapSRT(d *document, warn func(key string, line int, msg string)) {
	for i := range c.Agents {
		a := &c.Agents[i]
		n, ok := srtNetwork(a.Backend)
		if !ok {
			continue
		}
		key := fmt.Sprintf("agents[%d].backend.command_line_execution_mode", i)
		what := string(vocab.NetworkNone)
		if n.Mode == vocab.NetworkAllowlist {
			what = "allowlist " + strings.Join(n.AllowedDomains, ", ")
		}
		if a.CommandNetwork == nil {
			a.CommandNetwork = &n
		} else {
			what = "not mapped: the agent's command_network is set and wins"
		}
		warn(key, d.lineOf(key), fmt.Sprintf("%s: srt: commands run in massgen's own kernel sandbox (bubblewrap, namespaces or Landlock; Seatbelt on macOS), which allows reads only of the agent's paths and system folders (as srt's strict read mode) and writes only where the agent may write; srt's network policy becomes command_network (%s), enforced by that sandbox: no network, or the listed hosts through massgen's proxy (docs/tools.md, Network)", key, what))
	}
}

// validateNetwork checks a command_network section: its mode, and each allowed_domains entry
// as the proxy reads it (a host, *.domain or an address, each with an optional :port).
func validateNetwork(path string, n *CommandNetwork, add func(path, format string, args ...any)) {
	if n == nil {
		return
	}
	if len(n.AllowedDomains) > 0 && (n.Mode == vocab.NetworkNone || n.Mode == vocab.NetworkOpen) {
		add(path+".allowed_domains", "has no effect with mode %s: set mode: allowlist to let commands reach these hosts only", n.Mode)
	}
	for j, dom := range n.AllowedDomains {
		if _, err := netproxy.ParseEntry(dom); err != nil {
			add(fmt.Sprintf("%s.allowed_domains[%d]", path, j), "%v", err)
		}
	}
}
