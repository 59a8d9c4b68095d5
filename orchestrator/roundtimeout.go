package orchestrator

import (
	"time"

	"github.com/massgen-go/massgen/configs"
)

// executionLimit is how long an agent's coordination execution number round (0: its first) may
// run: what is left of its agent timeout (limit minus used, when limit > 0), and at most its
// round's timeout (MassGen's timeout_settings round timeouts plus their grace; see
// configs.Config.RoundTimeout). 0 means no limit. byRound names the round's timeout when that
// one is the tighter, for the reason the agent is stopped with.
func executionLimit(cfg *configs.Config, limit, used time.Duration, round int) (d time.Duration, byRound string) {
	if limit > 0 {
		d = max(limit-used, time.Nanosecond)
	}
	if rd, what, ok := cfg.RoundTimeout(round); ok && (d == 0 || rd < d) {
		return rd, what
	}
	return d, ""
}
