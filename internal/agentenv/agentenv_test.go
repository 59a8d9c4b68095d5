package agentenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/agentenv/permconfig"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/trust"
)

// echoServerEnv makes this test binary a stdio MCP server offering echo and write_note; each
// start appends a line to the file it names, so tests can count starts.
const echoServerEnv = "MASSGEN_AGENTENV_TEST_SERVER"

func TestMain(m *testing.M) {
	if log := os.Getenv(echoServerEnv); log != "" {
		os.Exit(serveEcho(log))
	}
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}

func serveEcho(startLog string) int {
	f, err := os.OpenFile(startLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, "started")
		f.Close()
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	reply := func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo."}, reply)
	mcp.AddTool(srv, &mcp.Tool{Name: "write_note", Description: "Write."}, reply)
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

type fixture struct {
	dir      string
	startLog string
}

// newFixture writes config YAML (with {DIR}, {SELF} and {LOG} replaced) and optional project
// rules, and loads the config as the commands do.
func newFixture(t *testing.T, cfgYAML, projectYAML string) (*fixture, *configs.Config) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{dir: dir, startLog: filepath.Join(dir, "starts.log")}
	r := strings.NewReplacer("{DIR}", dir, "{SELF}", self, "{LOG}", fx.startLog)
	write(t, filepath.Join(dir, "src", "a.txt"), "a")
	write(t, filepath.Join(dir, "cfg.yaml"), r.Replace(cfgYAML))
	if projectYAML != "" {
		write(t, filepath.Join(dir, ".massgen", "permissions.yaml"), r.Replace(projectYAML))
	}
	approve(t, filepath.Join(dir, "cfg.yaml"), filepath.Join(dir, ".massgen", "permissions.yaml"))
	cfg, _, err := configs.Load(configs.LoadOptions{Name: filepath.Join(dir, "cfg.yaml"), BaseDir: dir, Home: dir,
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	return fx, cfg
}

// approve records the user's approval of the rule files that exist among files (in a trust
// store of the test's own), as `massgen permissions trust` would.
func approve(t *testing.T, files ...string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	store, err := trust.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		// A file that does not parse is approved as it is: loading it then says what is wrong.
		progs, _ := permconfig.RulesFilePrograms(f, data, filepath.Dir(files[0]), os.Environ(), filesystem.Table(), filesystem.MassGenActions())
		if err := store.Approve(f, data, progs, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, o Options, id string) (*Env, *Agent) {
	t.Helper()
	env, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	a, err := env.Agent(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return env, a
}

const twoAgents = `agents:
  - id: alpha
    backend: {type: openai, model: m, cwd: ws_alpha}
    permissions:
      deny: ["execute_command(rm *)"]
      hooks: {pre_tool_use: [{command: "true", matcher: agent}]}
  - id: beta
    backend: {type: openai, model: m, cwd: ws_beta}
permissions:
  allow: ["read_file"]
  hooks: {pre_tool_use: [{command: "true", matcher: global}]}
orchestrator:
  context_paths: [{path: src, permission: write}]
`

const projectRules = `deny: ["execute_command(git push*)"]
hooks: {pre_tool_use: [{command: "true", matcher: project}]}
agents:
  alpha:
    mode: default
    deny: [write_file]
    hooks: {pre_tool_use: [{command: "true", matcher: project-alpha}]}
`

// The project file's section for an agent applies to that agent only, in every role; layers
// add up in order (global, project, project's agent section, agent's own section).
func TestSpecMergesEveryLayer(t *testing.T) {
	_, cfg := newFixture(t, twoAgents, projectRules)
	env, err := New(Options{Config: cfg, DecideOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	tests := []struct {
		agent      string
		mode       permissions.Mode
		allow      []string
		deny       []string
		hookOrders []string
	}{
		{"alpha", permissions.ModeDefault, []string{"read_file"}, []string{"execute_command(git push*)", "write_file", "execute_command(rm *)"},
			[]string{"global", "project", "project-alpha", "agent"}},
		{"beta", permissions.ModeAcceptEdits, []string{"read_file"}, []string{"execute_command(git push*)"},
			[]string{"global", "project"}},
	}
	for _, tt := range tests {
		a, err := env.Agent(t.Context(), tt.agent)
		if err != nil {
			t.Fatal(err)
		}
		for _, role := range []Role{Coordination, Final} {
			s, err := a.Spec(role)
			if err != nil {
				t.Fatal(err)
			}
			if s.Mode != tt.mode || !slices.Equal(s.Allow, tt.allow) || !slices.Equal(s.Deny, tt.deny) || s.Role != role {
				t.Errorf("%s role %v: mode %q allow %q deny %q", tt.agent, role, s.Mode, s.Allow, s.Deny)
			}
		}
		var order []string
		for _, h := range a.Hooks().PreToolUse {
			order = append(order, h.Matcher)
		}
		if !slices.Equal(order, tt.hookOrders) {
			t.Errorf("%s hooks %q, want %q", tt.agent, order, tt.hookOrders)
		}
	}
}

// The per-agent project deny is enforced by the Toolset a run uses, not only reported.
func TestToolsetEnforcesPerAgentProjectRules(t *testing.T) {
	fx, cfg := newFixture(t, twoAgents, projectRules)
	for _, tt := range []struct {
		agent  string
		denied bool
	}{{"alpha", true}, {"beta", false}} {
		_, a := open(t, Options{Config: cfg}, tt.agent)
		ts, err := a.Toolset(Final)
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(fx.dir, "src", tt.agent+".txt")
		args, _ := json.Marshal(map[string]string{"path": target, "content": "x"})
		res := ts.Call(t.Context(), "write_file", args)
		_, statErr := os.Stat(target)
		if denied := res.IsError && strings.Contains(res.Content, `"denied":true`); denied != tt.denied || (statErr == nil) == tt.denied {
			t.Errorf("%s: write_file = %s (file exists: %v), want denied=%v", tt.agent, res.Content, statErr == nil, tt.denied)
		}
	}
}

const mcpOnly = `agents:
  - id: solo
    backend:
      type: openai
      model: m
      mcp_servers:
        - {name: echo, command: "{SELF}", env: {MASSGEN_AGENTENV_TEST_SERVER: "{LOG}"}}
orchestrator:
  context_paths: [{path: src, permission: write}]
`

// An agent without a workspace is offered its MCP servers' tools and no file tools, in both
// roles; its servers start once for both.
func TestAgentWithoutWorkspaceGetsMCPToolsOnly(t *testing.T) {
	fx, cfg := newFixture(t, mcpOnly, "")
	_, a := open(t, Options{Config: cfg}, "solo")
	want := map[Role][]string{
		Coordination: {"mcp__echo__echo"},                          // may write nowhere: write_note hidden
		Final:        {"mcp__echo__echo", "mcp__echo__write_note"}, // src is writable for the final agent
	}
	for _, role := range []Role{Coordination, Final} {
		ts, err := a.Toolset(role)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range ts.Tools() {
			names = append(names, tl.Name)
		}
		if !slices.Equal(names, want[role]) {
			t.Errorf("role %v offers %q, want %q", role, names, want[role])
		}
		if res := ts.Call(t.Context(), "read_file", json.RawMessage(`{"path":"`+fx.dir+`/src/a.txt"}`)); !res.IsError || strings.Contains(res.Content, `"a"`) {
			t.Errorf("role %v: read_file without a workspace = %+v", role, res)
		}
		if res := ts.Call(t.Context(), "mcp__echo__echo", json.RawMessage(`{"text":"hi"}`)); res.IsError || !strings.Contains(res.Content, "echo: hi") {
			t.Errorf("role %v: echo = %+v", role, res)
		}
	}
	b, _ := os.ReadFile(fx.startLog)
	if n := strings.Count(string(b), "started"); n != 1 {
		t.Errorf("the MCP server started %d times, want once for both roles", n)
	}
}

// Deciding without acting: no workspace, no server, no audit; the tools decided are those a run
// offers (file tools need a workspace, write tools somewhere to write).
func TestDecideOnly(t *testing.T) {
	fx, cfg := newFixture(t, mcpOnly, "")
	_, a := open(t, Options{Config: cfg, DecideOnly: true}, "solo")
	tests := []struct {
		role  Role
		tool  string
		args  map[string]any
		allow bool
		rule  string
	}{
		{Coordination, "read_file", map[string]any{"path": fx.dir + "/src/a.txt"}, false, RuleNotOffered},
		{Coordination, "mcp__echo__echo", map[string]any{"text": "x"}, true, ""},
		{Coordination, "mcp__echo__write_note", map[string]any{"text": "x"}, false, RuleNotOffered},
		{Final, "mcp__echo__write_note", map[string]any{"path": fx.dir + "/src/n.txt"}, true, ""},
		{Final, "mcp__other__echo", map[string]any{}, false, RuleNotOffered},
		{Final, "no_such_tool", map[string]any{}, false, RuleNotOffered},
	}
	for _, tt := range tests {
		d, err := a.Decide(t.Context(), tt.role, permissions.Request{Tool: tt.tool, Args: tt.args})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allow != tt.allow || (tt.rule != "" && string(d.Rule) != tt.rule) {
			t.Errorf("%v %s: %+v", tt.role, tt.tool, d)
		}
	}
	if _, err := os.Stat(fx.startLog); err == nil {
		t.Error("DecideOnly started an MCP server")
	}
	if _, err := os.Stat(filepath.Join(fx.dir, ".massgen")); err == nil {
		t.Error("DecideOnly wrote under .massgen/")
	}
}

// askOnce allows for the run and counts the questions.
type askOnce struct{ asked atomic.Int32 }

func (a *askOnce) Ask(context.Context, permissions.AskRequest) (permissions.AskAnswer, error) {
	a.asked.Add(1)
	return permissions.AskAllowRun, nil
}

// "Allow for this run" given in coordination holds in the final phase; the tracker is shared.
func TestPhasesShareGrantsAndTracker(t *testing.T) {
	_, cfg := newFixture(t, `agents:
  - id: alpha
    backend: {type: openai, model: m, cwd: ws}
permissions: {mode: default}
`, "")
	asker := &askOnce{}
	_, a := open(t, Options{Config: cfg, Asker: asker}, "alpha")
	coord, err := a.Toolset(Coordination)
	if err != nil {
		t.Fatal(err)
	}
	final, err := a.Toolset(Final)
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"command":"echo hi"}`) // mode default asks before any command
	if res := coord.Call(t.Context(), "execute_command", args); res.IsError {
		t.Fatalf("coordination: %s", res.Content)
	}
	if res := final.Call(t.Context(), "execute_command", args); res.IsError {
		t.Fatalf("final: %s", res.Content)
	}
	if n := asker.asked.Load(); n != 1 {
		t.Errorf("asked %d times, want once (the grant is for the run)", n)
	}
	if coord.Tracker() != final.Tracker() || coord.Tracker() != a.Tracker() {
		t.Error("the phases do not share the tracker")
	}
}

func TestConfigErrors(t *testing.T) {
	_, cfg := newFixture(t, twoAgents, "mode: yolo\n")
	var ce *ConfigError
	if _, err := New(Options{Config: cfg}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "permissions.yaml") {
		t.Errorf("bad project rules: %v", err)
	}
	_, cfg = newFixture(t, twoAgents, "")
	env, err := New(Options{Config: cfg, DecideOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if _, err := env.Agent(t.Context(), "zed"); !errors.As(err, &ce) || !strings.Contains(err.Error(), `no agent "zed" (agents: alpha, beta)`) {
		t.Errorf("unknown agent: %v", err)
	}
}
