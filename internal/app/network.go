package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/sandbox"
)

// commandNetworkLines are what a run says at its start about the network of the agents'
// commands (command_network), one line per mode in use, then a warning line for each mode this
// machine cannot enforce (sandbox.PlanNetwork, as the commands will get it). Nothing when no
// agent runs commands.
func commandNetworkLines(cfg *configs.Config) []string {
	if !cfg.HasWorkspaces() {
		return nil
	}
	type group struct {
		key, text string
		agents    []string
	}
	var groups []*group
	var warnings []string
	for _, a := range cfg.Agents {
		n := cfg.CommandNetworkOf(a.ID)
		plan := sandbox.PlanNetwork(cfg.CommandSandbox, n.Mode)
		var text string
		switch {
		case plan.Mode == "":
			continue // commands are refused: said where the sandbox is
		case n.Mode == sandbox.NetworkAllowlist && plan.Mode == sandbox.NetworkAllowlist:
			text = "allowlist (" + strings.Join(n.AllowedDomains, ", ") + ", through massgen's proxy)"
		case n.Mode == sandbox.NetworkOpen:
			text = "open: commands reach any host (command_network: open)"
		case plan.Mode == sandbox.NetworkOpen:
			text = string(n.Mode) + ", not enforced: commands reach any host"
		default:
			text = "off (command_network: none)"
		}
		if plan.Warning != "" && !slices.Contains(warnings, plan.Warning) {
			warnings = append(warnings, plan.Warning)
		}
		key := text
		var g *group
		for _, x := range groups {
			if x.key == key {
				g = x
			}
		}
		if g == nil {
			g = &group{key: key, text: text}
			groups = append(groups, g)
		}
		g.agents = append(g.agents, a.ID)
	}
	var out []string
	for _, g := range groups {
		out = append(out, fmt.Sprintf("Command network for %s: %s.", strings.Join(g.agents, ", "), g.text))
	}
	for _, w := range warnings {
		out = append(out, "Warning: "+w+".")
	}
	return out
}
