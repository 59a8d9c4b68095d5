package configs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/vocab"
)

// TestCommandNetwork: command_network under orchestrator (every agent) and per agent, merged
// field by field; none by default, allowlist when only domains are given; bad modes and entries
// are refused with their file and line.
func TestCommandNetwork(t *testing.T) {
	text := "orchestrator:\n  command_network:\n    mode: allowlist\n    allowed_domains: [pypi.org, \"*.pythonhosted.org\"]\nagents:\n" +
		"  - id: a\n    backend: {type: openai}\n" +
		"  - id: b\n    backend: {type: openai}\n    command_network: {allowed_domains: [registry.npmjs.org:443, \"127.0.0.1:8000\"]}\n" +
		"  - id: c\n    backend: {type: openai}\n    command_network: {mode: open}\n" +
		"  - id: d\n    backend: {type: openai}\n    command_network: {mode: none}\n"
	c, _, err := load(t, t.TempDir(), text, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   string
		want CommandNetwork
	}{
		{"a", CommandNetwork{Mode: vocab.NetworkAllowlist, AllowedDomains: []string{"pypi.org", "*.pythonhosted.org"}}},
		{"b", CommandNetwork{Mode: vocab.NetworkAllowlist, AllowedDomains: []string{"registry.npmjs.org:443", "127.0.0.1:8000"}}},
		{"c", CommandNetwork{Mode: vocab.NetworkOpen, AllowedDomains: []string{"pypi.org", "*.pythonhosted.org"}}},
		{"d", CommandNetwork{Mode: vocab.NetworkNone, AllowedDomains: []string{"pypi.org", "*.pythonhosted.org"}}},
	} {
		if got := c.CommandNetworkOf(tt.id); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.id, got, tt.want)
		}
	}
	c, _, err = load(t, t.TempDir(), "agents:\n  - id: a\n    backend: {type: openai}\n  - id: b\n    backend: {type: openai}\n    command_network: {allowed_domains: [pypi.org]}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CommandNetworkOf("a"); !reflect.DeepEqual(got, CommandNetwork{Mode: vocab.NetworkNone}) {
		t.Errorf("default: %+v", got)
	}
	if got := c.CommandNetworkOf("b"); !reflect.DeepEqual(got, CommandNetwork{Mode: vocab.NetworkAllowlist, AllowedDomains: []string{"pypi.org"}}) {
		t.Errorf("domains alone: %+v", got)
	}

	for _, tc := range []struct {
		text string
		want []string
	}{
		{"agents:\n  - id: a\n    backend: {type: openai}\n    command_network:\n      mode: closed\n",
			[]string{`config.yaml:5: agents[0].command_network.mode: unknown mode "closed" (known: none, allowlist, open)`}},
		{"agents:\n  - id: a\n    backend: {type: openai}\n    command_network:\n      mode: allowlist\n      allowed_domains:\n        - pypi.org\n        - https://files.pythonhosted.org/simple\n        - \"*\"\n        - example.com:99999\n",
			[]string{`config.yaml:8: agents[0].command_network.allowed_domains[1]: "https://files.pythonhosted.org/simple" is not a host name: write the host alone`,
				`config.yaml:9: agents[0].command_network.allowed_domains[2]: "*" is not a host name`,
				`config.yaml:10: agents[0].command_network.allowed_domains[3]: "example.com:99999": the port must be a number from 1 to 65535`}},
		{"agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  command_network:\n    mode: none\n    allowed_domains: [pypi.org]\n",
			[]string{`config.yaml:7: orchestrator.command_network.allowed_domains: has no effect with mode none: set mode: allowlist`}},
	} {
		_, _, err := load(t, t.TempDir(), tc.text, nil)
		if err == nil {
			t.Errorf("%q: no error", tc.text)
			continue
		}
		ps := problems(t, err)
		if len(ps) != len(tc.want) {
			t.Errorf("%q: problems %v, want %q", tc.text, ps, tc.want)
			continue
		}
		for i, p := range ps {
			if !strings.HasPrefix(p.String(), tc.want[i]) {
				t.Errorf("problem %q, want %q", p.String(), tc.want[i])
			}
		}
	}
}

// MassGen 0.1.96's srt keys give an agent the policy command_network would: srt alone is no
// network, srt with command_line_srt_network_allowed_domains is an allowlist of them, read by the
// same proxy.
func TestSRTKeysSamePolicy(t *testing.T) {
	tests := []struct{ srt, network string }{
		{"      command_line_execution_mode: srt\n", "    command_network: {mode: none}\n"},
		{"      command_line_execution_mode: srt\n      command_line_srt_network_allowed_domains: [pypi.org, \"*.pythonhosted.org\"]\n",
			"    command_network: {mode: allowlist, allowed_domains: [pypi.org, \"*.pythonhosted.org\"]}\n"},
	}
	for _, tt := range tests {
		a, _ := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n    backend:\n      type: openai\n      model: m\n"+tt.srt, nil)
		b, _ := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n"+tt.network+"    backend:\n      type: openai\n      model: m\n", nil)
		if got, want := a.CommandNetworkOf("a"), b.CommandNetworkOf("a"); !reflect.DeepEqual(got, want) {
			t.Errorf("srt %q: %+v, command_network gives %+v", tt.srt, got, want)
		}
	}
	// Over an orchestrator-wide command_network, srt decides for its agent as the agent's own
	// command_network would.
	c, _ := mustLoad(t, t.TempDir(), "orchestrator:\n  command_network: {mode: open}\nagents:\n  - id: a\n    backend:\n      type: openai\n      model: m\n      command_line_execution_mode: srt\n  - id: b\n    backend: {type: openai, model: m}\n", nil)
	if got := c.CommandNetworkOf("a"); got.Mode != vocab.NetworkNone {
		t.Errorf("srt under an open orchestrator: %+v", got)
	}
	if got := c.CommandNetworkOf("b"); got.Mode != vocab.NetworkOpen {
		t.Errorf("the other agent: %+v", got)
	}
}
