package configs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/vocab"
)

// env is a fake real environment.
type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

// write creates dir/name with text and returns its path.
func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// load loads text written to <base>/config.yaml with base as the current directory.
func load(t *testing.T, base, text string, e env) (*Config, []Warning, error) {
	t.Helper()
	write(t, base, "config.yaml", text)
	return Load(LoadOptions{Name: "config.yaml", BaseDir: base, Home: filepath.Join(base, "home"), LookupEnv: e.lookup, Actions: ActionsForTest})
}

func mustLoad(t *testing.T, base, text string, e env) (*Config, []Warning) {
	t.Helper()
	cfg, w, err := load(t, base, text, e)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg, w
}

func problems(t *testing.T, err error) []Problem {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *ValidationError, got %T %v", err, err)
	}
	return ve.Problems
}

func TestLoadSchema(t *testing.T) {
	base := t.TempDir()
	cfg, warnings := mustLoad(t, base, `
agents:
  - id: a1
    system_message: "Be brief"
    backend:
      type: openai
      model: gpt-5
      base_url: https://example.test/v1
      temperature: 0.3
      text: {verbosity: low}
      mcp_servers:
        weather:
          type: stdio
          command: npx
          args: ["-y", "weather"]
          env: {BRAVE_API_KEY: abc}
          security: {level: moderate}
  - id: a2
    backend: {type: claude, model: claude-sonnet-4, enable_web_search: true}
orchestrator:
  timeout_seconds: 90
  max_new_answers_per_agent: 2
  voting_sensitivity: strict
  dspy: {enabled: true}
ui: {display_type: simple, logging_enabled: true}
`, nil)
	// The keys massgen does not act on are each reported, with what happens instead.
	var keys []string
	for _, w := range warnings {
		keys = append(keys, w.Key)
	}
	if want := []string{"orchestrator.dspy"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("warnings about %q, want %q: %v", keys, want, warnings)
	}
	if got := len(cfg.Agents); got != 2 {
		t.Fatalf("agents = %d", got)
	}
	a := cfg.Agents[0]
	if a.ID != "a1" || a.SystemMessage != "Be brief" || a.Backend.Type != "openai" || a.Backend.Model != "gpt-5" || a.Backend.BaseURL != "https://example.test/v1" {
		t.Errorf("agent 0 = %+v", a)
	}
	if a.Backend.Extra["temperature"] != 0.3 || !reflect.DeepEqual(a.Backend.Extra["text"], map[string]any{"verbosity": "low"}) {
		t.Errorf("backend extra not passed through: %#v", a.Backend.Extra)
	}
	// mcp_servers as a mapping (MassGen's other spelling) becomes a list; env key case is kept.
	want := MCPServer{Name: "weather", Type: "stdio", Command: "npx", Args: []string{"-y", "weather"},
		Env: map[string]string{"BRAVE_API_KEY": "abc"}, Security: &MCPSecurity{Level: "moderate"}}
	if !reflect.DeepEqual(a.Backend.MCPServers, []MCPServer{want}) {
		t.Errorf("mcp servers = %#v", a.Backend.MCPServers)
	}
	if cfg.Agents[1].Backend.Extra["enable_web_search"] != true {
		t.Errorf("flow-style backend extra = %#v", cfg.Agents[1].Backend.Extra)
	}
	if cfg.OverallTimeout().Seconds() != 90 || cfg.Orchestrator.MaxNewAnswersPerAgent != 2 {
		t.Errorf("orchestrator = %+v", cfg.Orchestrator)
	}
	if cfg.Orchestrator.VotingSensitivity != "strict" || cfg.Orchestrator.Extra["dspy"] == nil || cfg.UI.DisplayType != "simple" {
		t.Errorf("orchestrator extra / ui = %#v / %+v", cfg.Orchestrator.Extra, cfg.UI)
	}
	if _, ok := cfg.AgentByID("a2"); !ok {
		t.Error("AgentByID(a2) not found")
	}
	if _, ok := cfg.AgentByID("zz"); ok {
		t.Error("AgentByID(zz) found")
	}
	if !cfg.EnforceReadBeforeDelete() {
		t.Error("EnforceReadBeforeDelete should default to true")
	}
	if cfg.HasWorkspaces() {
		t.Error("HasWorkspaces without any cwd")
	}
	if cfg.Source != filepath.Join(base, "config.yaml") || cfg.BaseDir != base {
		t.Errorf("Source/BaseDir = %q / %q", cfg.Source, cfg.BaseDir)
	}
}

func TestLoadSingleAgentAndTimeoutSettings(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), `
agent:
  id: solo
  backend: {type: gemini, model: gemini-2.5-flash, cwd: ws}
timeout_settings:
  orchestrator_timeout_seconds: 45
orchestrator:
  enforce_read_before_delete: false
`, nil)
	if len(cfg.Agents) != 1 || cfg.Agents[0].ID != "solo" {
		t.Fatalf("agents = %+v", cfg.Agents)
	}
	if cfg.OverallTimeout().Seconds() != 45 {
		t.Errorf("OverallTimeout = %v", cfg.OverallTimeout())
	}
	if cfg.EnforceReadBeforeDelete() {
		t.Error("enforce_read_before_delete: false ignored")
	}
	if !cfg.HasWorkspaces() {
		t.Error("HasWorkspaces false with a cwd")
	}
}

func TestUnknownKeysAreWarningsWithLines(t *testing.T) {
	base := t.TempDir()
	_, warnings := mustLoad(t, base, `agents:
  - id: a
    colour: blue
    backend:
      type: openai
      anything_goes: 1
orchestrator:
  snapshot_storge: snaps
  coordination: {use_skills: true}
memory:
  enabled: true
ui:
  type: rich_terminal
`, nil)
	got := make([]string, len(warnings))
	for i, w := range warnings {
		got[i] = w.String()
	}
	want := []string{
		`config.yaml:3: warning: unknown key "agents[0].colour" (not used)`,
		`config.yaml:6: warning: unknown key "agents[0].backend.anything_goes" (not used)`,
		`config.yaml:8: warning: unknown key "orchestrator.snapshot_storge" (not used; did you mean "snapshot_storage"?)`,
		`config.yaml:9: warning: orchestrator.coordination.use_skills: ignored: skills are not offered`,
		`config.yaml:10: warning: memory: ignored: no conversation compression or persistent memory: agents see the session's conversation history only (not implemented)`,
		`config.yaml:13: warning: ui.type: ignored: not read (MassGen 0.1.12 does not read it either); ui.display_type chooses the display`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMalformedYAML(t *testing.T) {
	tests := []struct {
		name, text string
		want       string
	}{
		{"bad indentation", "agents:\n  - id: a\n    backend:\n      type: openai\n     model: x\n", "config.yaml:5: "},
		{"bad indentation after a multi-line flow list", "agents:\n  - id: a\n    backend:\n      type: openai\n      extra: [\n        \"x\",\n        \"y\"]\n      model: m\n     bad: x\n", "config.yaml:9: "},
		{"unclosed quote", "agents:\n  - id: \"a\n    backend: {type: openai}\n", "config.yaml:2: "},
		{"tab", "agents:\n\t- id: a\n", "config.yaml:2: "},
		{"empty", "", "config.yaml: empty config"},
		{"not a mapping", "- a\n- b\n", "config.yaml:1: the config must be a mapping"},
		{"wrong type", "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  timeout_seconds: soon\n", "config.yaml:5: cannot unmarshal"},
		{"agents not a list", "agents: hello\n", "config.yaml:1: cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := load(t, t.TempDir(), tt.text, nil)
			if err == nil {
				t.Fatal("no error")
			}
			ps := problems(t, err)
			if !strings.HasPrefix(ps[0].String(), tt.want) {
				t.Errorf("problem = %q, want prefix %q", ps[0].String(), tt.want)
			}
		})
	}
}

func TestValidationProblems(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string // every problem, in order
	}{
		{"no agents", "ui: {display_type: simple}\n", []string{"config.yaml: no agents"}},
		{"missing id", "agents:\n  - backend: {type: openai}\n", []string{"config.yaml:2: agents[0]: missing id"}},
		{"duplicate id", "agents:\n  - id: a\n    backend: {type: openai}\n  - id: a\n    backend: {type: claude}\n",
			[]string{`config.yaml:4: agents[1].id: duplicate id "a" (first used at line 2)`}},
		{"unknown backend", "agents:\n  - id: a\n    backend:\n      type: opnai\n",
			[]string{`config.yaml:4: agents[0].backend.type: unknown backend "opnai" (did you mean "openai"? known: openai, claude, gemini, chatcompletion,`}},
		{"framework adapter", "agents:\n  - id: a\n    backend:\n      type: ag2\n      agent_config: {type: assistant}\n",
			[]string{`config.yaml:4: agents[0].backend.type: ag2: refused: AG2 is a Python framework adapter that this port does not run`}},
		{"v1 format", "models: [gpt-4o]\nagents:\n  - id: a\n    backend: {type: openai, model: m}\n",
			[]string{`config.yaml:1: models: refused: MassGen's v1 config format is not supported`}},
		{"system prompt in the backend", "agents:\n  - id: a\n    backend: {type: openai, model: m, system_prompt: hi}\n",
			[]string{`config.yaml:3: agents[0].backend.system_prompt: refused: not supported in the backend section`}},
		{"missing backend type", "agents:\n  - id: a\n    backend: {model: x}\n", []string{"config.yaml:3: agents[0].backend: missing backend type"}},
		{"id with a slash", "agents:\n  - id: ../x\n    backend: {type: openai}\n", []string{`config.yaml:2: agents[0].id: invalid id "../x"`}},
		{"both agent and agents", "agent: {id: a, backend: {type: openai}}\nagents: []\n", []string{"config.yaml:1: both agent: and agents: are set"}},
		{"bad permission", "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  context_paths:\n    - path: .\n      permission: rw\n",
			[]string{`config.yaml:7: orchestrator.context_paths[0].permission: unknown permission "rw" (known: read, write)`}},
		{"a shared workspace's own folder already named", "agents:\n  - id: a\n    backend: {type: openai, cwd: ws}\n  - id: b\n    backend: {type: openai, cwd: ws}\n  - id: c\n    backend: {type: openai, cwd: ws_a}\n",
			[]string{`config.yaml:7: agents[2].backend.cwd: workspace `}},
		{"cwd escaping .massgen/workspaces", "agents:\n  - id: a\n    backend:\n      type: openai\n      cwd: ../../etc\n",
			[]string{`config.yaml:5: agents[0].backend.cwd: relative path "../../etc" would leave`}},
		{"bad mode and sandbox", "agents:\n  - id: a\n    backend: {type: openai}\npermissions:\n  mode: yolo\ncommand_sandbox: docker\n",
			[]string{`config.yaml:5: permissions.mode: unknown mode "yolo"`, `config.yaml:6: command_sandbox: unknown sandbox "docker"`}},
		{"mcp server without command", "agents:\n  - id: a\n    backend:\n      type: openai\n      mcp_servers:\n        - name: x\n          type: stdio\n",
			[]string{"config.yaml:6: agents[0].backend.mcp_servers[0]: needs command: (stdio) or url: (http)"}},
		{"negative timeout", "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  timeout_seconds: -1\n",
			[]string{"config.yaml:5: orchestrator.timeout_seconds: must not be negative (got -1)"}},
		{"protected path escaping", "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  context_paths:\n    - path: .\n      protected_paths: [../other]\n",
			[]string{`config.yaml:7: orchestrator.context_paths[0].protected_paths: protected path "../other" is outside its context path`}},
		{"scripted without script", "agents:\n  - id: a\n    backend: {type: scripted}\n", []string{"config.yaml:3: agents[0].backend: the scripted backend needs a script:"}},
		{"coordination option values", "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  voting_sensitivity: picky\n  answer_novelty_requirement: Strict\n  coordination: {max_orchestration_restarts: -1}\n",
			[]string{`config.yaml:5: orchestrator.voting_sensitivity: unknown level "picky" (known: lenient, balanced, strict, checklist_gated)`,
				`config.yaml:6: orchestrator.answer_novelty_requirement: unknown level "Strict" (known: lenient, balanced, strict)`,
				"config.yaml:7: orchestrator.coordination.max_orchestration_restarts: must not be negative (got -1)"}},
		{"checklist options", "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  voting_sensitivity: checklist_gated\n  voting_threshold: 11\n  max_checklist_calls_per_round: -1\n  answer_novelty_requirement: checklist_gated\n",
			[]string{"config.yaml:6: orchestrator.voting_threshold: must be 0-10 (got 11)",
				"config.yaml:7: orchestrator.max_checklist_calls_per_round: must not be negative (got -1)",
				`config.yaml:8: orchestrator.answer_novelty_requirement: unknown level "checklist_gated" (known: lenient, balanced, strict)`}},
		{"planning mode takes a boolean", "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  coordination:\n    enable_planning_mode: sometimes\n",
			[]string{`config.yaml:6: `}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := load(t, t.TempDir(), tt.text, nil)
			if err == nil {
				t.Fatal("no error")
			}
			ps := problems(t, err)
			if len(ps) != len(tt.want) {
				t.Fatalf("problems = %v, want %d", ps, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(ps[i].String(), w) {
					t.Errorf("problem %d = %q, want prefix %q", i, ps[i].String(), w)
				}
			}
		})
	}
}

func TestEnvPrecedence(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	write(t, home, ".massgen/.env", "A=home\nB=home\nC=home\nX=home\n")
	write(t, home, ".config/massgen/.env", "X=xdg\nB=xdg\n") // MassGen's location, above ~/.massgen
	write(t, base, ".env", "B=dot\nC=dot\n")
	cfg, _ := mustLoad(t, base, `agents:
  - id: a
    backend:
      type: openai
      model: "${A}-${B}-${C}-${X}"
`, env{"C": "real"})
	if got := cfg.Agents[0].Backend.Model; got != "home-dot-real-xdg" {
		t.Errorf("model = %q, want home-dot-real-xdg", got)
	}
	for k, want := range map[string]string{"A": "home", "B": "dot", "C": "real", "X": "xdg"} {
		if v, ok := cfg.LookupEnv(k); !ok || v != want {
			t.Errorf("LookupEnv(%s) = %q,%v want %q", k, v, ok, want)
		}
	}
	if _, ok := cfg.LookupEnv("NOPE"); ok {
		t.Error("LookupEnv(NOPE) found")
	}
	if cfg.Env["C"] != "dot" {
		t.Errorf("Env holds the merged .env files, got C=%q", cfg.Env["C"])
	}
	if _, set := os.LookupEnv("A"); set {
		t.Error("the process environment was modified")
	}
}

func TestEnvFileMalformed(t *testing.T) {
	base := t.TempDir()
	write(t, base, ".env", "A='unterminated\n")
	_, _, err := load(t, base, "agents:\n  - id: a\n    backend: {type: openai}\n", nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(base, ".env")) {
		t.Fatalf("err = %v, want it to name the .env file", err)
	}
}

func TestVarExpansion(t *testing.T) {
	base := t.TempDir()
	cfg, warnings := mustLoad(t, base, `agents:
  - id: a
    system_message: "Use ${HOME_DIR} and $5 as-is"
    backend:
      type: openai
      api_key: ${MISSING_KEY}
      base_url: "http://${HOST}/v1"
      max_tokens: ${MAXTOK}
      mcp_servers:
        - name: pw
          command: npx
          args: ["--out=${cwd}", "--token=${TOKEN}"]
  - id: b
    backend:
      type: scripted
      script:
        - text: "${WORKSPACE} and ${HOST}"
`, env{"HOST": "localhost:8080", "MAXTOK": "512", "HOME_DIR": "/x"})
	b := cfg.Agents[0].Backend
	if b.BaseURL != "http://localhost:8080/v1" {
		t.Errorf("base_url = %q", b.BaseURL)
	}
	if b.Extra["max_tokens"] != 512 {
		t.Errorf("a plain ${VAR} holding a number should decode as one, got %#v", b.Extra["max_tokens"])
	}
	if b.APIKey != "" {
		t.Errorf("api_key of an unset variable = %q, want empty", b.APIKey)
	}
	if got := b.MCPServers[0].Args; !reflect.DeepEqual(got, []string{"--out=${cwd}", "--token=${TOKEN}"}) {
		t.Errorf("args = %q", got)
	}
	if got := cfg.Agents[0].SystemMessage; got != "Use ${HOME_DIR} and $5 as-is" {
		t.Errorf("system_message changed: %q", got)
	}
	if got := cfg.Agents[1].Backend.Script[0].Text; got != "${WORKSPACE} and ${HOST}" {
		t.Errorf("script changed: %q", got)
	}
	var msgs []string
	for _, w := range warnings {
		msgs = append(msgs, w.String())
	}
	want := []string{
		"config.yaml:6: warning: agents[0].backend.api_key: ${MISSING_KEY} is not set (left as written)",
		"config.yaml:12: warning: agents[0].backend.mcp_servers[0].args[1]: ${TOKEN} is not set (left as written)",
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

func TestRelocation(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	abs := filepath.Join(t.TempDir(), "elsewhere")
	mg := filepath.Join(base, ".massgen")
	tests := []struct {
		name          string
		cwd, snap     string // as written
		wantCWD       string
		wantSnap      string
		wantTemp      string
		wantSess      string
		temp, session string
	}{
		{name: "relative", cwd: "workspace1", snap: "snapshots", temp: "temp_workspaces", session: "sessions",
			wantCWD: filepath.Join(mg, "workspaces/workspace1"), wantSnap: filepath.Join(mg, "snapshots"),
			wantTemp: filepath.Join(mg, "temp_workspaces"), wantSess: filepath.Join(mg, "sessions")},
		{name: "relative nested", cwd: "team/ws", snap: "my/snaps",
			wantCWD: filepath.Join(mg, "workspaces/team/ws"), wantSnap: filepath.Join(mg, "my/snaps")},
		{name: "absolute stays", cwd: abs, snap: abs + "-snaps", temp: abs + "-tmp", session: abs + "-sess",
			wantCWD: abs, wantSnap: abs + "-snaps", wantTemp: abs + "-tmp", wantSess: abs + "-sess"},
		{name: "already under .massgen", cwd: ".massgen/ws", snap: ".massgen/custom_snaps", temp: "./.massgen/t",
			wantCWD: filepath.Join(mg, "ws"), wantSnap: filepath.Join(mg, "custom_snaps"), wantTemp: filepath.Join(mg, "t")},
		{name: "home", cwd: "~/ws", wantCWD: filepath.Join(home, "ws")},
		{name: "defaults", wantSnap: filepath.Join(mg, "snapshots"), wantTemp: filepath.Join(mg, "temp_workspaces"), wantSess: filepath.Join(mg, "sessions")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "agents:\n  - id: a\n    backend:\n      type: openai\n"
			if tt.cwd != "" {
				text += "      cwd: " + tt.cwd + "\n"
			}
			text += "orchestrator:\n"
			for k, v := range map[string]string{"snapshot_storage": tt.snap, "agent_temporary_workspace": tt.temp, "session_storage": tt.session} {
				if v != "" {
					text += "  " + k + ": " + v + "\n"
				}
			}
			cfg, _ := mustLoad(t, base, text, nil)
			o := cfg.Orchestrator
			check := func(what, got, want string) {
				if want != "" && got != want {
					t.Errorf("%s = %q, want %q", what, got, want)
				}
				if got != "" && !filepath.IsAbs(got) {
					t.Errorf("%s = %q is not absolute", what, got)
				}
			}
			check("cwd", cfg.Agents[0].Backend.CWD, tt.wantCWD)
			check("snapshot_storage", o.SnapshotStorage, tt.wantSnap)
			check("agent_temporary_workspace", o.AgentTemporaryWorkspace, tt.wantTemp)
			check("session_storage", o.SessionStorage, tt.wantSess)
			if cfg.MassgenDir() != mg || cfg.Layout().Logs() != filepath.Join(mg, "logs") {
				t.Errorf("MassgenDir/Layout().Logs = %q / %q", cfg.MassgenDir(), cfg.Layout().Logs())
			}
		})
	}
}

func TestContextPaths(t *testing.T) {
	base := t.TempDir()
	write(t, base, "proj/src/main.go", "package main\n")
	write(t, base, "proj/notes.txt", "hi\n")
	cfg, warnings := mustLoad(t, base, `agents:
  - id: a
    backend: {type: openai, cwd: ws}
orchestrator:
  context_paths:
    - path: proj
      permission: write
      protected_paths: [src/main.go, "docs/"]
    - path: proj/notes.txt
    - path: missing-one
      permission: read
    - path: /definitely/missing/two
      permission: write
`, nil)
	proj := filepath.Join(base, "proj")
	want := []ContextPath{
		{Path: proj, Permission: "write", ProtectedPaths: []string{filepath.Join(proj, "src/main.go"), filepath.Join(proj, "docs")}},
		{Path: filepath.Join(proj, "notes.txt"), Permission: "read"}, // a file; no permission: read
		{Path: filepath.Join(base, "missing-one"), Permission: "read"},
		{Path: "/definitely/missing/two", Permission: "write"},
	}
	if !reflect.DeepEqual(cfg.Orchestrator.ContextPaths, want) {
		t.Errorf("context paths:\n%+v\nwant\n%+v", cfg.Orchestrator.ContextPaths, want)
	}
	var msgs []string
	for _, w := range warnings {
		msgs = append(msgs, w.String())
	}
	wantW := []string{
		"config.yaml:10: warning: context path " + filepath.Join(base, "missing-one") + " does not exist (checked again when a run starts)",
		"config.yaml:12: warning: context path /definitely/missing/two does not exist (checked again when a run starts)",
	}
	if !reflect.DeepEqual(msgs, wantW) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(wantW, "\n"))
	}
	err := cfg.CheckContextPaths()
	wantErr := "Context paths not found:\n  - " + filepath.Join(base, "missing-one") + " does not exist\n  - /definitely/missing/two does not exist"
	if err == nil || err.Error() != wantErr {
		t.Errorf("CheckContextPaths = %v\nwant %s", err, wantErr)
	}
	cfg.Orchestrator.ContextPaths = cfg.Orchestrator.ContextPaths[:2]
	if err := cfg.CheckContextPaths(); err != nil {
		t.Errorf("existing file and dir: %v", err)
	}
}

func TestParseContextFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    ContextPath
		wantErr bool
	}{
		{in: ".", want: ContextPath{Path: ".", Permission: "write"}},
		{in: "src:read", want: ContextPath{Path: "src", Permission: "read"}},
		{in: "/abs/dir:write", want: ContextPath{Path: "/abs/dir", Permission: "write"}},
		{in: "odd:name", want: ContextPath{Path: "odd:name", Permission: "write"}},
		{in: "a:b:read", want: ContextPath{Path: "a:b", Permission: "read"}},
		{in: ":read", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseContextFlag(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("ParseContextFlag(%q) = %+v, %v; want %+v (err %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestResolveAddsContextPaths(t *testing.T) {
	base := t.TempDir()
	loaded, _ := mustLoad(t, base, "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  context_paths:\n    - path: docs\n      permission: read\n", nil)
	cfg, err := Resolve(loaded, Inputs{BaseDir: base, ContextPaths: []ContextPath{
		{Path: "."},
		{Path: "docs", Permission: "write", ProtectedPaths: []string{"keep"}},
		{Path: "~/notes", Permission: "read"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []ContextPath{
		{Path: filepath.Join(base, "docs"), Permission: "write", ProtectedPaths: []string{filepath.Join(base, "docs/keep")}},
		{Path: base, Permission: "write"},
		{Path: filepath.Join(base, "home/notes"), Permission: "read"},
	}
	if !reflect.DeepEqual(cfg.Orchestrator.ContextPaths, want) {
		t.Errorf("got  %+v\nwant %+v", cfg.Orchestrator.ContextPaths, want)
	}
	for _, bad := range []ContextPath{{Path: ""}, {Path: ".", ProtectedPaths: []string{"../x"}}} {
		if _, err := Resolve(cfg, Inputs{BaseDir: base, ContextPaths: []ContextPath{bad}}); err == nil {
			t.Errorf("Resolve(%+v) accepted", bad)
		}
	}
}

func TestRedacted(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), `agents:
  - id: a
    backend:
      type: openai
      api_key: sk-secret
      mcp_servers: [{name: s, command: x, env: {TOKEN: t0k}}]
`, nil)
	r := cfg.Redacted()
	if r.Agents[0].Backend.APIKey != redacted || r.Agents[0].Backend.MCPServers[0].Env["TOKEN"] != redacted {
		t.Errorf("not redacted: %+v", r.Agents[0].Backend)
	}
	if cfg.Agents[0].Backend.APIKey != "sk-secret" || cfg.Agents[0].Backend.MCPServers[0].Env["TOKEN"] != "t0k" {
		t.Error("Redacted modified the original")
	}
}

func TestConfigResolution(t *testing.T) {
	base := t.TempDir()
	write(t, base, "mine.yaml", "agents:\n  - id: local\n    backend: {type: openai}\n")
	// A file named like a built-in wins over the built-in.
	write(t, base, "basic/multi/three_agents_default.yaml", "agents:\n  - id: shadow\n    backend: {type: openai}\n")
	tests := []struct {
		name       string
		wantSource string
		wantErr    string
	}{
		{name: "mine.yaml", wantSource: filepath.Join(base, "mine.yaml")},
		{name: filepath.Join(base, "mine.yaml"), wantSource: filepath.Join(base, "mine.yaml")},
		{name: "@examples/basic/multi/three_agents_default", wantSource: "@examples/basic/multi/three_agents_default"},
		{name: "@examples/basic/multi/three_agents_default.yaml", wantSource: "@examples/basic/multi/three_agents_default"},
		{name: "@examples/three_agents_default", wantSource: "@examples/basic/multi/three_agents_default"},
		{name: "basic/multi/three_agents_default.yaml", wantSource: filepath.Join(base, "basic/multi/three_agents_default.yaml")},
		{name: "basic/single/single_agent", wantSource: "@examples/basic/single/single_agent"},
		{name: "tools/filesystem/fs_permissions_test.yaml", wantSource: "@examples/tools/filesystem/fs_permissions_test"},
		{name: "@examples/nope", wantErr: `no built-in config "nope"`},
		{name: "nope.yaml", wantErr: "config nope.yaml: no such file, and no built-in config"},
		{name: "", wantErr: "no config given"},
		{name: "basic", wantErr: "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Load(LoadOptions{Name: tt.name, BaseDir: base})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Source != tt.wantSource {
				t.Errorf("Source = %q, want %q", cfg.Source, tt.wantSource)
			}
		})
	}
}

func TestDescription(t *testing.T) {
	for in, want := range map[string]string{
		"# Two agents\nagents: []\n": "Two agents",
		"#Two agents\r\n# more\n":    "Two agents",
		"##  spaced  \n":             "spaced",
		"agents: [] # not first\n":   "",
		"\n# after a blank line\n":   "",
		"":                           "",
	} {
		if got := Description([]byte(in)); got != want {
			t.Errorf("Description(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExamplesListAndValidate(t *testing.T) {
	names := Examples()
	for _, want := range []string{"basic/multi/three_agents_default", "providers/claude/claude", "tools/filesystem/multiturn/two_gemini_flash_filesystem_multiturn"} {
		if !slices.Contains(names, want) {
			t.Errorf("Examples() lacks %s", want)
		}
	}
	base := t.TempDir()
	descriptions := map[string]string{}
	for _, n := range names {
		cfg, warnings, err := Load(LoadOptions{Name: "@examples/" + n, BaseDir: base})
		if err != nil {
			t.Errorf("built-in %s does not load: %v", n, err)
			continue
		}
		// Nothing a built-in points at is missing (MassGen's repository layout is not here).
		if err := cfg.CheckContextPaths(); err != nil {
			t.Errorf("built-in %s: %v", n, err)
		}
		for _, w := range warnings {
			if strings.Contains(w.Message, "does not exist") || strings.Contains(w.String(), "massgen/configs/") {
				t.Errorf("built-in %s: %s", n, w)
			}
		}
		data, err := Example(n)
		if err != nil || len(data) == 0 {
			t.Errorf("Example(%s) = %d bytes, %v", n, len(data), err)
		}
		// Every built-in says what it is in its first line, in a line of its own.
		d := Description(data)
		if d == "" || len(d) > 100 {
			t.Errorf("built-in %s: description %q (want a first comment line of at most 100 characters)", n, d)
		}
		if other, dup := descriptions[d]; dup {
			t.Errorf("built-ins %s and %s share the description %q", other, n, d)
		}
		descriptions[d] = n
	}
	if _, err := examplesFS.ReadFile("examples/LICENSE"); err != nil {
		t.Errorf("the MassGen LICENSE must ship with the examples: %v", err)
	}
}

// TestMassGenConfigs validates every real MassGen config in ../shared/massgen-configs (beside
// the repository): basic/, providers/ and tools/filesystem/ must pass; the others may report
// problems, but must never panic.
func TestMassGenConfigs(t *testing.T) {
	root := sharedConfigsDir(t)
	base := t.TempDir()
	mustPass := []string{"basic/", "providers/", "tools/filesystem/"}
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".yaml" {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		n++
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic: %v", rel, r)
				}
			}()
			_, _, err := Load(LoadOptions{Name: p, BaseDir: base})
			for _, prefix := range mustPass {
				if strings.HasPrefix(filepath.ToSlash(rel), prefix) && err != nil {
					t.Errorf("%s must validate: %v", rel, err)
				}
			}
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Errorf("only %d configs found under %s", n, root)
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	cfg, warnings := mustLoad(t, t.TempDir(), `defaults: &be
  type: openai
  model: gpt-5
  temperature: 0.2
agents:
  - id: a
    backend:
      <<: *be
      cwd: ws1
  - id: b
    backend:
      <<: *be
      model: gpt-5-mini
      cwd: ws2
`, nil)
	if len(cfg.Agents) != 2 || cfg.Agents[1].Backend.Model != "gpt-5-mini" || cfg.Agents[0].Backend.Type != "openai" || cfg.Agents[1].Backend.Extra["temperature"] != 0.2 {
		t.Errorf("agents = %+v", cfg.Agents)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Message, `unknown key "defaults"`) {
		t.Errorf("warnings = %v", warnings)
	}
	// An anchor that contains itself is walked once (no endless recursion); the unknown key
	// holding it is reported like any other.
	_, w, err := load(t, t.TempDir(), "agents: &x\n  - id: a\n    backend: {type: openai}\n    more: *x\n", nil)
	if err != nil || len(w) != 1 || !strings.Contains(w[0].String(), `config.yaml:4: warning: unknown key "agents[0].more"`) {
		t.Errorf("self-referencing anchor: err %v, warnings %v", err, w)
	}
}

func TestWorkspaceContainingContextPath(t *testing.T) {
	base := t.TempDir()
	write(t, base, "outer/proj/a.txt", "x")
	proj := filepath.Join(base, "outer", "proj")
	tests := []struct {
		name, cwd string
		wantErr   bool
	}{
		{"workspace is the context path", proj, true},
		{"workspace contains the context path", filepath.Join(base, "outer"), true},
		{"workspace inside the context path (.massgen in the project)", filepath.Join(proj, ".massgen/workspaces/w"), false},
		{"relocated workspace", "ws", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// cwd_owned: existing folders are refused at load otherwise (TestExistingCwdRefused).
			cfg, warnings := mustLoad(t, base, "agents:\n  - id: a\n    backend: {type: openai, cwd_owned: true, cwd: \""+tt.cwd+"\"}\norchestrator:\n  context_paths: [{path: outer/proj, permission: write}]\n", nil)
			outside := len(warnings) == 1 && strings.Contains(warnings[0].String(), "config.yaml:3: warning: agent a's workspace "+filepath.Clean(tt.cwd)+" is outside .massgen/")
			if wantOutside := filepath.IsAbs(tt.cwd); outside != wantOutside {
				t.Errorf("warnings = %v, want the outside-.massgen warning: %v", warnings, wantOutside)
			}
			err := cfg.CheckContextPaths()
			if (err != nil) != tt.wantErr {
				t.Fatalf("CheckContextPaths = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "agent a's workspace "+filepath.Clean(tt.cwd)+" contains context path "+proj) {
				t.Errorf("message: %v", err)
			}
		})
	}
}

// MassGen's command lists are regular expressions: one massgen cannot use is a config error
// naming the entry, before anything runs.
func TestCommandListsMustBeRegularExpressions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(p, []byte("agents:\n  - id: a\n    backend:\n      type: openai\n      model: m\n      command_line_allowed_commands:\n        - \"python.*\"\n        - \"(?!rm)\"\n      command_line_blocked_commands: [\"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Load(LoadOptions{Name: p, BaseDir: dir})
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 2 {
		t.Fatalf("err = %v, want two problems", err)
	}
	for i, want := range []string{
		`c.yaml:8: agents[0].backend.command_line_allowed_commands[1]: "(?!rm)" is not a regular expression massgen can use (Go's RE2 syntax; no lookarounds or backreferences)`,
		`c.yaml:9: agents[0].backend.command_line_blocked_commands[0]: empty pattern`,
	} {
		if !strings.Contains(ve.Problems[i].String(), want) {
			t.Errorf("problem %q, want %q", ve.Problems[i], want)
		}
	}
}

// A cwd that is an existing folder massgen did not make is refused, saying why and what to do;
// cwd_owned lets massgen own a user folder, never one holding massgen's own state.
func TestExistingCwdRefused(t *testing.T) {
	base := t.TempDir()
	write(t, base, "src/main.go", "package main")
	write(t, base, ".massgen/workspaces/old/notes.txt", "from an earlier run")
	write(t, base, ".massgen/snapshots/a/x.txt", "x")
	user := t.TempDir()
	link := filepath.Join(base, ".massgen", "workspaces", "link")
	if err := os.Symlink(user, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cwd string
		owned     bool
		want      string // "" = accepted
	}{
		{"a new folder", filepath.Join(user, "new"), false, ""},
		{"a relative new folder", "w1", false, ""},
		{"an existing folder under .massgen/workspaces", "old", false, ""},
		{"an existing user folder", user, false, "is an existing folder outside .massgen/workspaces/"},
		{"an existing user folder, owned", user, true, ""},
		{"the project folder", base, false, "holds massgen's own state"},
		{"the project folder, owned", base, true, "holds massgen's own state"},
		{"a source folder of the project", filepath.Join(base, "src"), false, "cwd_owned: true"},
		{"massgen's snapshots", ".massgen/snapshots", true, "one of massgen's own folders"},
		{"a symlink under workspaces to a user folder", "link", false, "(" + user + ") is an existing folder outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := load(t, base, fmt.Sprintf("agents:\n  - id: a\n    backend: {type: openai, cwd_owned: %v, cwd: %q}\n", tt.owned, tt.cwd), nil)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "config.yaml:3: agents[0].backend.cwd: ")):
				t.Errorf("Load = %v, want a config.yaml:3 problem containing %q", err, tt.want)
			}
		})
	}
}

func TestUnsupportedBackendOptionsAreWarned(t *testing.T) {
	tests := []struct {
		name, backend string
		want          []string
	}{
		{"docker execution", "      command_line_execution_mode: docker\n",
			[]string{`config.yaml:5: warning: agents[0].backend.command_line_execution_mode: ignored: commands run in the kernel sandbox (landlock or bubblewrap), never in docker`}},
		{"local execution is what massgen does", "      command_line_execution_mode: local\n", nil},
		{"blocked commands are rules", "      command_line_blocked_commands: [\"python.*\"]\n", nil},
		{"provider options stay silent", "      temperature: 0.2\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, warnings := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n    backend:\n      type: openai\n"+tc.backend, nil)
			var got []string
			for _, w := range warnings {
				got = append(got, w.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// debug_final_answer takes a text, or a boolean as MassGen does: false is no override, true the
// text MassGen would format (True).
func TestDebugFinalAnswerForms(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{"\"John Lennon was born in 1940\"", "John Lennon was born in 1940"},
		{"|\n    two\n    lines\n", "two\nlines\n"},
		{"false", ""},
		{"true", "True"},
	} {
		cfg, _ := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  debug_final_answer: "+tt.value+"\n", nil)
		if got := string(cfg.Orchestrator.DebugFinalAnswer); got != tt.want {
			t.Errorf("debug_final_answer: %s = %q, want %q", tt.value, got, tt.want)
		}
	}
}

// Agents naming the same workspace each get a folder of their own (MassGen gives each its own
// copy), and configs show --resolved says so on each one's cwd line.
func TestSharedWorkspaceNames(t *testing.T) {
	base := t.TempDir()
	abs := filepath.Join(t.TempDir(), "shared")
	ws := filepath.Join(base, ".massgen", "workspaces")
	cfg, warnings := mustLoad(t, base, `agents:
  - id: agent_a
    backend: {type: openai, cwd: workspace}
  - id: agent_b
    backend: {type: openai, cwd: .massgen/workspaces/workspace}
  - id: agent_c
    backend: {type: openai, cwd: workspace}
  - id: solo
    backend: {type: openai, cwd: own}
  - id: x
    backend: {type: openai, cwd: "`+abs+`"}
  - id: "y"
    backend: {type: openai, cwd: "`+abs+`"}
`, nil)
	want := []string{
		filepath.Join(ws, "workspace_agent_a"), filepath.Join(ws, "workspace_agent_b"), filepath.Join(ws, "workspace_agent_c"),
		filepath.Join(ws, "own"), abs + "_x", abs + "_y",
	}
	for i, w := range want {
		if got := cfg.Agents[i].Backend.CWD; got != w {
			t.Errorf("agent %s: cwd %s, want %s", cfg.Agents[i].ID, got, w)
		}
	}
	if cfg.SharedWorkspaceNote(3) != "" || !strings.Contains(cfg.SharedWorkspaceNote(0), "agents agent_a, agent_b, agent_c all name "+filepath.Join(ws, "workspace")) {
		t.Errorf("notes %q, %q", cfg.SharedWorkspaceNote(0), cfg.SharedWorkspaceNote(3))
	}
	out, err := cfg.ResolvedYAML()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "each has its own folder, as in MassGen"); n != 5 {
		t.Errorf("%d cwd lines say so, want 5:\n%s", n, out)
	}
	if !strings.Contains(string(out), "cwd: "+filepath.Join(ws, "workspace_agent_b")+" # agents agent_a, agent_b, agent_c all name") {
		t.Errorf("resolved config:\n%s", out)
	}
	for _, w := range warnings {
		if strings.Contains(w.Message, "cwd") {
			t.Errorf("warning %v", w)
		}
	}
}

// Coding-agent CLIs massgen does not drive are refused with the ones it does drive.
func TestUndrivenCLIAgentsRefused(t *testing.T) {
	var drives []string
	for _, bt := range BackendTypes() {
		if bt.Status == Implemented && bt.Program != "" {
			drives = append(drives, bt.Name)
		}
	}
	if !slices.Contains(drives, "claude_code") {
		t.Fatalf("drives %v", drives)
	}
	for _, typ := range []string{"copilot", "antigravity_cli"} {
		_, _, err := load(t, t.TempDir(), "agents:\n  - id: a\n    backend:\n      type: "+typ+"\n      model: m\n", nil)
		ps := problems(t, err)
		want := "config.yaml:4: agents[0].backend.type: " + typ + ": refused: massgen does not drive "
		if len(ps) != 1 || !strings.HasPrefix(ps[0].String(), want) ||
			!strings.Contains(ps[0].Message, "Coding-agent CLIs massgen drives, with its own tools turned off: "+strings.Join(drives, ", ")+";") {
			t.Errorf("%s: problems %v", typ, ps)
		}
	}
}

// MassGen's checklist_gated voting and its options load, without warnings.
func TestChecklistGatedLoads(t *testing.T) {
	cfg, warnings := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n    backend: {type: openai}\norchestrator:\n  voting_sensitivity: checklist_gated\n  voting_threshold: 3\n  max_checklist_calls_per_round: 2\n  checklist_first_answer: true\n  checklist_require_gap_report: false\n", nil)
	o := cfg.Orchestrator
	if o.VotingSensitivity != vocab.ChecklistGated || o.VotingThreshold != 3 || o.MaxChecklistCallsPerRound != 2 || !o.ChecklistFirstAnswer || len(warnings) != 0 {
		t.Errorf("orchestrator %+v, warnings %v", o, warnings)
	}
}
