package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

func TestToolSummary(t *testing.T) {
	ws := "/home/u/proj/.massgen/workspaces/workspace1"
	temp := "/home/u/proj/.massgen/temp_workspaces/alice"
	a := &agent{workspace: ws, tempDir: temp}
	tests := []struct {
		name, tool, args, want string
	}{
		{"write with size", "write_file", `{"path":"` + ws + `/index.html","content":"<h1>Hello, world</h1>\n<p>hi there!</p>"}`, "write_file index.html (38 B)"},
		{"write kilobytes", "write_file", `{"path":"big.txt","content":"` + strings.Repeat("x", 1536) + `"}`, "write_file big.txt (1.5 KB)"},
		{"read relative", "read_file", `{"path":"src/app.go"}`, "read_file src/app.go"},
		{"read head", "read_file", `{"path":"src/app.go","head":20}`, "read_file src/app.go (first 20 lines)"},
		{"read another agent's snapshot", "read_file", `{"path":"` + temp + `/agent2/index.html"}`, "read_file agent2/index.html"},
		{"context path stays absolute", "write_file", `{"path":"/home/u/proj/site/index.html","content":""}`, "write_file /home/u/proj/site/index.html (0 B)"},
		{"lookalike of the workspace stays absolute", "read_file", `{"path":"` + ws + `2/x"}`, "read_file " + ws + "2/x"},
		{"edit", "edit_file", `{"path":"a.go","edits":[{"oldText":"a","newText":"b"},{"oldText":"c","newText":"d"}]}`, "edit_file a.go (2 edits)"},
		{"edit dry run", "edit_file", `{"path":"a.go","edits":[{"oldText":"a","newText":"b"}],"dryRun":true}`, "edit_file a.go (1 edit, dry run)"},
		{"move", "move_file", `{"source":"a.txt","destination":"b.txt"}`, "move_file a.txt → b.txt"},
		{"copy to context", "copy_file", `{"source_path":"` + ws + `/index.html","destination_path":"/p/site/index.html","overwrite":true}`, "copy_file index.html → /p/site/index.html (overwrite)"},
		{"many files", "read_multiple_files", `{"paths":["a","b","c","d"]}`, "read_multiple_files a, b, (+2)"},
		{"compare", "compare_files", `{"file1":"a","file2":"b"}`, "compare_files a, b"},
		{"search", "search_files", `{"path":".","pattern":"**/*.go"}`, `search_files . "**/*.go"`},
		{"delete recursive", "delete_file", `{"path":"build","recursive":true}`, "delete_file build (recursive)"},
		{"no arguments", "list_allowed_directories", `{}`, "list_allowed_directories"},
		{"command", "execute_command", `{"command":"npm  test\n  --silent"}`, "execute_command npm test --silent"},
		{"command in a folder", "execute_command", `{"command":"make","work_dir":"` + ws + `/sub"}`, "execute_command make (in sub)"},
		{"MCP filesystem server", "mcp__fs__read_text_file", `{"path":"notes.md"}`, "mcp__fs__read_text_file notes.md"},
		{"MCP tool", "mcp__weather__forecast", `{"city":"Paris","days":3,"units":{"t":"c"},"tags":["a","b"]}`, `mcp__weather__forecast city="Paris" days=3 tags=[2 items] units={…}`},
		{"MCP long string", "mcp__x__y", `{"q":"` + strings.Repeat("a", 100) + `"}`, `mcp__x__y q="` + strings.Repeat("a", 40) + `…"`},
		{"unreadable", "write_file", `{"path":`, "write_file (unreadable arguments)"},
		{"null", "read_file", `null`, "read_file"},
		{"non-string path", "read_file", `{"path":7}`, "read_file 7"},
	}
	tools := filesystem.Builtins()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tools.Summary(tt.tool, tooldecl.Decode(json.RawMessage(tt.args)), a.shortPath)
			if got != tt.want {
				t.Errorf("Summary(%s, %s)\n got %q\nwant %q", tt.tool, tt.args, got, tt.want)
			}
		})
	}
}

// A summary is one bounded line whatever the model sends.
func TestToolSummaryBounded(t *testing.T) {
	huge := `{"path":"` + strings.Repeat("d/", 5000) + `x","content":"` + strings.Repeat("y", 1<<20) + `"}`
	got := filesystem.Builtins().Summary("write_file", tooldecl.Decode(json.RawMessage(huge)), nil)
	if n := len([]rune(got)); n > tooldecl.MaxSummaryRunes+1 {
		t.Errorf("summary of %d runes", n)
	}
	if !strings.HasPrefix(got, "write_file d/d/") {
		t.Errorf("summary = %.60q", got)
	}
}
