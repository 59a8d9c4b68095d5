package agentenv

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/mcpserver"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/permissions"
)

func needPython(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Effective(""); err != nil {
		t.Skipf("no command sandbox here: %v", err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

const customCfg = `agents:
  - id: alpha
    backend:
      type: openai
      model: m
      cwd: ws_alpha
      custom_tools:
        - {path: tools/t.py, function: [add, save_note]}
  - id: beta
    backend:
      type: openai
      model: m
      custom_tools:
        - {path: tools/t.py, function: add, name: plus}
      exclude_tools: [custom_tool__nothing]
orchestrator:
  context_paths: [{path: src, permission: write}]
`

const customPy = `def add(x: int, y: int) -> str:
    """Add."""
    return str(x + y)

def save_note(path: str, content: str) -> str:
    """Write a note."""
    with open(path, "w") as f:
        f.write(content)
    return "saved"
`

func toolNames(t *testing.T, a *Agent, role Role) []string {
	t.Helper()
	ts, err := a.Toolset(role)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range ts.Tools() {
		if strings.HasPrefix(tl.Name, "custom_tool__") {
			names = append(names, tl.Name)
		}
	}
	return names
}

// The run, tools list and mcp serve build custom tools here: every agent is offered its own
// (with or without a workspace), each call is permission-checked and runs in the role's
// sandbox, and deciding only offers the same names without running anything.
func TestCustomToolsInTheEnvironment(t *testing.T) {
	lane.Long(t)
	needPython(t)
	fx, cfg := newFixture(t, customCfg, "")
	write(t, filepath.Join(fx.dir, "tools", "t.py"), customPy)
	env, alpha := open(t, Options{Config: cfg}, "alpha")
	beta, err := env.Agent(t.Context(), "beta")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, alpha, Coordination); !slices.Equal(got, []string{"custom_tool__add", "custom_tool__save_note"}) {
		t.Errorf("alpha offers %v", got)
	}
	if got := toolNames(t, beta, Coordination); !slices.Equal(got, []string{"custom_tool__plus"}) {
		t.Errorf("beta (no workspace) offers %v", got)
	}
	ts, _ := beta.Toolset(Coordination)
	if r := ts.Call(t.Context(), "custom_tool__plus", json.RawMessage(`{"x": 2, "y": 3}`)); r.IsError || r.Content != `{"result":"5"}` {
		t.Errorf("beta's plus: %+v", r)
	}
	// Coordinating, alpha may not write the context path: the Guard refuses the call by its
	// path argument, before any process runs.
	note := filepath.Join(fx.dir, "src", "note.txt")
	args, _ := json.Marshal(map[string]any{"path": note, "content": "x"})
	coord, _ := alpha.Toolset(Coordination)
	if r := coord.Call(t.Context(), "custom_tool__save_note", args); !r.IsError || r.Denied == nil {
		t.Errorf("coordination save_note into the context path: %+v", r)
	}
	final, _ := alpha.Toolset(Final)
	if r := final.Call(t.Context(), "custom_tool__save_note", args); r.IsError {
		t.Errorf("final save_note into the context path: %+v", r)
	}

	// mcp serve (the claude_code bridge) offers and runs them the same way.
	served := serveTools(t, coord)
	if served["custom_tool__add"] == "" || served["custom_tool__save_note"] == "" {
		t.Errorf("mcp serve offers %v", served)
	}
	for _, tl := range coord.Tools() {
		if b, _ := json.Marshal(tl.Parameters); served[tl.Name] != "" && served[tl.Name] != string(b) {
			t.Errorf("%s: served schema %s, Toolset %s", tl.Name, served[tl.Name], b)
		}
	}

	// Deciding only: the same names, no process.
	_, decide := open(t, Options{Config: cfg, DecideOnly: true}, "alpha")
	if got := toolNames(t, decide, Coordination); !slices.Equal(got, []string{"custom_tool__add", "custom_tool__save_note"}) {
		t.Errorf("deciding only, alpha offers %v", got)
	}
	d, err := decide.Decide(t.Context(), Coordination, permissions.Request{Tool: "custom_tool__save_note", Args: map[string]any{"path": note, "content": "x"}})
	if err != nil || d.Allow {
		t.Errorf("decide save_note into the context path while coordinating: %+v, %v", d, err)
	}
}

// A function whose file imports a module that is not installed stops the run's set-up and
// configs validate alike, naming the module at the entry's line.
func TestCustomToolsMissingModule(t *testing.T) {
	needPython(t)
	fx, cfg := newFixture(t, customCfg, "")
	write(t, filepath.Join(fx.dir, "tools", "t.py"), "import no_such_module_for_massgen\n"+customPy)
	env, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	_, err = env.Agent(t.Context(), "alpha")
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "cfg.yaml:8: agents[0].backend.custom_tools[0].path") ||
		!strings.Contains(err.Error(), "imports the Python module no_such_module_for_massgen") {
		t.Fatalf("set-up error = %v", err)
	}
	check, err := New(Options{Config: cfg, DecideOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	probs := check.CheckCustomTools(t.Context(), []string{"alpha", "beta"})
	if len(probs) != 2 || !strings.Contains(probs[1].String(), "cfg.yaml:14: agents[1].backend.custom_tools[0].path") {
		t.Errorf("CheckCustomTools = %v", probs)
	}
}

// serveTools serves ts as mcp serve does and returns each custom tool's schema as listed, after
// calling custom_tool__add through the protocol.
func serveTools(t *testing.T, ts *filesystem.Toolset) map[string]string {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mcpserver.Serve(ctx, ts, c2sR, s2cW) }()
	defer func() { cancel(); c2sW.Close(); <-done }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tl := range list.Tools {
		if strings.HasPrefix(tl.Name, "custom_tool__") {
			b, _ := json.Marshal(tl.InputSchema)
			out[tl.Name] = string(b)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "custom_tool__add", Arguments: map[string]any{"x": 40, "y": 2}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != `{"result":"42"}` {
		t.Errorf("custom_tool__add over MCP: %+v, %v", res, err)
	}
	return out
}
