package agentenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions"
)

const excludeConfig = `agents:
  - id: solo
    backend:
      type: openai
      model: m
      cwd: ws
      exclude_tools: [delete_file, echo]
      mcp_servers:
        - {name: notes, command: "{SELF}", env: {MASSGEN_AGENTENV_TEST_SERVER: "{LOG}"}, exclude_tools: [write_note]}
        - {name: only, command: "{SELF}", env: {MASSGEN_AGENTENV_TEST_SERVER: "{LOG}"}, allowed_tools: [write_note]}
`

// exclude_tools (MassGen's: by name as offered or as the MCP server names the tool) and an MCP
// server's allowed_tools and exclude_tools take tools away from the agent: the run's Toolset does
// not offer them and refuses them, and deciding without running agrees.
func TestExcludeTools(t *testing.T) {
	_, cfg := newFixture(t, excludeConfig, "")
	_, a := open(t, Options{Config: cfg}, "solo")
	ts, err := a.Toolset(Final)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range ts.Tools() {
		names = append(names, tl.Name)
	}
	gone := []string{"delete_file", "mcp__notes__echo", "mcp__notes__write_note", "mcp__only__echo"}
	for _, n := range gone {
		if slices.Contains(names, n) {
			t.Errorf("%s is offered: %q", n, names)
		}
		if res := ts.Call(t.Context(), n, json.RawMessage(`{"text":"x","path":"a.txt"}`)); !res.IsError || !strings.Contains(res.Content, "not offered") {
			t.Errorf("calling %s: %+v", n, res)
		}
	}
	for _, n := range []string{"write_file", "read_file", "execute_command", "mcp__only__write_note"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s is not offered: %q", n, names)
		}
	}

	_, d := open(t, Options{Config: cfg, DecideOnly: true}, "solo")
	for _, n := range gone {
		dec, err := d.Decide(t.Context(), Final, permissions.Request{Tool: n, Args: map[string]any{"text": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		if dec.Allow || dec.Rule != RuleNotOffered || !strings.Contains(dec.Reason, "exclude_tools") {
			t.Errorf("deciding %s: %+v", n, dec)
		}
	}
	if dec, _ := d.Decide(t.Context(), Final, permissions.Request{Tool: "mcp__only__write_note", Args: map[string]any{"text": "x"}}); dec.Rule == RuleNotOffered {
		t.Errorf("mcp__only__write_note: %+v", dec)
	}
}

const commandListsConfig = `agents:
  - id: solo
    backend:
      type: openai
      model: m
      cwd: ws
      command_line_allowed_commands: ["echo.*", "git .*"]
      command_line_blocked_commands: ["git push"]
`

// MassGen's command lists are deny rules on execute_command: what the run refuses is what the
// inspection commands report.
func TestCommandListsAreRules(t *testing.T) {
	_, cfg := newFixture(t, commandListsConfig, "")
	_, a := open(t, Options{Config: cfg}, "solo")
	spec, err := a.Spec(Coordination)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"execute_command(re:git push)", "execute_command(!re:echo.*|git .*)"}; !slices.Equal(spec.Deny, want) {
		t.Errorf("deny rules %q, want %q", spec.Deny, want)
	}
	ts, err := a.Toolset(Coordination)
	if err != nil {
		t.Fatal(err)
	}
	_, d := open(t, Options{Config: cfg, DecideOnly: true}, "solo")
	for cmd, allow := range map[string]bool{"echo hi": true, "git push origin": false, "ls": false, "echo a && ls": false} {
		res := ts.Call(t.Context(), "execute_command", json.RawMessage(`{"command":"`+cmd+`"}`))
		if ran := !res.IsError; ran != allow || (!allow && !strings.Contains(res.Content, "denied by the rule")) {
			t.Errorf("run %q: %s, want allowed=%v", cmd, res.Content, allow)
		}
		dec, err := d.Decide(t.Context(), Coordination, permissions.Request{Tool: "execute_command", Args: map[string]any{"command": cmd}})
		if err != nil {
			t.Fatal(err)
		}
		if dec.Allow != allow {
			t.Errorf("decide %q: %+v, want allowed=%v", cmd, dec, allow)
		}
	}
}

const securityConfig = `agents:
  - id: solo
    backend:
      type: openai
      model: m
      mcp_servers:
        - {name: boxed, command: "{SELF}", env: {MASSGEN_AGENTENV_TEST_SERVER: "{LOG}"}, security: {level: strict}}
        - {name: trusted, command: "{SELF}", env: {MASSGEN_AGENTENV_TEST_SERVER: "{LOG}"}, security: {allowed_executables: ["{SELFBASE}"]}}
`

// A server its security: section refuses (the test binary is not a program level strict allows)
// never starts; the agent goes on with the others, and every view agrees.
func TestSecurityRefusesServers(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fx, cfg := newFixture(t, strings.ReplaceAll(securityConfig, "{SELFBASE}", filepath.Base(self)), "")
	var warned []string
	_, a := open(t, Options{Config: cfg, Warn: func(id string, err error) { warned = append(warned, id+": "+err.Error()) }}, "solo")
	ts, err := a.Toolset(Coordination)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range ts.Tools() {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"mcp__trusted__echo"}) {
		t.Errorf("offered %q, want the trusted server's echo only", names)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], `solo: MCP server "boxed": refused by its security: section`) || !strings.Contains(warned[0], `program "agentenv.test" is not allowed by level strict`) {
		t.Errorf("warnings %q", warned)
	}
	if b, _ := os.ReadFile(fx.startLog); strings.Count(string(b), "started") != 1 {
		t.Errorf("servers started: %q, want only the trusted one", b)
	}
	_, d := open(t, Options{Config: cfg, DecideOnly: true}, "solo")
	if dec, _ := d.Decide(t.Context(), Coordination, permissions.Request{Tool: "mcp__boxed__echo", Args: map[string]any{"text": "x"}}); dec.Rule != RuleNotOffered {
		t.Errorf("deciding a refused server's tool: %+v", dec)
	}
}
