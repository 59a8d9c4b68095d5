package permconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/trust"
)

func testConfig(tr *tree) *configs.Config {
	return &configs.Config{
		BaseDir: tr.root,
		Agents: []configs.Agent{
			{ID: "agent_a", Backend: configs.Backend{Type: "openai", CWD: tr.p("ws")},
				Permissions: &configs.Permissions{Mode: "default", Allow: []string{"execute_command(npm test*)"}}},
			{ID: "agent_b", Backend: configs.Backend{Type: "openai", CWD: tr.p("other_ws")},
				ReadPaths: []string{tr.p("project/docs")}, WritePaths: []string{tr.p("ws")}},
		},
		Orchestrator: configs.Orchestrator{
			SnapshotStorage:         tr.p("snapshots"),
			AgentTemporaryWorkspace: tr.p("temp"),
			ContextPaths: []configs.ContextPath{
				{Path: tr.p("project"), Permission: "write", ProtectedPaths: []string{tr.p("project/golden")}},
				{Path: tr.p("files/config.yaml"), Permission: "read"},
			},
		},
		Permissions: configs.Permissions{Deny: []string{"execute_command(git push*)"}},
	}
}

func TestSpecFromConfig(t *testing.T) {
	tr := newTree(t)
	t.Setenv("XDG_CONFIG_HOME", tr.p("xdg"))
	cfg := testConfig(tr)
	s, err := SpecFromConfig(cfg, "agent_a", permissions.Final, SpecOptions{Home: tr.p("outside"), ProjectRules: &configs.Permissions{Deny: []string{"Bash"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Workspace != tr.p("ws") || s.Mode != permissions.ModeDefault || s.Role != permissions.Final || s.Agent != "agent_a" {
		t.Errorf("spec %+v", s)
	}
	if len(s.TempWorkspaces) != 1 || s.TempWorkspaces[0] != tr.p("temp/agent_a") {
		t.Errorf("temp workspaces %v", s.TempWorkspaces)
	}
	if len(s.ContextPaths) != 2 || !s.ContextPaths[0].Write || s.ContextPaths[1].Write || s.ContextPaths[0].Protected[0] != tr.p("project/golden") {
		t.Errorf("context paths %+v", s.ContextPaths)
	}
	if strings.Join(s.Deny, ",") != "execute_command(git push*),Bash" || strings.Join(s.Allow, ",") != "execute_command(npm test*)" {
		t.Errorf("rules allow %v deny %v", s.Allow, s.Deny)
	}
	if strings.Join(s.Private, ",") != tr.p("other_ws")+","+tr.p(".massgen/logs")+","+tr.p(".massgen/sessions")+","+tr.p(".massgen/trash")+","+
		tr.p("snapshots")+","+tr.p("temp")+","+tr.p(".massgen/permissions.yaml")+","+tr.p("xdg/massgen") {
		t.Errorf("private %v", s.Private)
	}
	p := mustPolicy(t, s)
	if d := p.CheckPath(tr.p("other_ws/x.txt"), permissions.Read); d.Allow {
		t.Error("agent_a reads agent_b's workspace")
	}
	// Temp workspaces: its own folder only; the root's listing and the other agents' folders
	// (named by real ids) are private.
	for path, want := range map[string]bool{
		tr.p("temp/agent_a"): true, tr.p("temp/agent_a/agent2/x.txt"): true,
		tr.p("temp"): false, tr.p("temp/agent_b"): false, tr.p("temp/agent_b/agent1/x.txt"): false, tr.p("temp/agent1"): false,
	} {
		if d := p.CheckPath(path, permissions.Read); d.Allow != want {
			t.Errorf("read %s: allow=%v, want %v (%s)", path, d.Allow, want, d.Reason)
		}
	}
	// agent_b: folder guard from the config, acceptEdits from the global default.
	sb, err := SpecFromConfig(cfg, "agent_b", permissions.Coordination, SpecOptions{TempWorkspaces: []string{tr.p("temp/agent1")}})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Mode != permissions.ModeAcceptEdits || len(sb.ReadPaths) != 1 || sb.TempWorkspaces[0] != tr.p("temp/agent1") {
		t.Errorf("agent_b spec %+v", sb)
	}
	// As the orchestrator calls it: TempWorkspaces = [<root>/<agentID>], under the config's root.
	so, err := SpecFromConfig(cfg, "agent_a", permissions.Coordination, SpecOptions{TempWorkspaces: []string{tr.p("temp/agent_a")}})
	if err != nil {
		t.Fatal(err)
	}
	po := mustPolicy(t, so)
	if d := po.CheckPath(tr.p("temp/agent_a/agent2"), permissions.Read); !d.Allow {
		t.Errorf("agent_a reads its own temp workspace: %s", d.Reason)
	}
	for _, path := range []string{tr.p("temp"), tr.p("temp/agent_b"), tr.p("temp/agent_b/agent1")} {
		if d := po.CheckPath(path, permissions.Read); d.Allow || d.Rule != "private-path" {
			t.Errorf("agent_a reads %s: %+v", path, d)
		}
	}
	// A spec given the whole root on purpose keeps it.
	sr, err := SpecFromConfig(cfg, "agent_a", permissions.Coordination, SpecOptions{TempWorkspaces: []string{tr.p("temp")}})
	if err != nil {
		t.Fatal(err)
	}
	if d := mustPolicy(t, sr).CheckPath(tr.p("temp/agent1"), permissions.Read); !d.Allow {
		t.Errorf("whole temp root given: %s", d.Reason)
	}
	// Errors name what is wrong.
	if _, err := SpecFromConfig(cfg, "nobody", permissions.Final, SpecOptions{}); err == nil || !strings.Contains(err.Error(), "agent_a, agent_b") {
		t.Errorf("unknown agent error %v", err)
	}
	// Words outside their vocabulary are refused as the config is decoded (configs'
	// TestVocabularies); a config built in code with one fails closed: a permission other than
	// write is read, and the engine refuses a mode it does not know.
	bad := testConfig(tr)
	bad.Orchestrator.ContextPaths[0].Permission = "rw"
	if s, err := SpecFromConfig(bad, "agent_a", permissions.Final, SpecOptions{}); err != nil || s.ContextPaths[0].Write {
		t.Errorf("permission rw: %v, %+v", err, s.ContextPaths)
	}
	bad = testConfig(tr)
	bad.Permissions.Mode = "yolo"
	bad.Agents[0].Permissions = nil
	s, err = SpecFromConfig(bad, "agent_a", permissions.Final, SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := permissions.New(s); err == nil || !strings.Contains(err.Error(), `unknown mode "yolo" (known: acceptEdits, default, bypassPermissions)`) {
		t.Errorf("mode yolo: %v", err)
	}
	hooks := HooksFor(&configs.Config{Permissions: configs.Permissions{Hooks: configs.Hooks{PreToolUse: []configs.Hook{{Command: "a"}}}},
		Agents: []configs.Agent{{ID: "x", Permissions: &configs.Permissions{Hooks: configs.Hooks{PreToolUse: []configs.Hook{{Command: "b"}}}}}}},
		"x", &configs.Permissions{Hooks: configs.Hooks{PostToolUse: []configs.Hook{{Command: "c"}}}})
	if len(hooks.PreToolUse) != 2 || len(hooks.PostToolUse) != 1 {
		t.Errorf("HooksFor = %+v", hooks)
	}
}

func TestLoadProjectRules(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if p, err := LoadProjectRules(dir, filesystem.Table()); p != nil || err != nil {
		t.Fatalf("missing file: %v %v", p, err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "check.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Every content written here is approved, as `massgen permissions trust` would.
	write := func(s string) {
		path := filepath.Join(dir, "permissions.yaml")
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := trust.Default()
		if err != nil {
			t.Fatal(err)
		}
		var progs map[string]string
		if pr, err := ParseProjectFile(path, []byte(s), filesystem.Table()); err == nil { // a bad file is approved as it is
			if progs, err = HookPrograms(pr.AllHooks(), filepath.Dir(dir), os.Environ()); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Approve(path, []byte(s), progs, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	write("mode: default\nallow:\n  - execute_command(npm test*)\ndeny:\n  - write_file(secrets/**)\nhooks:\n  pre_tool_use:\n    - command: ./check.sh\n")
	p, err := LoadProjectRules(dir, filesystem.Table())
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != "default" || len(p.Allow) != 1 || len(p.Deny) != 1 || len(p.Hooks.PreToolUse) != 1 {
		t.Errorf("rules %+v", p)
	}
	for _, bad := range []string{"mode: yolo\n", "allw: [x]\n", "allow: ['execute_command(npm']\n"} {
		write(bad)
		if _, err := LoadProjectRules(dir, filesystem.Table()); err == nil || !strings.Contains(err.Error(), "permissions.yaml") {
			t.Errorf("%q: error %v does not name the file", bad, err)
		}
	}
	// A mode outside the vocabulary is named with its file, line and the modes known.
	write("deny: [Bash]\nagents:\n  agent_a:\n    mode: yolo\n")
	want := filepath.Join(dir, "permissions.yaml") + `:4: agents.agent_a.mode: unknown mode "yolo" (known: acceptEdits, default, bypassPermissions)`
	if _, err := LoadProjectRules(dir, filesystem.Table()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("agent mode yolo: error %v, want %q", err, want)
	}
	write("deny: [Bash]\nagents:\n  agent_a:\n    mode: bypassPermissions\n    allow: [write_file]\n  agent_b:\n    deny: [mcp__*]\n")
	pr, err := LoadProjectFile(dir, filesystem.Table())
	if err != nil {
		t.Fatal(err)
	}
	a := pr.For("agent_a")
	if a.Mode != "bypassPermissions" || strings.Join(a.Deny, ",") != "Bash" || strings.Join(a.Allow, ",") != "write_file" {
		t.Errorf("For(agent_a) = %+v", a)
	}
	if b := pr.For("agent_b"); b.Mode != "" || strings.Join(b.Deny, ",") != "Bash,mcp__*" {
		t.Errorf("For(agent_b) = %+v", b)
	}
	if len(pr.Deny) != 1 {
		t.Error("For changed the file's own lists")
	}
	write("agents:\n  x:\n    mode: yolo\n")
	if _, err := LoadProjectFile(dir, filesystem.Table()); err == nil || !strings.Contains(err.Error(), "agents.x") {
		t.Errorf("bad agent mode error %v", err)
	}
	write("")
	if p, err := LoadProjectRules(dir, filesystem.Table()); err != nil || p == nil {
		t.Errorf("empty file: %v %v", p, err)
	}
}
