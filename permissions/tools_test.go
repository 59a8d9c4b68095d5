package permissions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

func pa(arg, path string, a Access) PathAccess { return PathAccess{Arg: arg, Path: path, Access: a} }

func fmtPaths(ps []PathAccess) string {
	var b []string
	for _, p := range ps {
		b = append(b, fmt.Sprintf("%s=%s:%s", p.Arg, p.Path, accessWord(p.Access)))
	}
	return strings.Join(b, " ")
}

func TestExtractPathsOurTools(t *testing.T) {
	tests := []struct {
		tool string
		args map[string]any
		want []PathAccess
	}{
		{"read_file", map[string]any{"path": "a"}, []PathAccess{pa("path", "a", Read)}},
		{"read_multiple_files", map[string]any{"paths": []any{"a", "/b"}}, []PathAccess{pa("paths[0]", "a", Read), pa("paths[1]", "/b", Read)}},
		{"write_file", map[string]any{"path": "a", "content": "/etc/passwd"}, []PathAccess{pa("path", "a", Write)}},
		{"edit_file", map[string]any{"path": "a", "edits": []any{}}, []PathAccess{pa("path", "a", Write)}},
		{"edit_file", map[string]any{"path": "a", "dryRun": true}, []PathAccess{pa("path", "a", Read)}},
		{"edit_file", map[string]any{"path": "a", "dryRun": false}, []PathAccess{pa("path", "a", Write)}},
		{"create_directory", map[string]any{"path": "d"}, []PathAccess{pa("path", "d", Write)}},
		{"list_directory", map[string]any{"path": "d"}, []PathAccess{pa("path", "d", Read)}},
		{"directory_tree", map[string]any{"path": "d"}, []PathAccess{pa("path", "d", Read)}},
		{"move_file", map[string]any{"source": "a", "destination": "b"}, []PathAccess{pa("source", "a", Delete), pa("destination", "b", Write)}},
		{"search_files", map[string]any{"path": "d", "pattern": "/etc/*"}, []PathAccess{pa("path", "d", Read)}},
		{"get_file_info", map[string]any{"path": "f"}, []PathAccess{pa("path", "f", Read)}},
		{"list_allowed_directories", map[string]any{}, nil},
		{"copy_file", map[string]any{"source_path": "a", "destination_path": "b"}, []PathAccess{pa("source_path", "a", Read), pa("destination_path", "b", Write)}},
		{"copy_files_batch", map[string]any{"source_base_path": "a", "destination_base_path": "b"}, []PathAccess{pa("source_base_path", "a", Read), pa("destination_base_path", "b", Write)}},
		{"delete_file", map[string]any{"path": "a", "recursive": true}, []PathAccess{pa("path", "a", Delete)}},
		{"delete_files_batch", map[string]any{"base_path": "d"}, []PathAccess{pa("base_path", "d", Write)}},
		{"compare_directories", map[string]any{"dir1": "a", "dir2": "b"}, []PathAccess{pa("dir1", "a", Read), pa("dir2", "b", Read)}},
		{"compare_files", map[string]any{"file1": "a", "file2": "b"}, []PathAccess{pa("file1", "a", Read), pa("file2", "b", Read)}},
		{"new_answer", map[string]any{"content": "/etc/passwd"}, nil},
		{"vote", map[string]any{"agent_id": "agent1"}, nil},
		// Behind an MCP prefix our tools keep their meaning, and extra args count too.
		{"mcp__workspace__read_file", map[string]any{"path": "a"}, []PathAccess{pa("path", "a", Read)}},
		{"mcp__fs__write_file", map[string]any{"path": "a", "backup_path": "/x"}, []PathAccess{pa("path", "a", Write), pa("backup_path", "/x", Write)}},
		{"mcp__a__mcp__b__compare_files", map[string]any{"file1": "a", "file2": "b"}, []PathAccess{pa("file1", "a", Read), pa("file2", "b", Read)}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			ex, err := extractWith(nil, testTools, tt.tool, tt.args, false)
			if err != nil {
				t.Fatalf("extract: %v", err)
			}
			got := ex.paths
			if fmtPaths(got) != fmtPaths(tt.want) {
				t.Fatalf("got  %s\nwant %s", fmtPaths(got), fmtPaths(tt.want))
			}
		})
	}
}

func TestExtractPathsUnknownTools(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string // fmtPaths, or "ERR"
	}{
		{"claude Write", "Write", map[string]any{"file_path": "/x/a", "content": "/* css */"}, "file_path=/x/a:write"},
		{"claude Read", "Read", map[string]any{"file_path": "a"}, "file_path=a:read"},
		{"claude Edit", "Edit", map[string]any{"file_path": "a", "old_string": "/x", "new_string": "/y"}, "file_path=a:write"},
		{"claude MultiEdit", "MultiEdit", map[string]any{"file_path": "a", "edits": []any{map[string]any{"old_string": "/a"}}}, "file_path=a:write"},
		{"claude NotebookEdit", "NotebookEdit", map[string]any{"notebook_path": "n.ipynb"}, "notebook_path=n.ipynb:write"},
		{"claude Glob", "Glob", map[string]any{"pattern": "**/*.go", "path": "/src"}, "path=/src:read"},
		{"claude Grep without path searches the workspace", "Grep", map[string]any{"pattern": "x"}, "path (default: workspace)=:read"},
		{"claude LS", "LS", map[string]any{"path": "/p"}, "path=/p:read"},
		{"TodoWrite is not a file tool", "TodoWrite", map[string]any{"todos": []any{}}, ""},
		{"WebFetch", "WebFetch", map[string]any{"url": "https://x/y"}, ""},
		{"unusual name found by value", "inspect_resource", map[string]any{"where": "/etc/shadow"}, "where=/etc/shadow:read"},
		{"location key", "inspect_resource", map[string]any{"location": "secrets.yaml"}, "location=secrets.yaml:read"},
		// Destination-like names are written whatever the tool's name says.
		{"target key", "mcp__x__frob", map[string]any{"target": "t"}, "target=t:write"},
		{"target_file key", "mcp__x__frob", map[string]any{"target_file": "t"}, "target_file=t:write"},
		{"dest key", "mcp__x__export", map[string]any{"dest": "d"}, "dest=d:write"},
		{"output key", "mcp__x__render", map[string]any{"output": "o.png"}, "output=o.png:write"},
		{"out key, bare name", "mcp__x__render", map[string]any{"out": "o.png"}, "out=o.png:write"},
		{"save_as key, bare name", "mcp__x__render", map[string]any{"save_as": "o.png"}, "save_as=o.png:write"},
		{"export_format is not a path", "mcp__x__render", map[string]any{"export_format": "pdf"}, ""},
		{"save_path key", "mcp__x__render", map[string]any{"save_path": "o.png"}, "save_path=o.png:write"},
		{"to key", "mcp__x__frob", map[string]any{"from": "a", "to": "b"}, "from=a:read to=b:write"},
		{"output_dir value nested", "mcp__x__frob", map[string]any{"output_dir": map[string]any{"x": "/o"}}, "output_dir.x=/o:write"},
		{"input stays a read", "mcp__x__frob", map[string]any{"input_path": "i"}, "input_path=i:read"},
		// A ".." component makes any value a path.
		{"inner ..", "mcp__x__frob", map[string]any{"q": "sub/../../x"}, "q=sub/../../x:read"},
		{"backslash ..", "mcp__x__frob", map[string]any{"q": `sub\..\..\x`}, `q=sub\..\..\x:read`},
		{"dots in a name are not ..", "mcp__x__frob", map[string]any{"q": "v1..v2"}, ""},
		// file: URLs, parsed.
		{"file URL localhost", "mcp__x__open", map[string]any{"uri": "file://localhost/etc/passwd"}, "uri=/etc/passwd:read"},
		{"file URL short form", "mcp__x__open", map[string]any{"uri": "file:/etc/passwd"}, "uri=/etc/passwd:read"},
		{"file URL upper case", "mcp__x__open", map[string]any{"uri": "FILE:///etc/passwd"}, "uri=/etc/passwd:read"},
		{"file URL percent-encoded", "mcp__x__open", map[string]any{"uri": "file:///a/..%2fetc%2fpasswd"}, "uri=/a/../etc/passwd:read uri (undecoded)=/a/..%2fetc%2fpasswd:read"},
		{"file URL space", "mcp__x__open", map[string]any{"uri": "file:///a/b%20c"}, "uri=/a/b c:read uri (undecoded)=/a/b%20c:read"},
		{"file URL other host", "mcp__x__open", map[string]any{"uri": "file://evil/etc/passwd"}, "ERR"},
		{"file URL opaque", "mcp__x__open", map[string]any{"uri": "file:etc/passwd"}, "ERR"},
		{"file URL query", "mcp__x__open", map[string]any{"uri": "file:///etc/passwd?x"}, "ERR"},
		{"file URL fragment", "mcp__x__open", map[string]any{"uri": "file:///etc/passwd#x"}, "ERR"},
		{"file URL bad escape", "mcp__x__open", map[string]any{"uri": "file:///a%zz"}, "ERR"},
		{"file URL encoded NUL", "mcp__x__open", map[string]any{"uri": "file:///a%00b"}, "ERR"},
		{"file URL in a content key", "mcp__x__open", map[string]any{"query": "FILE:/etc/passwd"}, "query=/etc/passwd:read"},
		// Exemptions hold for unprefixed names only.
		{"prefixed new_answer", "mcp__evil__new_answer", map[string]any{"path": "/etc/passwd"}, "path=/etc/passwd:read"},
		{"prefixed TodoWrite", "mcp__evil__TodoWrite", map[string]any{"file_path": "/x"}, "file_path=/x:write"},
		{"prefixed Grep has no default", "mcp__evil__Grep", map[string]any{"pattern": "x"}, "ERR"},
		{"tilde value", "mcp__x__frob", map[string]any{"q": "~/x"}, "q=~/x:read"},
		{"dot-slash value", "mcp__x__frob", map[string]any{"q": "./x"}, "q=./x:read"},
		{"nested value", "mcp__x__frob", map[string]any{"opts": map[string]any{"out_file": "o"}}, "opts.out_file=o:write"},
		{"nested value read", "mcp__x__frob", map[string]any{"opts": map[string]any{"in_file": "o"}}, "opts.in_file=o:read"},
		{"list of paths", "mcp__x__bundle_files", map[string]any{"files": []any{"a", "b"}}, "files[0]=a:read files[1]=b:read"},
		{"file URL", "mcp__x__open", map[string]any{"uri": "file:///etc/passwd"}, "uri=/etc/passwd:read"},
		{"write-like by name", "mcp__x__save_report", map[string]any{"dir": "d"}, "dir=d:write"},
		{"remove by name", "mcp__x__remove_thing", map[string]any{"path": "p"}, "path=p:delete"},
		{"copy-like: source read", "mcp__x__copy_tree", map[string]any{"src": "a", "dst": "b"}, "dst=b:write src=a:read"},
		{"dir1/dir2 of unknown tool", "mcp__x__diff", map[string]any{"dir1": "a", "dir2": "b"}, "dir1=a:read dir2=b:read"},
		{"file tool without path fails closed", "mcp__x__read_file_contents", map[string]any{"name": "secrets"}, "ERR"},
		{"write tool without path fails closed", "mcp__x__write_note", map[string]any{"title": "t"}, "ERR"},
		{"non-file tool without path", "mcp__github__create_issue", map[string]any{"title": "x", "body": "/etc/passwd"}, ""},
		{"missing required arg", "read_file", map[string]any{}, "ERR"},
		{"wrong type", "read_file", map[string]any{"path": 3}, "ERR"},
		{"list with non-string", "read_multiple_files", map[string]any{"paths": []any{"a", 2}}, "ERR"},
		{"empty list", "read_multiple_files", map[string]any{"paths": []any{}}, "ERR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractPaths(testTools, tt.tool, tt.args)
			if tt.want == "ERR" {
				if err == nil {
					t.Fatalf("want an error, got %s", fmtPaths(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("ExtractPaths: %v", err)
			}
			if fmtPaths(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", fmtPaths(got), tt.want)
			}
		})
	}
}

func TestToolNames(t *testing.T) {
	for tool, want := range map[string]string{
		"read_file": "read_file", "mcp__fs__read_file": "read_file", "mcp__a__mcp__b__vote": "vote",
		"mcp__": "mcp__", "mcp__server": "mcp__server", "mcp__s__": "mcp__s__",
	} {
		if got := BaseToolName(tool); got != want {
			t.Errorf("BaseToolName(%q) = %q, want %q", tool, got, want)
		}
	}
	writes := map[string]bool{"write_file": true, "edit_file": true, "delete_file": true, "move_file": true, "copy_file": true,
		"copy_files_batch": true, "delete_files_batch": true, "create_directory": true, "read_file": false,
		"list_directory": false, "compare_files": false, "execute_command": false, "mcp__x__write_file": true,
		"Write": true, "Edit": true, "MultiEdit": true, "Read": false, "TodoWrite": false, "Bash": false, "new_answer": false,
		"mcp__x__TodoWrite": true, "mcp__x__new_answer": false}
	for tool, want := range writes {
		if got := IsWriteTool(tool); got != want {
			t.Errorf("IsWriteTool(%q) = %v, want %v", tool, got, want)
		}
	}
	// Command tools: massgen's by their declaration (the table's), in any case and behind any
	// MCP prefix; other runtimes' shell tools by name. Without a table that declares it, a tool
	// merely named like massgen's command tool runs no command.
	for tool, want := range map[string]bool{"execute_command": true, "mcp__x__execute_command": true, "Bash": true,
		"bash": true, "shell": true, "exec": true, "read_file": false, "EXECUTE_COMMAND": true,
		"mcp__x__Execute_Command": true, "mcp__x__read_file": false, "frobnicate": false} {
		if got := testTools.IsCommand(tool); got != want {
			t.Errorf("IsCommand(%q) = %v, want %v", tool, got, want)
		}
	}
	for tool, want := range map[string]bool{"execute_command": false, "mcp__x__execute_command": false,
		"EXECUTE_COMMAND": false, "Bash": true, "mcp__x__bash": true, "read_file": false} {
		if got := toolargs.Table(nil).IsCommand(tool); got != want {
			t.Errorf("without a table, IsCommand(%q) = %v, want %v", tool, got, want)
		}
	}
}
