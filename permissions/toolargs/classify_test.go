package toolargs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func fmtPaths(ps []PathArg) string {
	var b []string
	for _, p := range ps {
		b = append(b, fmt.Sprintf("%s=%s:%s", p.Arg, p.Path, p.Access))
	}
	return strings.Join(b, " ")
}

// TestClassify: a table's declaration is used as written; behind an MCP prefix undeclared
// arguments are scanned too; unknown tools are classified by name and arguments, deletions
// included; a file-looking tool without a path cannot be judged.
func TestClassify(t *testing.T) {
	table := NewTable(
		Tool{Name: "trash_it", Args: []Arg{{Name: "target", Access: Delete}}},
		Tool{Name: "run", Args: []Arg{{Name: "cwd", Optional: true}}, Command: true, Cancellable: true},
		Tool{Name: "patch", Args: []Arg{{Name: "file", Access: Write, ReadIf: "check"}}},
	)
	tests := []struct {
		tool string
		args map[string]any
		want string // fmtPaths, or "ERR"
		cmd  string
	}{
		{"trash_it", map[string]any{"target": "a"}, "target=a:delete", ""},
		{"trash_it", map[string]any{}, "ERR", ""},
		{"patch", map[string]any{"file": "f", "check": true}, "file=f:read", ""},
		{"patch", map[string]any{"file": "f"}, "file=f:write", ""},
		{"run", map[string]any{"command": "ls"}, DefaultWorkDirArg + "=:read", "ls"},
		{"run", map[string]any{"command": "ls", "cwd": "/w"}, "cwd=/w:read", "ls"},
		{"mcp__x__trash_it", map[string]any{"target": "a", "backup_dir": "/b"}, "target=a:delete backup_dir=/b:write", ""},
		{"mcp__fs__list_directory_with_sizes", map[string]any{"path": "a"}, "path=a:read", ""},
		{"mcp__fs__read_text_file", map[string]any{"path": "a"}, "path=a:read", ""},
		{"mcp__x__remove_item", map[string]any{"path": "p"}, "path=p:delete", ""},
		{"mcp__x__copy_thing", map[string]any{"src": "a", "dest": "b"}, "dest=b:write src=a:read", ""},
		{"mcp__x__file_stats", map[string]any{"n": 1}, "ERR", ""},
		{"new_answer", map[string]any{"content": "/etc/passwd"}, "", ""},
		{"mcp__x__new_answer", map[string]any{"content": "/etc/passwd", "out": "/o"}, "out=/o:write", ""},
		// Windows' paths are paths by their look too (a server may run on Windows).
		{"mcp__x__new_answer", map[string]any{"where": `C:\o`}, `where=C:\o:read`, ""},
		{"mcp__x__new_answer", map[string]any{"where": `d:/o`}, `where=d:/o:read`, ""},
		{"mcp__x__new_answer", map[string]any{"where": `\\srv\share\o`}, `where=\\srv\share\o:read`, ""},
		{"mcp__x__new_answer", map[string]any{"where": `\o`}, `where=\o:read`, ""},
		{"mcp__x__new_answer", map[string]any{"where": `.\o`}, `where=.\o:read`, ""},
		{"mcp__x__new_answer", map[string]any{"where": `~\o`}, `where=~\o:read`, ""},
		{"mcp__x__new_answer", map[string]any{"where": `a:b`}, "", ""},
		{"mcp__x__new_answer", map[string]any{"where": `1:/x`}, "", ""},
	}
	for _, tt := range tests {
		c, err := table.Classify(tt.tool, tt.args)
		if tt.want == "ERR" {
			if err == nil {
				t.Errorf("%s %v: want an error, got %s", tt.tool, tt.args, fmtPaths(c.Paths))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %v: %v", tt.tool, tt.args, err)
			continue
		}
		if got := fmtPaths(c.Paths); got != tt.want || c.Command != tt.cmd {
			t.Errorf("%s %v:\n got  %s (command %q)\n want %s (command %q)", tt.tool, tt.args, got, c.Command, tt.want, tt.cmd)
		}
	}
	if _, err := table.Classify("mcp__x__file_stats", map[string]any{}); !errors.Is(err, ErrNoPath) {
		t.Errorf("no-path error: %v", err)
	}
}

func TestToolFlags(t *testing.T) {
	if !(Tool{Args: []Arg{{Name: "p", Access: Delete}}}).Destructive() || (Tool{Args: []Arg{{Name: "p"}}}).Destructive() {
		t.Error("Destructive")
	}
	for k, want := range map[string]bool{"path": true, "source_base_path": true, "work_dir": true, "dir2": true,
		"file1": true, "include_patterns": false, "excludePatterns": false, "content": false, "overwrite": false} {
		if IsPathKey(k) != want {
			t.Errorf("IsPathKey(%s) = %v", k, !want)
		}
	}
	if !IsWriteTool("mcp__fs__edit_file") || IsWriteTool("mcp__fs__read_file") || IsWriteTool("execute_command") || !IsWriteTool("mcp__x__save_note") {
		t.Error("IsWriteTool")
	}
}
