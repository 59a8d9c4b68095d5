package mcpclient

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

func TestRunnerGivesTheFilesystemServerTheAgentsDirectories(t *testing.T) {
	script := fsServerScript(t)
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	ctxFile := filepath.Join(root, "site", "styles.css")
	prev := filepath.Join(root, "prev_turn")
	writeFile(t, filepath.Join(ws, "notes.txt"), "workspace notes")
	writeFile(t, ctxFile, "css")
	writeFile(t, filepath.Join(prev, "old.txt"), "old")
	agent := configs.Agent{ID: "agent_a", Backend: configs.Backend{Type: "scripted", CWD: ws, MCPServers: []configs.MCPServer{
		{Name: "fs", Command: "node", Args: []string{script}}, // no directory: the agent's are added
		{Name: "broken", Command: filepath.Join(root, "missing-binary")},
	}}}
	cfg := &configs.Config{Agents: []configs.Agent{agent}, Orchestrator: configs.Orchestrator{
		AgentTemporaryWorkspace: filepath.Join(root, "temp"),
		ContextPaths:            []configs.ContextPath{{Path: ctxFile, Permission: "read"}},
	}}
	var mu sync.Mutex
	var warned []string
	r := NewRunner(cfg, []string{prev}, func(id string, err error) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, id+": "+err.Error())
	}, nil)
	ext := r.External(t.Context(), agent)
	if len(warned) != 1 || !strings.Contains(warned[0], `agent_a: mcp server "broken"`) {
		t.Errorf("warnings = %q", warned)
	}
	fs := ext["fs"]
	if fs == nil {
		t.Fatalf("fs not connected: %v", ext)
	}
	dirs := fs.Call(t.Context(), "list_allowed_directories", nil)
	for _, want := range []string{ws, filepath.Dir(ctxFile), prev} {
		if !strings.Contains(dirs.Content, want) {
			t.Errorf("allowed directories %s lack %s", dirs.Content, want)
		}
	}
	if strings.Contains(dirs.Content, ctxFile) {
		t.Errorf("a file was given as a directory: %s", dirs.Content)
	}
	if res := fs.Call(t.Context(), "read_text_file", map[string]any{"path": "notes.txt"}); res.IsError || !strings.Contains(res.Content, "workspace notes") {
		t.Errorf("relative read = %+v", res)
	}
	if err := r.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if res := fs.Call(t.Context(), "read_text_file", map[string]any{"path": filepath.Join(ws, "notes.txt")}); !res.IsError {
		t.Errorf("call after Close = %+v", res)
	}
	if r.External(t.Context(), configs.Agent{ID: "b"}) != nil {
		t.Error("an agent without mcp_servers gets no externals")
	}
}
