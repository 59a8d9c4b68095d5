package mcpserver

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// TestServeInProcess drives Serve over pipes: tools carry their schemas and limits, an ask in
// mode "default" (nobody to ask on stdio) is a deny with its reason, and Serve returns when the
// client goes away.
func TestServeInProcess(t *testing.T) {
	root := t.TempDir()
	workspace := filepath.Join(root, "ws")
	project := filepath.Join(root, "project")
	writeFile(t, filepath.Join(workspace, "a.txt"), "in the workspace")
	writeFile(t, filepath.Join(project, "index.html"), "<html></html>")
	policy, err := permissions.New(permissions.Spec{
		Agent: "agent_a", Role: permissions.Final, Workspace: workspace,
		ContextPaths: []permissions.ContextPath{{Path: project, Write: true}},
		Mode:         permissions.ModeDefault,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := filesystem.NewToolset(filesystem.ToolsetOptions{Guard: guard.New(policy, guard.Options{}), TrashDir: filepath.Join(root, "trash")})
	if err != nil {
		t.Fatal(err)
	}

	clientToServerR, clientToServerW := io.Pipe()
	serverToClientR, serverToClientW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- Serve(context.Background(), ts, clientToServerR, serverToClientW) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: serverToClientR, Writer: clientToServerW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
	}
	if len(byName) != len(ts.Tools()) {
		t.Errorf("served %d tools, Toolset has %d", len(byName), len(ts.Tools()))
	}
	rf := byName["read_file"]
	if rf == nil {
		t.Fatalf("no read_file among %v", byName)
	}
	if schema, _ := rf.InputSchema.(map[string]any); schema["type"] != "object" || schema["properties"] == nil {
		t.Errorf("read_file schema = %v", rf.InputSchema)
	}
	if !strings.Contains(rf.Description, workspace) {
		t.Errorf("read_file description does not state the limits: %q", rf.Description)
	}
	if wf := byName["write_file"]; wf == nil || wf.Annotations == nil || wf.Annotations.ReadOnlyHint {
		t.Errorf("write_file annotations = %+v", wf)
	}

	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: protocol error %v (denials must be results)", name, err)
		}
		return textOf(res.Content), res.IsError
	}
	if text, isErr := call("read_file", map[string]any{"path": "a.txt"}); isErr || !strings.Contains(text, "in the workspace") {
		t.Errorf("read_file = %s (error %v)", text, isErr)
	}
	text, isErr := call("write_file", map[string]any{"path": filepath.Join(project, "index.html"), "content": "changed"})
	if !isErr || !strings.Contains(text, "index.html") || !strings.Contains(text, `"rule":"ask-`) {
		t.Errorf("write to a context path in mode default without an Asker = %s (error %v), want a deny", text, isErr)
	}
	t.Logf("ask in mode default -> %s", text)
	// An unknown tool is the protocol's own error (the SDK answers it), not a tool result.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}

	_ = cs.Close()
	_ = clientToServerW.Close()
	if err := <-served; err != nil {
		t.Errorf("Serve after the client left: %v", err)
	}
}
