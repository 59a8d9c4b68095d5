package doctorcmd

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/sandbox"
)

// sandboxChecks says which command sandboxes work here and why the others do not, and which one
// the configured mode (command_sandbox, "" = auto) would use: the one kept by a run. All it
// knows comes from the sandbox package (Effective, LandlockABI, BubblewrapPath).
func sandboxChecks(configured sandbox.Mode) (modes []check, chosen check) {
	for _, m := range sandbox.Mode("").Values() { // most confining first
		if m == sandbox.ModeAuto {
			continue // the chosen one, below
		}
		c := check{Name: string(m), Status: statusOK}
		_, err := sandbox.Effective(m)
		switch {
		case err != nil:
			c.Status, c.Detail = statusUnavailable, err.Error()
		case m == sandbox.ModeBubblewrap:
			c.Detail = sandbox.BubblewrapPath()
		case m == sandbox.ModeLandlock:
			c.Detail = fmt.Sprintf("Landlock ABI %d", sandbox.LandlockABI())
		case m == sandbox.ModeNone:
			c.Detail = "commands run unconfined; only used when the config says command_sandbox: none"
		}
		modes = append(modes, c)
	}
	name := configured
	if name == "" {
		name = sandbox.ModeAuto
	}
	chosen = check{Name: "command_sandbox: " + string(name), Status: statusOK}
	if eff, err := sandbox.Effective(configured); err != nil {
		chosen.Status, chosen.Detail = statusFail, err.Error()
	} else {
		chosen.Detail = "commands run under " + string(eff)
	}
	return modes, chosen
}

// networkChecks says, per agent, the network its commands get (command_network) and how this
// machine enforces it (sandbox.PlanNetwork, what a run uses): ok when enforced, warn when
// the network is open (asked or not enforceable); without a config, the default.
func networkChecks(cfg *configs.Config) []check {
	if cfg == nil {
		return []check{networkCheck("default", configs.CommandNetwork{Mode: sandbox.NetworkNone}, sandbox.PlanNetwork("", ""))}
	}
	var out []check
	for _, a := range cfg.Agents {
		n := cfg.CommandNetworkOf(a.ID)
		out = append(out, networkCheck(a.ID, n, sandbox.PlanNetwork(cfg.CommandSandbox, n.Mode)))
	}
	return out
}

func networkCheck(who string, n configs.CommandNetwork, p sandbox.NetworkPlan) check {
	c := check{Name: who + ": " + string(n.Mode), Status: statusOK, Detail: p.How}
	if n.Mode == sandbox.NetworkAllowlist {
		c.Name += " (" + strings.Join(n.AllowedDomains, ", ") + ")"
	}
	switch {
	case p.Warning != "":
		c.Status, c.Detail = statusWarn, p.Warning
	case p.Mode == "":
		c.Status = statusWarn // commands are refused: the sandbox section says why
	case p.Mode == sandbox.NetworkOpen:
		c.Status = statusWarn
	}
	return c
}
