package cmd

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

// TestConfigShorthandEverywhere: every command that reads a config takes -c as --config; the
// built binary accepts it on each (none says "unknown shorthand flag").
func TestConfigShorthandEverywhere(t *testing.T) {
	bin := testbin.For(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("agents:\n  - id: a1\n    backend: {type: scripted, cwd: ws, script: [{text: hi}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"diff", "-c", "c.yaml"},
		{"undo", "-c", "c.yaml"},
		{"sessions", "-c", "c.yaml"},
		{"sessions", "list", "-c", "c.yaml"},
		{"sessions", "show", "-c", "c.yaml"},
		{"sessions", "prune", "-c", "c.yaml", "--older-than", "7d"},
		{"doctor", "-c", "c.yaml"},
		{"tools", "list", "-c", "c.yaml", "--agent", "a1"},
		{"permissions", "check", "-c", "c.yaml", "--agent", "a1", "--read", "c.yaml"},
		{"sandbox", "run", "-c", "c.yaml", "--agent", "a1", "--", "true"},
	} {
		r := runBinary(t, bin, dir, nil, args...)
		if strings.Contains(r.stderr, "unknown shorthand") || strings.Contains(r.stderr, "unknown flag") || r.code == 2 {
			t.Errorf("massgen %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	// Every command with --config has -c, so a new one cannot forget it.
	root := NewRootCmd(newTestEnv(t, "").Factory())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
			if f := fs.Lookup("config"); f != nil && f.Shorthand != "c" {
				t.Errorf("%s: --config has no -c", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// TestFailedSessionLookupCreatesNothing: --session with an id that does not exist (or is not an
// id) and --continue with nothing to continue fail with exit 2 and leave no sessions folder.
func TestFailedSessionLookupCreatesNothing(t *testing.T) {
	bin := testbin.For(t)
	for _, args := range [][]string{
		{"--session", "bogus", "hello there"},
		{"--session", "session_20250101_000000", "hello there"},
		{"--continue", "hello there"},
		{"-c", "@examples/demo/two_agents_deliver", "--session", "bogus", "hello there"},
		{"-c", "@examples/demo/two_agents_deliver", "--session", "session_20250101_000000", "hello there"},
		{"-c", "@examples/demo/two_agents_deliver", "--continue", "hello there"},
	} {
		dir := t.TempDir()
		r := runBinary(t, bin, dir, nil, args...)
		if r.code != 2 {
			t.Errorf("massgen %s: exit %d, want 2\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, ".massgen", "sessions")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("massgen %s left .massgen/sessions (%v)", strings.Join(args, " "), err)
		}
		if args[0] != "-c" {
			if _, err := os.Stat(filepath.Join(dir, ".massgen")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("massgen %s left .massgen/ (%v)", strings.Join(args, " "), err)
			}
		}
	}
}

// TestConfigsListLocalServers: a built-in whose agents talk to a model server on this machine is
// "ready" only while something listens there; otherwise "needs local server", naming it.
func TestConfigsListLocalServers(t *testing.T) {
	bin := testbin.For(t)
	dir := t.TempDir()
	const name = "@examples/providers/local/lmstudio" // LM Studio: localhost:1234, no key
	entry := func() string {
		r := runBinary(t, bin, dir, nil, "configs", "list")
		if r.code != 0 {
			t.Fatalf("configs list: exit %d\n%s", r.code, r.stderr)
		}
		_, rest, ok := strings.Cut(r.stdout, name+"  (")
		if !ok {
			t.Fatalf("configs list has no %s:\n%s", name, r.stdout)
		}
		e, _, _ := strings.Cut(rest, "\n\n")
		return e
	}
	ln, err := net.Listen("tcp", "127.0.0.1:1234")
	if err != nil {
		t.Skipf("port 1234 is in use here, so whether LM Studio runs cannot be controlled: %v", err)
	}
	if e := entry(); !strings.HasPrefix(e, "ready)") {
		t.Errorf("with a server on port 1234: %s", e)
	}
	ln.Close()
	if e := entry(); !strings.HasPrefix(e, "needs local server)") || !strings.Contains(e, "no server at localhost:1234") {
		t.Errorf("with no server on port 1234: %s", e)
	}
}

// TestDoctorFindingsTruthful: with agents' keys missing, doctor fails them and its Config findings
// line does not say "ok" beside them.
func TestDoctorFindingsTruthful(t *testing.T) {
	bin := testbin.For(t)
	r := runBinary(t, bin, t.TempDir(), []string{"OPENAI_API_KEY=", "GEMINI_API_KEY=", "GOOGLE_API_KEY=", "XAI_API_KEY="},
		"doctor", "-c", "@examples/basic/multi/three_agents_default")
	_, findings, _ := strings.Cut(r.stdout, "Config findings\n")
	findings, _, _ = strings.Cut(findings, "\n\n")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL") || strings.Contains(findings, "ok ") || !strings.Contains(findings, "the 3 problems above") {
		t.Errorf("doctor: exit %d; Config findings:\n%s\nall:\n%s", r.code, findings, r.stdout)
	}
}
