package mcpclient

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// TestMCPFilesystemServerUnderThePermissionLayer starts the real npm filesystem server with the
// parent directory of a file context path (what it needs to start at all) and checks that the
// Toolset still enforces the permission layer on its tools: the sibling of the file context path
// and a protected file are out of reach although the server itself would allow both.
func TestMCPFilesystemServerUnderThePermissionLayer(t *testing.T) {
	script := fsServerScript(t)
	root := t.TempDir()
	workspace := filepath.Join(root, "workspace")
	site := filepath.Join(root, "site") // holds a file context path and its secret sibling
	project := filepath.Join(root, "project")
	cssPath := filepath.Join(site, "styles.css")
	siblingPath := filepath.Join(site, "secrets.env.txt")
	protectedPath := filepath.Join(project, "golden.txt")
	writeFile(t, filepath.Join(workspace, "notes.txt"), "notes")
	writeFile(t, cssPath, "body { color: red; }")
	writeFile(t, siblingPath, "API_KEY=hunter2")
	writeFile(t, protectedPath, "golden data")
	writeFile(t, filepath.Join(project, "main.go"), "package main")
	// A symlink in the agent's own workspace pointing at the sibling: the server would follow it.
	if err := os.Symlink(siblingPath, filepath.Join(workspace, "innocent.txt")); err != nil {
		t.Fatal(err)
	}

	policy, err := permissions.New(permissions.Spec{
		Agent:     "agent_a",
		Role:      permissions.Final,
		Workspace: workspace,
		ContextPaths: []permissions.ContextPath{
			{Path: cssPath, Write: true},
			{Path: project, Write: true, Protected: []string{protectedPath}},
		},
		Mode: permissions.ModeAcceptEdits,
	})
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(policy, guard.Options{})

	// As configured by a user following the spec-001 example: the file itself is an argument.
	// Its parent comes first, so the server resolves relative paths there.
	servers := []configs.MCPServer{{Name: "fs", Type: "stdio", Command: "node", Args: []string{script, cssPath, project, workspace}}}
	ext, errs := ConnectWith(t.Context(), Options{Servers: servers, AllowedDirs: policy.ReadableRoots(), WorkDir: workspace})
	if len(errs) > 0 {
		t.Fatalf("Connect: %v", errs)
	}
	t.Cleanup(func() { _ = Close(ext) })

	ts, err := filesystem.NewToolset(filesystem.ToolsetOptions{Guard: g, External: ext, TrashDir: filepath.Join(root, "trash")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range ts.Tools() {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"mcp__fs__read_text_file", "mcp__fs__write_file"} {
		if !slices.Contains(names, want) {
			t.Fatalf("Toolset does not offer %s; tools: %v", want, names)
		}
	}

	call := func(name string, args map[string]any) filesystem.Result {
		t.Helper()
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		return ts.Call(t.Context(), name, raw)
	}

	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		wantError bool
		want      string // in the result
		notWant   string // never in the result
	}{
		{"file context path readable", "mcp__fs__read_text_file", map[string]any{"path": cssPath}, false, "color: red", ""},
		{"sibling of a file context path denied", "mcp__fs__read_text_file", map[string]any{"path": siblingPath}, true, "file-context-sibling", "hunter2"},
		{"relative path is the workspace's, as the permission layer saw it", "mcp__fs__read_text_file", map[string]any{"path": "notes.txt"}, false, "notes", ""},
		{"relative sibling name does not reach the sibling", "mcp__fs__read_text_file", map[string]any{"path": "secrets.env.txt"}, true, "", "hunter2"},
		{"relative climb to the sibling denied", "mcp__fs__read_text_file", map[string]any{"path": "../site/secrets.env.txt"}, true, "file-context-sibling", "hunter2"},
		{"symlink in the workspace to the sibling denied", "mcp__fs__read_text_file", map[string]any{"path": filepath.Join(workspace, "innocent.txt")}, true, "", "hunter2"},
		{"home-relative path outside denied", "mcp__fs__read_text_file", map[string]any{"path": "~/.ssh/id_rsa"}, true, "", ""},
		{"several files, one of them the sibling", "mcp__fs__read_multiple_files", map[string]any{"paths": []any{cssPath, siblingPath}}, true, "file-context-sibling", "hunter2"},
		{"sibling via relative dots denied", "mcp__fs__read_text_file", map[string]any{"path": filepath.Join(site, "..", "site", "secrets.env.txt")}, true, "", "hunter2"},
		{"listing the file's directory denied", "mcp__fs__list_directory", map[string]any{"path": site}, true, "", "secrets.env.txt"},
		{"protected file write denied", "mcp__fs__write_file", map[string]any{"path": protectedPath, "content": "overwritten"}, true, "protected-path", ""},
		{"protected file moved away denied", "mcp__fs__move_file", map[string]any{"source": protectedPath, "destination": filepath.Join(project, "moved.txt")}, true, "protected-path", ""},
		{"writable context path file", "mcp__fs__write_file", map[string]any{"path": filepath.Join(project, "new.txt"), "content": "new"}, false, "", ""},
		{"outside every managed path denied", "mcp__fs__read_text_file", map[string]any{"path": "/etc/hostname"}, true, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(tt.tool, tt.args)
			t.Logf("%s -> %s", tt.tool, r.Content)
			if r.IsError != tt.wantError {
				t.Fatalf("IsError = %v, want %v; content: %s", r.IsError, tt.wantError, r.Content)
			}
			if tt.want != "" && !strings.Contains(r.Content, tt.want) {
				t.Errorf("result %s lacks %q", r.Content, tt.want)
			}
			if tt.notWant != "" && strings.Contains(r.Content, tt.notWant) {
				t.Errorf("result %s leaks %q", r.Content, tt.notWant)
			}
		})
	}

	if b, _ := os.ReadFile(protectedPath); string(b) != "golden data" {
		t.Errorf("protected file changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(project, "new.txt")); string(b) != "new" {
		t.Errorf("allowed write did not happen: %q", b)
	}
}

// TestFilesystemServerRefusesRelativePathsWithoutWorkDir: without a workspace to resolve against,
// a relative path would mean whatever the server's first directory makes of it: refused.
func TestFilesystemServerRefusesRelativePathsWithoutWorkDir(t *testing.T) {
	script := fsServerScript(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "a")
	ext, errs := Connect(t.Context(), []configs.MCPServer{{Name: "fs", Command: "node", Args: []string{script, dir}}}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	t.Cleanup(func() { _ = Close(ext) })
	r := ext["fs"].Call(t.Context(), "read_text_file", map[string]any{"path": "a.txt"})
	if !r.IsError || !strings.Contains(r.Content, "use an absolute path") {
		t.Errorf("relative read = %+v, want refused", r)
	}
	r = ext["fs"].Call(t.Context(), "read_text_file", map[string]any{"path": filepath.Join(dir, "a.txt")})
	if r.IsError {
		t.Errorf("absolute read = %+v", r)
	}
}

func TestSetArg(t *testing.T) {
	args := map[string]any{"path": "a", "paths": []any{"x", "y"}, "n": 3.0}
	for _, tc := range []struct {
		arg string
		ok  bool
	}{{"path", true}, {"paths[1]", true}, {"paths[2]", false}, {"paths[-1]", false}, {"paths[1x]", false}, {"n", false}, {"missing", false}, {"a.b", false}} {
		if got := setArg(args, tc.arg, "/abs"); got != tc.ok {
			t.Errorf("setArg(%q) = %v, want %v", tc.arg, got, tc.ok)
		}
	}
	if args["path"] != "/abs" || args["paths"].([]any)[1] != "/abs" || args["paths"].([]any)[0] != "x" {
		t.Errorf("args after setArg: %v", args)
	}
}
