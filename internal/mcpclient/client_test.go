package mcpclient

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
)

func TestFilesystemArgs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "styles.css")
	writeFile(t, file, "body{}")
	other := t.TempDir()
	otherFile := filepath.Join(other, "a.txt")
	writeFile(t, otherFile, "a")

	tests := []struct {
		name    string
		server  configs.MCPServer
		allowed []string
		want    []string
	}{
		{
			name:   "file path replaced by its parent (spec 001 crash)",
			server: configs.MCPServer{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", file}},
			want:   []string{"-y", "@modelcontextprotocol/server-filesystem", dir},
		},
		{
			name:   "file and its directory deduplicated",
			server: configs.MCPServer{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", dir, file, dir + "/"}},
			want:   []string{"-y", "@modelcontextprotocol/server-filesystem", dir},
		},
		{
			name:    "configured directories win over allowedDirs",
			server:  configs.MCPServer{Command: "npx", Args: []string{"@modelcontextprotocol/server-filesystem", other}},
			allowed: []string{dir},
			want:    []string{"@modelcontextprotocol/server-filesystem", other},
		},
		{
			name:    "no directory configured: allowedDirs appended, files as parents, deduplicated",
			server:  configs.MCPServer{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem"}},
			allowed: []string{dir, file, otherFile},
			want:    []string{"-y", "@modelcontextprotocol/server-filesystem", dir, other},
		},
		{
			name:    "binary is the server: every arg is a directory",
			server:  configs.MCPServer{Command: "/usr/local/bin/mcp-server-filesystem", Args: []string{file}},
			allowed: []string{other},
			want:    []string{dir},
		},
		{
			name:   "script path form, options kept",
			server: configs.MCPServer{Command: "node", Args: []string{"/x/server-filesystem/dist/index.js", "--verbose", otherFile}},
			want:   []string{"/x/server-filesystem/dist/index.js", "--verbose", other},
		},
		{
			name:    "other servers untouched",
			server:  configs.MCPServer{Command: "npx", Args: []string{"-y", "@fak111/weather-mcp", file}},
			allowed: []string{dir},
			want:    []string{"-y", "@fak111/weather-mcp", file},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FilesystemArgs(tt.server, tt.allowed)
			if !slices.Equal(got, tt.want) {
				t.Errorf("FilesystemArgs = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConnectFilesystemServerGivenAFile(t *testing.T) {
	script := fsServerScript(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	writeFile(t, file, "answer: 42\n")

	ctx := t.Context()
	// Only a file path configured: the server used to crash (spec 001); now it gets the parent.
	ext, errs := Connect(ctx, []configs.MCPServer{{Name: "fs", Type: "stdio", Command: "node", Args: []string{script, file}}}, nil, nil)
	if len(errs) > 0 {
		t.Fatalf("Connect errors: %v", errs)
	}
	t.Cleanup(func() { _ = Close(ext) })
	fs, ok := ext["fs"]
	if !ok {
		t.Fatalf("server fs not connected: %v", ext)
	}
	var names []string
	for _, tool := range fs.Tools() {
		names = append(names, tool.Name)
		if tool.Parameters["type"] != "object" {
			t.Errorf("tool %s: schema type = %v, want object", tool.Name, tool.Parameters["type"])
		}
	}
	for _, want := range []string{"read_text_file", "write_file", "list_allowed_directories"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	r := fs.Call(ctx, "list_allowed_directories", nil)
	if r.IsError || !strings.Contains(r.Content, dir) {
		t.Errorf("list_allowed_directories = %+v, want it to name %s", r, dir)
	}
	r = fs.Call(ctx, "read_text_file", map[string]any{"path": file})
	if r.IsError {
		t.Fatalf("read_text_file: %s", r.Content)
	}
	var body struct{ Result string }
	if err := json.Unmarshal([]byte(r.Content), &body); err != nil {
		t.Fatalf("result is not JSON: %q", r.Content)
	}
	if body.Result != "answer: 42\n" {
		t.Errorf("read_text_file result = %q", body.Result)
	}

	// A tool failure on the server side is an error result, not a Go error.
	r = fs.Call(ctx, "read_text_file", map[string]any{"path": "/definitely/not/allowed.txt"})
	if !r.IsError {
		t.Errorf("read outside the server's directories: %+v, want an error result", r)
	}
}

func TestConnectReportsFailedServerAndKeepsTheOthers(t *testing.T) {
	script := fsServerScript(t)
	dir := t.TempDir()
	servers := []configs.MCPServer{
		{Name: "broken", Command: "node", Args: []string{"-e", "console.error('boom: missing API token'); process.exit(3)"}},
		{Name: "nocommand", Command: filepath.Join(dir, "no-such-binary")},
		{Name: "fs", Command: "node", Args: []string{script, dir}},
		{Name: "", Command: "node"},
		{Name: "bad__name", Command: "node"},
		{Name: "weird", Type: "carrier-pigeon"},
	}
	ext, errs := Connect(t.Context(), servers, nil, nil)
	t.Cleanup(func() { _ = Close(ext) })
	if _, ok := ext["fs"]; !ok || len(ext) != 1 {
		t.Fatalf("connected %v, want only fs", ext)
	}
	all := ""
	for _, e := range errs {
		all += e.Error() + "\n"
	}
	for _, want := range []string{
		`mcp server "broken" failed to start`, "boom: missing API token",
		`mcp server "nocommand"`, "no-such-binary",
		"mcp_servers[3]: missing name",
		`"bad__name": name must not contain`,
		`"weird": unknown type "carrier-pigeon"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("errors lack %q:\n%s", want, all)
		}
	}
	if len(errs) != 5 {
		t.Errorf("got %d errors, want 5:\n%s", len(errs), all)
	}
}

func TestClientStopsWithContextAndAfterClose(t *testing.T) {
	script := fsServerScript(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "a")
	ctx, cancel := context.WithCancel(t.Context())
	ext, errs := Connect(ctx, []configs.MCPServer{{Name: "fs", Command: "node", Args: []string{script, dir}}}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	fs := ext["fs"]
	cancel() // the context ends the server (Close runs from context.AfterFunc)
	if err := Close(ext); err != nil && !strings.Contains(err.Error(), "closed") {
		t.Logf("close after cancel: %v", err)
	}
	r := fs.Call(t.Context(), "read_text_file", map[string]any{"path": filepath.Join(dir, "a.txt")})
	if !r.IsError {
		t.Errorf("call after the server stopped = %+v, want an error result", r)
	}
}

func TestServerEnvDoesNotLeakSecrets(t *testing.T) {
	env := serverEnv([]string{"PATH=/bin", "OPENAI_API_KEY=sk-secret", "HOME=/h", "TERM=xterm", "PYTHONPATH=/p", "NODE_PATH=/n"}, map[string]string{"TOKEN": "t", "TERM": "dumb"})
	want := []string{"PATH=/bin", "HOME=/h", "TERM=dumb", "TOKEN=t", "PYTHONSAFEPATH=1"}
	slices.Sort(env)
	slices.Sort(want)
	if !slices.Equal(env, want) {
		t.Errorf("serverEnv = %q, want %q", env, want)
	}
}

var _ filesystem.External = (*Client)(nil)

func TestCWDPlaceholder(t *testing.T) {
	script := fsServerScript(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "out.txt"), "in the workspace")
	// MassGen's ${cwd}: the agent's workspace, in args and env.
	srv := configs.MCPServer{Name: "fs", Command: "node", Args: []string{script, "${cwd}"}, Env: map[string]string{"OUT": "${cwd}/x"}}
	ext, errs := ConnectWith(t.Context(), Options{Servers: []configs.MCPServer{srv}, WorkDir: ws})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	t.Cleanup(func() { _ = Close(ext) })
	if r := ext["fs"].Call(t.Context(), "read_text_file", map[string]any{"path": filepath.Join(ws, "out.txt")}); r.IsError {
		t.Errorf("read in ${cwd} = %+v", r)
	}
	got, err := expandCWD(srv, ws)
	if err != nil || got.Args[1] != ws || got.Env["OUT"] != ws+"/x" || srv.Args[1] != "${cwd}" {
		t.Errorf("expandCWD = %+v, %v (and the config must stay untouched: %v)", got, err, srv.Args)
	}
	// Without a workspace ${cwd} cannot be filled: the server is reported, not started.
	_, errs = Connect(t.Context(), []configs.MCPServer{srv}, nil, nil)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "${cwd}") {
		t.Errorf("errs = %v", errs)
	}
}
