package app

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/sandbox"
)

// A run says at its start what network the agents' commands get, open included, and warns when
// this machine cannot enforce what the config asks.
func TestCommandNetworkAtRunStart(t *testing.T) {
	agent := func(id string, n *configs.CommandNetwork) configs.Agent {
		return configs.Agent{ID: id, Backend: configs.Backend{Type: "openai", CWD: "ws_" + id}, CommandNetwork: n}
	}
	enforced := sandbox.ModeAuto
	if _, err := sandbox.Effective(""); err != nil {
		enforced = ""
	}
	tests := []struct {
		name string
		cfg  configs.Config
		want []string
	}{
		{"default", configs.Config{CommandSandbox: enforced, Agents: []configs.Agent{agent("a", nil), agent("b", nil)}},
			[]string{"Command network for a, b: off (command_network: none)."}},
		{"mixed", configs.Config{CommandSandbox: enforced, Agents: []configs.Agent{
			agent("a", &configs.CommandNetwork{Mode: "allowlist", AllowedDomains: []string{"pypi.org", "*.pythonhosted.org"}}),
			agent("b", &configs.CommandNetwork{Mode: "open"}), agent("c", nil)}},
			[]string{"Command network for a: allowlist (pypi.org, *.pythonhosted.org, through massgen's proxy).",
				"Command network for b: open: commands reach any host (command_network: open).",
				"Command network for c: off (command_network: none)."}},
		{"no sandbox", configs.Config{CommandSandbox: "none", Agents: []configs.Agent{agent("a", nil)}},
			[]string{"Command network for a: none, not enforced: commands reach any host.",
				"Warning: command_network mode none is not enforced: command_sandbox: none runs commands without a sandbox, so they reach any host."}},
		{"no workspace, no command", configs.Config{Agents: []configs.Agent{{ID: "a", Backend: configs.Backend{Type: "openai"}}}}, nil},
	}
	for _, tt := range tests {
		if enforced == "" && tt.name != "no sandbox" && tt.name != "no workspace, no command" {
			continue // commands are refused here: nothing to say about their network
		}
		if got := commandNetworkLines(&tt.cfg); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}

	e := newTestEnv(t, "")
	e.Write(t, "c.yaml", workspaceConfig+"  command_network: {mode: open}\ncommand_sandbox: none\n")
	opts := e.runOpts(&recorder{})
	opts.ConfigName, opts.Question = "c.yaml", "x"
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.ErrOut.String(), "Command network for a1, a2: open: commands reach any host (command_network: open).") {
		t.Errorf("stderr at the start of a run:\n%s", e.ErrOut)
	}
}
