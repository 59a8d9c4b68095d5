package mcpcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

func TestServeBadInvocations(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "massgen.yaml")
	if err := os.WriteFile(cfg, []byte("agents:\n  - id: agent_a\n    backend:\n      type: scripted\n      script:\n        - text: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown agent", []string{"serve", "--config", cfg, "--agent", "nobody"}, cmdutil.ExitUsage, `no agent "nobody" (agents: agent_a)`},
		{"missing config file", []string{"serve", "--config", filepath.Join(dir, "missing.yaml"), "--agent", "agent_a"}, cmdutil.ExitUsage, "missing.yaml"},
		{"no subcommand", nil, cmdutil.ExitUsage, "missing subcommand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			f := &cmdutil.Factory{
				IO:        &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
				Getwd:     func() (string, error) { return dir, nil },
				HomeDir:   func() (string, error) { return dir, nil },
				LookupEnv: func(string) (string, bool) { return "", false },
			}
			cmd := NewCmd(f)
			cmd.SetArgs(tt.args)
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			err := cmd.Execute()
			if cmdutil.CodeOf(err) != tt.code || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v (code %d), want code %d containing %q", err, cmdutil.CodeOf(err), tt.code, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout must stay clean (it is the protocol): %q", out.String())
			}
		})
	}
}
