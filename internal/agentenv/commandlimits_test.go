package agentenv

import (
	"encoding/json"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/lane"
)

// TestCommandLimitsReachCommands: the config's command_limits (top level, then the agent's
// own) bound the agent's commands.
func TestCommandLimitsReachCommands(t *testing.T) {
	lane.Long(t)
	if runtime.GOOS != "linux" {
		t.Skip("command limits are enforced on Linux")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	_, cfg := newFixture(t, `command_limits: {cpu_seconds: 30, file_size_mb: 1}
agents:
  - id: alpha
    backend: {type: openai, model: m, cwd: ws}
    command_limits: {cpu_seconds: 1}
`, "")
	_, a := open(t, Options{Config: cfg}, "alpha")
	ts, err := a.Toolset(Coordination)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ command, want string }{
		{`python3 -c "while True: pass"`, "killed: CPU time limit 1 s"},
		{"head -c 3000000 /dev/zero > big", "file size limit 1 MiB"},
	} {
		args, _ := json.Marshal(map[string]string{"command": c.command})
		res := ts.Call(t.Context(), "execute_command", args)
		if !res.IsError || !strings.Contains(res.Message, c.want) {
			t.Errorf("%s: %v %q (%s)", c.command, res.IsError, res.Message, res.Content)
		}
	}
}
