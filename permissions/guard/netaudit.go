package guard

import (
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/permissions/audit"
)

// NetworkAuditTool is the tool name of the audit lines of the command network's proxy.
const NetworkAuditTool = "network"

// AuditNetwork records in the audit log a connection that the command network's proxy allowed
// or refused for a command of tool (execute_command, a custom tool): Paths holds host:port,
// Rule the allowed_domains entry that allowed it ("allowed_domains: pypi.org") or
// "command_network" for a refusal, Reason how the command asked (kind: http, connect, socks5)
// and why it was refused.
func (g *Guard) AuditNetwork(tool, kind, target string, allowed bool, entry, reason string) {
	if g.o.Audit == nil {
		return
	}
	e := audit.Entry{Time: time.Now().UTC(), Agent: g.spec.Agent, Role: roleName(g.spec.Role), Tool: NetworkAuditTool,
		Paths: []string{target}, Decision: "deny", Rule: "command_network", Reason: tool + " (" + kind + "): " + reason}
	if allowed {
		e.Decision, e.Rule = "allow", "allowed_domains: "+entry
		e.Reason = tool + " (" + kind + ")"
		if reason != "" {
			e.Reason += ": allowed, then failed: " + reason
		}
	}
	if err := g.o.Audit.Write(e); err != nil {
		g.log.Warn("audit log write failed", zap.Error(err))
	}
}
