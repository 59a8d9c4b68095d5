package permissions

import (
	"strings"
	"testing"
)

// A rule may name tools by class: @read, @write and @command match the tools whose declaration
// reads a path, writes or deletes one, or runs commands (a copy is read and write), with the
// same argument matching as a rule naming the tool.
func TestRuleToolClasses(t *testing.T) {
	tr := newTree(t)
	tests := []struct {
		name string
		deny string
		tool string
		args map[string]any
		hit  bool
	}{
		{"@read names read_file", "@read(**/secret*)", "read_file", map[string]any{"path": "secret.txt"}, true},
		{"@read only on its paths", "@read(**/secret*)", "read_file", map[string]any{"path": "a.txt"}, false},
		{"@read names a copy's source", "@read(**/secret*)", "copy_file", map[string]any{"source_path": "secret.txt", "destination_path": "x"}, true},
		{"@read names edit_file (dry run shows the file)", "@read(**/secret*)", "edit_file", map[string]any{"path": "secret.txt", "edits": []any{}, "dryRun": true}, true},
		{"@read does not name delete_file", "@read(**/secret*)", "delete_file", map[string]any{"path": "secret.txt"}, false},
		{"@read does not name commands", "@read", "execute_command", map[string]any{"command": "cat a.txt"}, false},
		{"@write names write_file", "@write(**/.env)", "write_file", map[string]any{"path": ".env", "content": "x"}, true},
		{"@write names delete_file", "@write", "delete_file", map[string]any{"path": "a.txt"}, true},
		{"@write names move_file", "@write", "move_file", map[string]any{"source": "a.txt", "destination": "b.txt"}, true},
		{"@write names a copy", "@write", "copy_file", map[string]any{"source_path": "a.txt", "destination_path": "b.txt"}, true},
		{"@write does not name read_file", "@write", "read_file", map[string]any{"path": "a.txt"}, false},
		{"@write names a declared tool behind an MCP prefix", "@write", "mcp__fs__write_file", map[string]any{"path": "a.txt", "content": "x"}, true},
		{"@write does not name an undeclared tool", "@write", "mcp__x__frobnicate", map[string]any{"path": "a.txt"}, false},
		{"@command names execute_command", "@command(git push*)", "execute_command", map[string]any{"command": "git push --force"}, true},
		{"@command matches the command line", "@command(git push*)", "execute_command", map[string]any{"command": "git status"}, false},
		{"@command takes regular expressions", "@command(re:rm)", "execute_command", map[string]any{"command": "ls && rm a.txt"}, true},
		{"@command names another runtime's shell tool", "@command", "bash", map[string]any{"command": "ls"}, true},
		{"@command does not name write_file", "@command", "write_file", map[string]any{"path": "a.txt", "content": "x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tr.spec(Final)
			s.Deny = []string{tt.deny}
			s.Sandboxed = true
			d := mustPolicy(t, s).Decide(Request{Tool: tt.tool, Args: tt.args})
			if hit := d.Rule == RuleDenyRule; hit != tt.hit {
				t.Errorf("%s on %s %v: %s (%s); want denied by the rule: %v", tt.deny, tt.tool, tt.args, d.Rule, d.Reason, tt.hit)
			}
		})
	}
}

func TestRuleToolClassUnknown(t *testing.T) {
	err := ValidateRules([]string{"@delete(x)"}, testTools)
	if err == nil || !strings.Contains(err.Error(), "unknown tool class @delete") || !strings.Contains(err.Error(), "@read, @write, @command") {
		t.Fatalf("err = %v", err)
	}
}
