package cmd

import (
	"strings"
	"testing"
)

// A run and every command that opens a log end it with "run end", so `logs --follow` started
// after them returns at once.
func TestLogsFollowStopsAtRunEnd(t *testing.T) {
	tests := []struct {
		name string
		args []string
		last string
	}{
		{"a run", []string{"--display", "silent", "task"}, "INFO  run end exit_code=0"},
		{"a failed run", []string{"--config", "@examples/demo/two_agents_deliver", "--display", "silent", "task"}, "INFO  run end exit_code=1"},
		{"tools call", []string{"tools", "call", "--agent", "a", "list_directory", `{"path":"."}`}, "INFO  run end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, "")
			cfg := strings.Replace(scriptedConfig, "type: scripted", "type: scripted\n    cwd: ws", 1)
			e.Write(t, ".massgen/config.yaml", cfg)
			e.exec(tt.args...)
			e.Out.Reset()
			if code := e.exec("logs", "--follow"); code != 0 {
				t.Fatalf("logs --follow: exit %d\n%s", code, e.ErrOut)
			}
			lines := strings.Split(strings.TrimSpace(e.Out.String()), "\n")
			if !strings.HasSuffix(lines[len(lines)-1], tt.last) {
				t.Errorf("last line %q, want suffix %q", lines[len(lines)-1], tt.last)
			}
		})
	}
}
