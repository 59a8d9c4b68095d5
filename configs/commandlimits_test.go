package configs

import (
	"strings"
	"testing"
)

// TestCommandLimits: command_limits at the top level and per agent, merged field by field;
// bad values are refused with their file and line.
func TestCommandLimits(t *testing.T) {
	text := "command_limits:\n  memory_mb: 2048\n  processes: 256\nagents:\n" +
		"  - id: a\n    backend: {type: openai}\n    command_limits: {processes: 64, file_size_mb: 10}\n" +
		"  - id: b\n    backend: {type: openai}\n"
	c, _, err := load(t, t.TempDir(), text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.CommandLimitsOf("a"), (CommandLimits{MemoryMB: 2048, Processes: 64, FileSizeMB: 10}); got != want {
		t.Errorf("a: %+v, want %+v", got, want)
	}
	if got, want := c.CommandLimitsOf("b"), (CommandLimits{MemoryMB: 2048, Processes: 256}); got != want {
		t.Errorf("b: %+v, want %+v", got, want)
	}
	for _, tc := range []struct{ text, want string }{
		{"agents:\n  - id: a\n    backend: {type: openai}\n    command_limits: {memory_mb: -1}\n",
			"config.yaml:4: agents[0].command_limits.memory_mb: must be positive (got -1; 0 or absent: the default)"},
		{"agents:\n  - id: a\n    backend: {type: openai}\ncommand_limits:\n  cpu_seconds: 5\n  processes: 99999999\n",
			"config.yaml:6: command_limits.processes: 99999999 is too large (at most 4194304)"},
		{"agents:\n  - id: a\n    backend: {type: openai}\ncommand_limits:\n  memory_mb: 2g\n", "config.yaml:5: "},
	} {
		_, _, err := load(t, t.TempDir(), tc.text, nil)
		if err == nil {
			t.Errorf("%q: no error", tc.text)
			continue
		}
		if ps := problems(t, err); len(ps) != 1 || !strings.HasPrefix(ps[0].String(), tc.want) {
			t.Errorf("%q: problems %v, want %q", tc.text, ps, tc.want)
		}
	}
}
