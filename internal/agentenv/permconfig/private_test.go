package permconfig_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/agentenv/permconfig"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// readmeLayout is the README's layout: the project is a writable context path (`--context .`)
// and .massgen/ lies inside it, with the records a few runs and a session leave behind.
type readmeLayout struct {
	proj, ms, ws, temp, prev string
	cfg                      *configs.Config
}

func newReadmeLayout(t *testing.T) readmeLayout {
	t.Helper()
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(proj, "xdg")) // the store inside the context path
	ms := filepath.Join(proj, ".massgen")
	files := map[string]string{
		"index.html": "<h1>hi</h1>",
		".massgen/logs/log_20260101_000000/massgen.log":                        `{"agent":"alpha_real"}`,
		".massgen/logs/log_20260101_000000/permissions.jsonl":                  `{"agent":"alpha_real"}`,
		".massgen/sessions/session_20260101_000000/SESSION_SUMMARY.txt":        "Winner: alpha_real",
		".massgen/sessions/session_20260101_000000/turn_1/metadata.json":       `{"winner":"alpha_real","votes":{"beta_real":"alpha_real"}}`,
		".massgen/sessions/session_20260101_000000/turn_1/answer.txt":          "answer",
		".massgen/sessions/session_20260101_000000/turn_1/workspace/report.md": "previous turn's work",
		".massgen/trash/log_20260101_000000/1/meta.json":                       `{"agent":"beta_real"}`,
		".massgen/snapshots/beta_real/draft.md":                                "beta's snapshot",
		".massgen/temp_workspaces/alpha_real/agent2/draft.md":                  "anonymised copy",
		".massgen/temp_workspaces/beta_real/agent1/x.md":                       "beta's view",
		".massgen/workspaces/workspace1/own.txt":                               "mine",
		".massgen/workspaces/workspace2/theirs.txt":                            "beta's live work",
		".massgen/permissions.yaml":                                            "agents:\n  beta_real:\n    deny: [Bash]\n",
		"xdg/massgen/trust.json":                                               `{"version":1,"files":{}}`,
		".env":                                                                 "OPENAI_API_KEY=sk-project-level\n",
		".massgen/.env":                                                        "GEMINI_API_KEY=sk-user-level\n",
		"xdg/massgen/.env":                                                     "ANTHROPIC_API_KEY=sk-config-level\n",
	}
	for rel, body := range files {
		p := filepath.Join(proj, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	yaml := "agents:\n" +
		"  - id: alpha_real\n    backend: {type: scripted, cwd: workspace1, script: [{text: hi}]}\n" +
		"  - id: beta_real\n    backend: {type: scripted, cwd: workspace2, script: [{text: hi}]}\n" +
		"orchestrator:\n  context_paths:\n    - {path: ., permission: write}\n"
	if err := os.WriteFile(filepath.Join(proj, "cfg.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(proj, "xdg"), true
		}
		return "", false
	}
	cfg, _, err := configs.Load(configs.LoadOptions{Name: "cfg.yaml", BaseDir: proj, Home: proj, LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.EnvFilesLoaded) != 3 {
		t.Fatalf("loaded .env files: %q, want the three", cfg.EnvFilesLoaded)
	}
	return readmeLayout{proj: proj, ms: ms, cfg: cfg,
		ws:   filepath.Join(ms, "workspaces", "workspace1"),
		temp: filepath.Join(ms, "temp_workspaces", "alpha_real"),
		prev: filepath.Join(ms, "sessions", "session_20260101_000000", "turn_1", "workspace"),
	}
}

// toolset builds alpha_real's tools as a run does (its temp workspace, the previous turn's
// workspace read-only).
func (l readmeLayout) toolset(t *testing.T, role permissions.Role) (*permissions.Policy, *filesystem.Toolset) {
	t.Helper()
	spec, err := permconfig.SpecFromConfig(l.cfg, "alpha_real", role, permconfig.SpecOptions{
		TempWorkspaces: []string{l.temp}, ReadOnly: []string{l.prev}, Home: l.proj})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := permissions.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := filesystem.NewToolset(filesystem.ToolsetOptions{Guard: guard.New(pol, guard.Options{}),
		TrashDir: filepath.Join(l.ms, "trash", "run")})
	if err != nil {
		t.Fatal(err)
	}
	return pol, ts
}

// deniedRule is the rule that refused a call ("" when it was not refused).
func deniedRule(r filesystem.Result) string {
	if r.Denied != nil {
		return string(r.Denied.Rule)
	}
	var c struct {
		Denied bool   `json:"denied"`
		Rule   string `json:"rule"`
	}
	if json.Unmarshal([]byte(r.Content), &c) == nil && c.Denied {
		return c.Rule
	}
	return ""
}

func call(t *testing.T, ts *filesystem.Toolset, tool string, args map[string]any) filesystem.Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	return ts.Call(context.Background(), tool, raw)
}

// With --context ., no agent reads, lists or writes massgen's own records: logs, session
// metadata and summaries, trash metadata, snapshot storage, other agents' workspaces and temp
// workspaces, the rule files, the approvals store, the .env files massgen loaded. They name real
// agents and votes (and the approvals store decides which hooks run); the .env files hold
// massgen's API keys.
func TestRecordsArePrivateInTheReadmeLayout(t *testing.T) {
	l := newReadmeLayout(t)
	records := map[string]string{
		"log":                     ".massgen/logs/log_20260101_000000/massgen.log",
		"audit log":               ".massgen/logs/log_20260101_000000/permissions.jsonl",
		"logs folder":             ".massgen/logs",
		"session summary":         ".massgen/sessions/session_20260101_000000/SESSION_SUMMARY.txt",
		"session metadata":        ".massgen/sessions/session_20260101_000000/turn_1/metadata.json",
		"sessions folder":         ".massgen/sessions",
		"trash metadata":          ".massgen/trash/log_20260101_000000/1/meta.json",
		"trash folder":            ".massgen/trash",
		"snapshot storage":        ".massgen/snapshots/beta_real/draft.md",
		"snapshots folder":        ".massgen/snapshots",
		"temp workspace root":     ".massgen/temp_workspaces",
		"other temp workspace":    ".massgen/temp_workspaces/beta_real/agent1/x.md",
		"other workspace":         ".massgen/workspaces/workspace2/theirs.txt",
		"project rules":           ".massgen/permissions.yaml",
		"run's config":            "cfg.yaml",
		"trust store":             "xdg/massgen/trust.json",
		"trust store folder":      "xdg/massgen",
		"new file in trust store": "xdg/massgen/planted.json",
		"project .env":            ".env",
		"user .env (~/.massgen)":  ".massgen/.env",
		"user .env (XDG)":         "xdg/massgen/.env",
	}
	for _, role := range []permissions.Role{permissions.Coordination, permissions.Final} {
		pol, ts := l.toolset(t, role)
		for name, rel := range records {
			p := filepath.Join(l.proj, rel)
			for _, a := range []permissions.Access{permissions.Read, permissions.Write} {
				if d := pol.CheckPath(p, a); d.Allow || d.Rule != "private-path" {
					t.Errorf("role %d: %s (%s) access %v: %+v", role, name, rel, a, d)
				}
			}
			tool := "read_file"
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				tool = "list_directory"
			}
			if r := call(t, ts, tool, map[string]any{"path": p}); !r.IsError || deniedRule(r) != "private-path" {
				t.Errorf("role %d: %s %s: %+v", role, tool, rel, r)
			}
			if w := call(t, ts, "write_file", map[string]any{"path": filepath.Join(p, "x"), "content": "x"}); !w.IsError || deniedRule(w) != "private-path" {
				t.Errorf("role %d: write under %s: %+v", role, rel, w)
			}
		}
	}
	if data, _ := os.ReadFile(filepath.Join(l.proj, "xdg/massgen/trust.json")); string(data) != `{"version":1,"files":{}}` {
		t.Errorf("trust store changed: %s", data)
	}
}

// What the agent may use stays usable: its own workspace and temp workspace (inside .massgen/),
// the previous turn's workspace (inside .massgen/sessions/), the project itself.
func TestOwnPlacesStayUsableInTheReadmeLayout(t *testing.T) {
	l := newReadmeLayout(t)
	pol, ts := l.toolset(t, permissions.Final)
	for _, c := range []struct {
		path  string
		write bool
	}{
		{filepath.Join(l.ws, "own.txt"), true},
		{filepath.Join(l.temp, "agent2", "draft.md"), false},
		{filepath.Join(l.prev, "report.md"), false},
		{filepath.Join(l.proj, "index.html"), true},
	} {
		if d := pol.CheckPath(c.path, permissions.Read); !d.Allow {
			t.Errorf("read %s: %s", c.path, d.Reason)
		}
		if d := pol.CheckPath(c.path, permissions.Write); d.Allow != c.write {
			t.Errorf("write %s: allow=%v, want %v (%s)", c.path, d.Allow, c.write, d.Reason)
		}
		if r := call(t, ts, "read_file", map[string]any{"path": c.path}); r.IsError {
			t.Errorf("read_file %s: %s", c.path, r.Content)
		}
	}
	for dir, want := range map[string]string{l.ws: "own.txt", filepath.Join(l.temp, "agent2"): "draft.md", l.prev: "report.md", l.proj: "index.html"} {
		r := call(t, ts, "list_directory", map[string]any{"path": dir})
		if r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("list_directory %s: %+v", dir, r)
		}
	}
	if r := call(t, ts, "write_file", map[string]any{"path": filepath.Join(l.ws, "new.txt"), "content": "x"}); r.IsError {
		t.Errorf("write in own workspace: %s", r.Content)
	}
	// Listing the project shows .massgen as a name only; nothing inside it leaks.
	r := call(t, ts, "list_directory", map[string]any{"path": l.proj})
	if strings.Contains(r.Content, "alpha_real") || strings.Contains(r.Content, "beta_real") {
		t.Errorf("project listing leaks a real id: %s", r.Content)
	}
	r = call(t, ts, "directory_tree", map[string]any{"path": l.proj})
	if strings.Contains(r.Content, "alpha_real") || strings.Contains(r.Content, "beta_real") || strings.Contains(r.Content, "metadata.json") {
		t.Errorf("project tree leaks massgen's records: %s", r.Content)
	}
	if r := call(t, ts, "search_files", map[string]any{"path": l.proj, "pattern": "*real*"}); strings.Contains(r.Content, "_real") {
		t.Errorf("search leaks massgen's records: %s", r.Content)
	}
}
