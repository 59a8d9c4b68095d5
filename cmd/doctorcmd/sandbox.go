package doctorcmd

import (
	"fmt"

	"github.com/massgen-go/massgen/internal/sandbox"
)

// sandboxModeNames are the command_sandbox modes, most confining first; a mode this build does
// not know (sandbox.ValidMode) is left out.
var sandboxModeNames = []string{"bubblewrap", "namespaces", "landlock", "none"}

// sandboxChecks says which command sandboxes work here and why the others do not, and which one
// the configured mode (command_sandbox, "" = auto) would use: the one kept by a run. All it
// knows comes from the sandbox package (Effective, LandlockABI, BubblewrapPath).
func sandboxChecks(configured string) (modes []check, chosen check) {
	for _, m := range sandboxModeNames {
		if sandbox.ValidMode(m) != nil {
			continue
		}
		c := check{Name: m, Status: statusOK}
		_, err := sandbox.Effective(m)
		switch {
		case err != nil:
			c.Status, c.Detail = statusUnavailable, err.Error()
		case m == "bubblewrap":
			c.Detail = sandbox.BubblewrapPath()
		case m == "landlock":
			c.Detail = fmt.Sprintf("Landlock ABI %d", sandbox.LandlockABI())
		case m == "none":
			c.Detail = "commands run unconfined; only used when the config says command_sandbox: none"
		}
		modes = append(modes, c)
	}
	name := configured
	if name == "" {
		name = "auto"
	}
	chosen = check{Name: "command_sandbox: " + name, Status: statusOK}
	if eff, err := sandbox.Effective(configured); err != nil {
		chosen.Status, chosen.Detail = statusFail, err.Error()
	} else {
		chosen.Detail = "commands run under " + eff
	}
	return modes, chosen
}
