package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// binResult is what one run of the built binary printed and its exit code.
type binResult struct {
	stdout, stderr string
	code           int
}

// runBinary runs the built massgen in dir with HOME=dir and extra environment variables.
func runBinary(t *testing.T, bin, dir string, env []string, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config")), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("massgen %s: %v", strings.Join(args, " "), err)
	}
	return binResult{stdout: out.String(), stderr: errOut.String(), code: code}
}

// TestForgivingCommands: singular names work like the plural ones, and a mistyped subcommand at
// any level, a mistyped built-in config name and a mistyped --context access word each get exit 2
// and a "did you mean".
func TestForgivingCommands(t *testing.T) {
	bin := testbin.For(t)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout+stderr
	}{
		{"config list", []string{"config", "list"}, 0, "@examples/demo/two_agents_deliver"},
		{"session list", []string{"session", "list"}, 0, "No sessions"},
		{"tool list", []string{"tool", "list", "-c", "@examples/demo/two_agents_deliver", "--agent", "builder"}, 0, "write_file"},
		{"permission check", []string{"permission", "check", "-c", "@examples/demo/two_agents_deliver", "--agent", "builder", "--read", "x"}, 0, "allow"},
		{"log", []string{"log"}, 1, "no run log"},
		{"configs lst", []string{"configs", "lst"}, 2, `unknown command "lst" for "massgen configs"; did you mean "list"?`},
		{"config lst", []string{"config", "lst"}, 2, `unknown command "lst" for "massgen configs"; did you mean "list"?`},
		{"sessions lst", []string{"sessions", "lst"}, 2, `unknown command "lst" for "massgen sessions"; did you mean "list"?`},
		{"tools lst", []string{"tools", "lst"}, 2, `unknown command "lst" for "massgen tools"; did you mean "list"?`},
		{"permissions chek", []string{"permissions", "chek"}, 2, `unknown command "chek" for "massgen permissions"; did you mean "check"?`},
		{"trash lst", []string{"trash", "lst"}, 2, `unknown command "lst" for "massgen trash"; did you mean "list"?`},
		{"sandbox rn", []string{"sandbox", "rn"}, 2, `unknown command "rn" for "massgen sandbox"; did you mean "run"?`},
		{"mcp srve", []string{"mcp", "srve"}, 2, `unknown command "srve" for "massgen mcp"; did you mean "serve"?`},
		{"configs val (prefix)", []string{"configs", "val"}, 2, `did you mean "validate"?`},
		{"configs xyz", []string{"configs", "xyz"}, 2, `unknown command "xyz" for "massgen configs" (commands: list, show, validate`},
		{"confg list", []string{"confg", "list"}, 2, `unknown command "confg" for "massgen"; did you mean "config"?`},
		{"example typo", []string{"-c", "@examples/demo/two_agent_deliver", "--yes", "hello there"}, 2, "did you mean @examples/demo/two_agents_deliver?"},
		{"example base-name typo", []string{"configs", "show", "@examples/two_agents_delivr"}, 2, "did you mean @examples/demo/two_agents_deliver?"},
		{"context wrte", []string{"-c", "@examples/demo/two_agents_deliver", "--context", ".:wrte", "hello there"}, 2, `unknown access "wrte" (did you mean "write"?)`},
		{"context ro", []string{"-c", "@examples/demo/two_agents_deliver", "--context", ".:ro", "hello there"}, 2, `unknown access "ro" (did you mean "read"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := runBinary(t, bin, dir, nil, tt.args...)
			all := r.stdout + r.stderr
			if r.code != tt.code || !strings.Contains(all, tt.want) {
				t.Errorf("massgen %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", strings.Join(tt.args, " "), r.code, tt.code, tt.want, r.stdout, r.stderr)
			}
			if strings.Contains(all, "does not exist") || strings.Contains(all, "Usage:") && tt.code != 0 {
				t.Errorf("massgen %s printed help or a path check:\n%s", strings.Join(tt.args, " "), all)
			}
		})
	}
}
