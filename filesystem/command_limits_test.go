//go:build linux

package filesystem

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/permissions"
)

// TestExecuteCommandLimits: a command that runs into the agent's limits fails, and its result
// says which limit (the tool's error and the result's "limit"); the next command runs.
func TestExecuteCommandLimits(t *testing.T) {
	lane.Long(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			for _, c := range []struct {
				lim                     sandbox.Limits
				command, limit, message string
			}{
				{sandbox.Limits{MemoryMB: 128}, `python3 -c "b = b'x' * (4 << 30)"`, "memory limit 128 MiB", "memory limit 128 MiB"},
				{sandbox.Limits{CPUSeconds: 1}, `python3 -c "while True: pass"`, "killed: CPU time limit 1 s", "killed: CPU time limit 1 s (exit status 152)"},
			} {
				e := newEnv(t, permissions.Coordination, withSandbox(mode), func(_ *permissions.Spec, o *ToolsetOptions) {
					o.CommandLimits = c.lim
				})
				m, res := e.call("execute_command", map[string]any{"command": c.command})
				if l, _ := m["limit"].(string); !res.IsError || !strings.Contains(res.Message, c.message) || !strings.Contains(l, c.limit) {
					t.Errorf("%s: error %v, message %q, limit %q", c.command, res.IsError, res.Message, m["limit"])
				}
				e.ok("execute_command", map[string]any{"command": "echo fine"})
			}
		})
	}
}
