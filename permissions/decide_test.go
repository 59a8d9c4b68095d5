package permissions

import (
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	tr := newTree(t)
	tr.link(t, "/etc", "ws/etc_link")
	tr.link(t, tr.p("project/golden/test1.json"), "ws/prot_link")
	tr.link(t, tr.p("project/golden"), "ws/prot_dir_link")
	tests := []struct {
		name  string
		role  Role
		mod   func(*Spec)
		tool  string
		args  map[string]any
		allow bool
		ask   bool
		rule  Rule
	}{
		{"read own file", Coordination, nil, "read_file", map[string]any{"path": "a.txt"}, true, false, "workspace"},
		{"every listed path counts", Coordination, nil, "read_multiple_files", map[string]any{"paths": []any{"a.txt", tr.p("files/secrets.yaml")}}, false, false, "file-context-sibling"},
		{"compare_files second file counts", Coordination, nil, "compare_files", map[string]any{"file1": "a.txt", "file2": "/etc/passwd"}, false, false, "outside-managed-paths"},
		{"copy_file source counts", Final, nil, "copy_file", map[string]any{"source_path": tr.p("files/secrets.yaml"), "destination_path": "x"}, false, false, "file-context-sibling"},
		{"copy_file into context (final)", Final, nil, "copy_file", map[string]any{"source_path": "a.txt", "destination_path": tr.p("project/src/a.txt")}, true, false, "context-path"},
		{"copy_file into context (coordination)", Coordination, nil, "copy_file", map[string]any{"source_path": "a.txt", "destination_path": tr.p("project/src/a.txt")}, false, false, "read-only-context-path"},
		{"move_file source is written", Final, nil, "move_file", map[string]any{"source": tr.p("temp/agent1/answer.txt"), "destination": "x"}, false, false, "read-only-temp-workspace"},
		{"delete protected", Final, nil, "delete_file", map[string]any{"path": tr.p("project/golden/test1.json")}, false, false, "protected-path"},
		{"delete workspace root", Final, nil, "delete_file", map[string]any{"path": tr.p("ws"), "recursive": true}, false, false, "managed-root"},
		{"deleting a link removes the link, not its target", Final, nil, "delete_file", map[string]any{"path": "prot_link"}, true, false, "workspace"},
		{"rm of a link removes the link", Final, nil, "execute_command", map[string]any{"command": "rm prot_link"}, true, false, "workspace"},
		{"rm -r link/ follows the link", Final, nil, "execute_command", map[string]any{"command": "rm -r prot_dir_link/"}, false, false, "protected-path"},
		{"moving a link moves the link", Final, nil, "move_file", map[string]any{"source": "prot_link", "destination": "moved_link"}, true, false, "workspace"},
		{"writing through a link writes the target", Final, nil, "write_file", map[string]any{"path": "prot_link", "content": "x"}, false, false, "protected-path"},
		{"delete workspace file", Final, nil, "delete_file", map[string]any{"path": "a.txt"}, true, false, "workspace"},
		{"delete read-only context file", Coordination, nil, "delete_file", map[string]any{"path": tr.p("project/src/main.go")}, false, false, "read-only-context-path"},
		{"delete dir holding protected", Final, nil, "delete_file", map[string]any{"path": tr.p("project/golden/..")}, false, false, "managed-root"},
		{"delete dir holding protected (not a root)", Final, func(s *Spec) { s.ContextPaths[0].Protected = []string{tr.p("project/src/main.go")} }, "delete_file", map[string]any{"path": tr.p("project/src"), "recursive": true}, false, false, "contains-read-only"},
		{"rm -r of dir holding protected", Final, func(s *Spec) { s.ContextPaths[0].Protected = []string{tr.p("project/src/main.go")} }, "execute_command", map[string]any{"command": "rm -r " + tr.p("project/src")}, false, false, "contains-read-only"},
		{"rm -r glob reaching a dir holding protected", Final, func(s *Spec) { s.ContextPaths[0].Protected = []string{tr.p("project/src/main.go")} }, "execute_command", map[string]any{"command": "rm -r " + tr.p("project") + "/s*"}, false, false, "contains-read-only"},
		{"rm glob over links removes the links", Final, nil, "execute_command", map[string]any{"command": "rm prot_*"}, true, false, "workspace"},
		{"batch delete base is checked per file by the tool", Final, nil, "delete_files_batch", map[string]any{"base_path": tr.p("project")}, true, false, "context-path"},
		{"copy into the context root (delivery)", Final, nil, "copy_files_batch", map[string]any{"source_base_path": "", "destination_base_path": tr.p("project")}, true, false, "context-path"},
		{"cp -r into the context root (delivery)", Final, nil, "execute_command", map[string]any{"command": "cp -r out/. " + tr.p("project")}, true, false, "context-path"},
		{"edit dry run on read-only path", Coordination, nil, "edit_file", map[string]any{"path": tr.p("project/src/main.go"), "dryRun": true}, true, false, "context-path"},
		{"edit on read-only path", Coordination, nil, "edit_file", map[string]any{"path": tr.p("project/src/main.go")}, false, false, "read-only-context-path"},
		{"mcp-prefixed write tool", Coordination, nil, "mcp__filesystem__write_file", map[string]any{"path": tr.p("project/x")}, false, false, "read-only-context-path"},
		{"native Write into protected", Final, nil, "Write", map[string]any{"file_path": tr.p("project/expected_output.txt"), "content": "x"}, false, false, "protected-path"},
		{"unknown tool: path by value", Coordination, nil, "mcp__x__inspect_resource", map[string]any{"where": "/etc/shadow"}, false, false, "outside-managed-paths"},
		{"file tool without path", Coordination, nil, "mcp__x__read_file_contents", map[string]any{"name": "x"}, false, false, "cannot-determine-path"},
		{"workflow tool", Coordination, nil, "new_answer", map[string]any{"content": "/etc/passwd"}, true, false, "workflow-tool"},
		// Commands.
		{"command in workspace", Coordination, nil, "execute_command", map[string]any{"command": "echo hi > out.txt"}, true, false, "workspace"},
		{"command reads outside", Coordination, nil, "execute_command", map[string]any{"command": "cat /etc/passwd"}, false, false, "outside-managed-paths"},
		{"command writes context (coordination)", Coordination, nil, "execute_command", map[string]any{"command": "cp a.txt " + tr.p("project/a.txt")}, false, false, "read-only-context-path"},
		{"command work_dir must be readable", Coordination, nil, "execute_command", map[string]any{"command": "ls", "work_dir": "/etc"}, false, false, "outside-managed-paths"},
		{"command relative word under work_dir", Coordination, nil, "execute_command", map[string]any{"command": "cat secrets.yaml", "work_dir": tr.p("files")}, false, false, "file-context-sibling"},
		{"command through symlink", Coordination, nil, "execute_command", map[string]any{"command": "cat etc_link/passwd"}, false, false, "outside-managed-paths"},
		{"dangerous command", Final, nil, "execute_command", map[string]any{"command": "sudo ls"}, false, false, "dangerous-command"},
		{"Bash native tool", Coordination, nil, "Bash", map[string]any{"command": "rm -rf " + tr.p("project")}, false, false, "read-only-context-path"},
		{"mcp-prefixed command keeps checks", Coordination, nil, "mcp__x__execute_command", map[string]any{"command": "chmod 777 a"}, false, false, "dangerous-command"},
		{"expansion allowed when sandboxed", Coordination, func(s *Spec) { s.Sandboxed = true }, "execute_command", map[string]any{"command": "echo $HOME"}, true, false, "workspace"},
		{"expansion refused without sandbox", Coordination, nil, "execute_command", map[string]any{"command": "echo $HOME"}, false, false, "command-expansion"},
		{"backticks refused without sandbox", Coordination, nil, "execute_command", map[string]any{"command": "echo `id`"}, false, false, "command-expansion"},
		{"glob matches are checked", Coordination, nil, "execute_command", map[string]any{"command": "cat ./*"}, false, false, "outside-managed-paths"},
		{"glob on file-context parent", Coordination, nil, "execute_command", map[string]any{"command": "cat " + tr.p("files") + "/*"}, false, false, "file-context-sibling"},
		// Modes and rules.
		{"deny rule on command", Coordination, func(s *Spec) { s.Deny = []string{"execute_command(rm *)"} }, "execute_command", map[string]any{"command": "rm a.txt"}, false, false, "deny-rule"},
		{"deny rule on path", Final, func(s *Spec) { s.Deny = []string{"write_file(src/**)"} }, "write_file", map[string]any{"path": tr.p("project/src/x.go")}, false, false, "deny-rule"},
		{"deny rule by tool", Final, func(s *Spec) { s.Deny = []string{"mcp__github__*"} }, "mcp__github__create_issue", map[string]any{}, false, false, "deny-rule"},
		{"deny wins over allow", Final, func(s *Spec) { s.Allow = []string{"execute_command"}; s.Deny = []string{"execute_command(git push*)"} }, "execute_command", map[string]any{"command": "git push origin"}, false, false, "deny-rule"},
		{"default mode asks for commands", Coordination, func(s *Spec) { s.Mode = ModeDefault }, "execute_command", map[string]any{"command": "npm test"}, false, true, "ask"},
		{"default mode: allow rule skips the ask", Coordination, func(s *Spec) { s.Mode = ModeDefault; s.Allow = []string{"execute_command(npm test*)"} }, "execute_command", map[string]any{"command": "npm test -- --watch"}, true, false, "allow-rule"},
		{"default mode: allow rule does not cover other commands", Coordination, func(s *Spec) { s.Mode = ModeDefault; s.Allow = []string{"execute_command(npm test*)"} }, "execute_command", map[string]any{"command": "npm publish"}, false, true, "ask"},
		{"default mode asks final writes to context", Final, func(s *Spec) { s.Mode = ModeDefault }, "write_file", map[string]any{"path": tr.p("project/src/x.go")}, false, true, "ask"},
		{"default mode: workspace writes need no ask", Final, func(s *Spec) { s.Mode = ModeDefault }, "write_file", map[string]any{"path": "x.go"}, true, false, "workspace"},
		{"default mode: allow rule on path", Final, func(s *Spec) { s.Mode = ModeDefault; s.Allow = []string{"write_file(src/**)"} }, "write_file", map[string]any{"path": tr.p("project/src/x.go")}, true, false, "allow-rule"},
		{"default mode: denied paths are not asked", Final, func(s *Spec) { s.Mode = ModeDefault }, "write_file", map[string]any{"path": tr.p("project/.env")}, false, false, "default-excluded"},
		{"acceptEdits: no ask", Final, nil, "write_file", map[string]any{"path": tr.p("project/src/x.go")}, true, false, "context-path"},
		{"bypass skips deny rules", Final, func(s *Spec) { s.Mode = ModeBypass; s.Deny = []string{"write_file"} }, "write_file", map[string]any{"path": "x"}, true, false, "workspace"},
		{"bypass keeps protected paths", Final, func(s *Spec) { s.Mode = ModeBypass }, "write_file", map[string]any{"path": tr.p("project/golden/x")}, false, false, "protected-path"},
		{"bypass keeps boundaries", Final, func(s *Spec) { s.Mode = ModeBypass }, "read_file", map[string]any{"path": "/etc/passwd"}, false, false, "outside-managed-paths"},
		{"bypass keeps exclusions", Final, func(s *Spec) { s.Mode = ModeBypass }, "write_file", map[string]any{"path": tr.p("project/.git/config")}, false, false, "default-excluded"},
		{"bypass keeps dangerous commands", Final, func(s *Spec) { s.Mode = ModeBypass }, "execute_command", map[string]any{"command": "sudo ls"}, false, false, "dangerous-command"},
		{"explicit allow lets a pathless look-alike through", Coordination, func(s *Spec) { s.Allow = []string{"mcp__notes__write_note"} }, "mcp__notes__write_note", map[string]any{"title": "t"}, true, false, "allow-rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tr.spec(tt.role)
			if tt.mod != nil {
				tt.mod(&s)
			}
			d := mustPolicy(t, s).Decide(Request{Tool: tt.tool, Args: tt.args})
			if d.Allow != tt.allow || d.Ask != tt.ask || d.Rule != tt.rule {
				t.Fatalf("Decide = allow %v ask %v rule %q (%s); want allow %v ask %v rule %q", d.Allow, d.Ask, d.Rule, d.Reason, tt.allow, tt.ask, tt.rule)
			}
			if !d.Allow && !d.Ask && d.Reason == "" {
				t.Fatal("deny without a reason")
			}
		})
	}
}

func TestDecideReasonNamesArgument(t *testing.T) {
	tr := newTree(t)
	p := mustPolicy(t, tr.spec(Coordination))
	d := p.Decide(Request{Tool: "read_multiple_files", Args: map[string]any{"paths": []any{"a.txt", "/etc/passwd"}}})
	if !strings.Contains(d.Reason, "/etc/passwd") || !strings.Contains(d.Reason, "paths[1]") {
		t.Errorf("reason %q does not name the path and argument", d.Reason)
	}
}
