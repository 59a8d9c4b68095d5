package configs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/vocab"
)

// ActionsForTest is filesystem.MassGenActions() for configs' own tests, which cannot import
// filesystem; TestBackendPermissionToolLists checks the two agree.
var ActionsForTest = map[string]string{"read_file": "@read", "write_file": "@write"}

// MassGen 0.1.97's backend.permissions rules and roles become massgen's rules; what has no
// massgen equivalent is said.
func TestMapBackendPermissions(t *testing.T) {
	off := false
	tests := []struct {
		name        string
		p           BackendPermissions
		allow, deny []string
		notMapped   []string // keys
	}{
		{name: "commands", p: BackendPermissions{Rules: BackendRules{Deny: []string{"command(git push --force*)"}, Allow: []string{"command(git status)", "command"}}},
			allow: []string{"@command(git status)", "@command(*)"}, deny: []string{"@command(git push --force*)"}},
		{name: "file actions", p: BackendPermissions{Rules: BackendRules{Deny: []string{"write_file(/etc/**)", "read_file(secrets/**)"}}},
			deny: []string{"@write(/etc/**)", "@read(secrets/**)"}},
		{name: "mcp and any", p: BackendPermissions{Rules: BackendRules{Allow: []string{"mcp(linear/*)"}, Deny: []string{"*(/secret/**)", "mcp"}}},
			allow: []string{"mcp__linear__*"}, deny: []string{"*(/secret/**)", "mcp__*"}},
		{name: "not mapped", p: BackendPermissions{Rules: BackendRules{Ask: []string{"read_url(*)"}, Deny: []string{"read_url(evil.com)", "frobnicate(x)", "bad rule ("}}, Role: "janitor"},
			notMapped: []string{"rules.deny[0]", "rules.deny[1]", "rules.deny[2]", "role"}},
		{name: "read-only role", p: BackendPermissions{Role: "read-only"},
			deny: []string{"@write", "@command"}},
		{name: "researcher role", p: BackendPermissions{Role: "researcher"},
			deny: []string{"@write", "@command"}},
		{name: "disabled", p: BackendPermissions{Enabled: &off, Role: "read-only", Rules: BackendRules{Deny: []string{"command(rm*)"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := MapBackendPermissions(&tt.p, ActionsForTest)
			var keys []string
			for _, n := range m.NotMapped {
				keys = append(keys, n.Key)
				if n.Why == "" {
					t.Errorf("%s: no reason", n.Key)
				}
			}
			if !reflect.DeepEqual(m.Allow, tt.allow) || !reflect.DeepEqual(m.Deny, tt.deny) || !reflect.DeepEqual(keys, tt.notMapped) {
				t.Errorf("allow %q\ndeny %q\nnot mapped %q\nwant %q %q %q", m.Allow, m.Deny, keys, tt.allow, tt.deny, tt.notMapped)
			}
		})
	}
}

// Without the file actions (LoadOptions.Actions) a file action is unknown, said as any other.
func TestMapBackendPermissionsWithoutActions(t *testing.T) {
	m := MapBackendPermissions(&BackendPermissions{Rules: BackendRules{Deny: []string{"write_file(x)", "command(rm*)"}}}, nil)
	if len(m.Deny) != 1 || m.Deny[0] != "@command(rm*)" || len(m.NotMapped) != 1 ||
		m.NotMapped[0].Why != `"write_file(x)": unknown action write_file (MassGen's are command, read_url, mcp and *)` {
		t.Errorf("%+v", m)
	}
}

// Load adds the mapped rules to the agent's own permissions section (after its own rules),
// warns about the rest, and configs show --resolved shows the result.
func TestBackendPermissionsInConfigs(t *testing.T) {
	cfg, warnings := mustLoad(t, t.TempDir(), `agents:
  - id: guarded
    backend:
      type: openai
      model: gpt-5
      cwd: ws
      permissions:
        enabled: true
        automation_default: risk-based
        audit: true
        rules:
          deny: ["command(echo BLOCKED*)", "command(git push --force*)"]
          ask: ["read_url(*)"]
    permissions:
      deny: [write_file(**/.env)]
  - id: other
    backend: {type: openai, model: gpt-5}
`, nil)
	got := cfg.Agents[0].Permissions.Deny
	want := []string{"write_file(**/.env)", "@command(echo BLOCKED*)", "@command(git push --force*)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deny = %q, want %q", got, want)
	}
	if cfg.Agents[1].Permissions != nil {
		t.Errorf("the other agent got %+v", cfg.Agents[1].Permissions)
	}
	var msgs []string
	for _, w := range warnings {
		msgs = append(msgs, w.String())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`config.yaml:9: warning: agents[0].backend.permissions.automation_default: ignored: no risk classifier`,
		`config.yaml:13: warning: agents[0].backend.permissions.rules.ask: ignored: ask rules are not mapped`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if n := strings.Count(all, "ask rules are not mapped"); n != 1 {
		t.Errorf("the ask rules are warned about %d times, want once:\n%s", n, all)
	}
	if strings.Contains(all, "audit") {
		t.Errorf("audit: true is what massgen does, yet warned:\n%s", all)
	}
	out, err := cfg.ResolvedYAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "- '@command(git push --force*)'") || !strings.Contains(string(out), "permissions: # includes the rules mapped from backend.permissions") {
		t.Errorf("resolved config lacks the mapped rule:\n%s", out)
	}
}

// MassGen 0.1.96's srt mode: the command network srt would give becomes command_network, with a
// warning saying what srt means here; an explicit command_network wins.
func TestSRTKeys(t *testing.T) {
	tests := []struct {
		name, backend, agent string
		want                 *CommandNetwork
		warn                 string
	}{
		{"srt alone: no network", "command_line_execution_mode: srt", "", &CommandNetwork{Mode: vocab.NetworkNone},
			"command_network (none), enforced by that sandbox"},
		{"srt with domains", "command_line_execution_mode: srt\n      command_line_srt_network_allowed_domains: [api.anthropic.com, \"*.pypi.org\"]\n      command_line_srt_read_mode: confined", "",
			&CommandNetwork{Mode: vocab.NetworkAllowlist, AllowedDomains: []string{"api.anthropic.com", "*.pypi.org"}},
			"command_network (allowlist api.anthropic.com, *.pypi.org)"},
		{"domains without srt: MassGen ignores them too", "command_line_srt_network_allowed_domains: [x.org]", "", nil, ""},
		{"local mode", "command_line_execution_mode: local", "", nil, ""},
		{"explicit command_network wins", "command_line_execution_mode: srt", "    command_network: {mode: open}\n", &CommandNetwork{Mode: vocab.NetworkOpen},
			"not mapped: the agent's command_network is set and wins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n"+tt.agent+"    backend:\n      type: openai\n      model: m\n      "+tt.backend+"\n", nil)
			if got := cfg.Agents[0].CommandNetwork; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("command_network = %+v, want %+v", got, tt.want)
			}
			var msgs []string
			for _, w := range warnings {
				msgs = append(msgs, w.String())
			}
			all := strings.Join(msgs, "\n")
			if tt.warn != "" && !strings.Contains(all, "command_line_execution_mode: srt: commands run in massgen's own kernel sandbox") || !strings.Contains(all, tt.warn) {
				t.Errorf("warnings:\n%s\nwant %q", all, tt.warn)
			}
			if strings.Contains(all, "read_mode") || strings.Contains(all, "never in docker") {
				t.Errorf("srt keys that mean what massgen does were warned about:\n%s", all)
			}
			if tt.want == nil {
				return
			}
			out, _ := cfg.ResolvedYAML()
			if strings.Contains(string(out), "command_network: # ignored") || !strings.Contains(string(out), "mode: "+string(tt.want.Mode)) {
				t.Errorf("resolved config:\n%s", out)
			}
		})
	}
	_, _, err := load(t, t.TempDir(), "agents:\n  - id: a\n    command_network: {mode: closed, allowed_domains: [\"a b\"]}\n    backend: {type: openai, model: m}\n", nil)
	if err == nil || !strings.Contains(err.Error(), `agents[0].command_network.mode: unknown mode "closed" (known: none, allowlist, open)`) ||
		!strings.Contains(err.Error(), `agents[0].command_network.allowed_domains[0]: "a b" is not a host name`) {
		t.Errorf("bad command_network: %v", err)
	}
}
