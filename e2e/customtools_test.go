package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const customToolsPy = `from massgen.tool._result import ExecutionResult, TextContent

async def two_num_tool(x: int, y: int) -> ExecutionResult:
    """Add two numbers together.

    Args:
        x: First number
        y: Second number
    """
    return ExecutionResult(output_blocks=[TextContent(data=f"The sum of {x} and {y} is {x + y}")])

def plant(path: str, content: str = "planted") -> str:
    """Write a file where the config says."""
    with open(path, "w") as f:
        f.write(content)
    return "planted " + path
`

// A MassGen config with custom_tools runs: the model is offered the functions (schemas read
// from them), calls one, and its result reaches the next request; a custom tool whose
// config-fixed path lies outside the agent's writable roots (no argument the permission check
// sees) is stopped by the command sandbox; tools list shows the custom tools the run offered.
func TestCustomToolsRun(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tools", "math_tools.py"), customToolsPy)
	outside := filepath.Join(dir, "outside")
	writeFile(t, filepath.Join(outside, "keep.txt"), "x")
	planted := filepath.Join(outside, "planted.txt")

	p := newProvider(t, map[string]func(turn) reply{
		"model-a": func(tr turn) reply {
			switch {
			case tr.final:
				return reply{text: "Final: 123 + 456 = 579"}
			case len(tr.answers) > 0:
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": "agent1", "reason": "done"})}}
			case tr.step == 0:
				return reply{calls: []toolCall{
					tc("custom_tool__two_num_tool", map[string]any{"x": 123, "y": 456}),
					tc("custom_tool__plant", map[string]any{}),
				}}
			default:
				return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "579 (" + strings.Join(tr.results, " | ") + ")"})}}
			}
		},
	})
	cfg := fmt.Sprintf(`agents:
  - id: calc
    backend:
      type: chatcompletion
      model: model-a
      base_url: %s
      cwd: workspace1
      custom_tools:
        - name: ["two_num_tool"]
          category: "math"
          path: "tools/math_tools.py"
          function: ["two_num_tool"]
        - path: tools/math_tools.py
          function: plant
          preset_args: {path: %s}
orchestrator:
  timeout_seconds: 90
`, p.URL(), planted)
	writeFile(t, filepath.Join(dir, "cfg.yaml"), cfg)

	if res := run(t, dir, "configs", "validate", "cfg.yaml"); res.code != 0 {
		t.Fatalf("configs validate: exit %d\n%s", res.code, res.stderr)
	}
	res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "What is 123 + 456?")
	if res.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", res.code, res.stderr)
	}
	if res.stdout != "Final: 123 + 456 = 579\n" {
		t.Errorf("stdout = %q", res.stdout)
	}
	reqs := p.requests("model-a")
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var second chatRequest
	if err := json.Unmarshal(reqs[1], &second); err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range second.Messages {
		if m.Role == "tool" {
			var s string
			if json.Unmarshal(m.Content, &s) != nil {
				s = string(m.Content)
			}
			results = append(results, s)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "The sum of 123 and 456 is 579") {
		t.Errorf("tool results in the next request: %q", results)
	}
	if len(results) == 2 && (!strings.Contains(results[1], "error") || strings.Contains(results[1], "planted "+planted)) {
		t.Errorf("the write outside the writable roots was not stopped: %q", results[1])
	}
	if exists(planted) {
		t.Error("a custom tool wrote outside the agent's writable roots")
	}

	// tools list offers what the run offered: the same names, schemas and descriptions.
	var first chatRequest
	if err := json.Unmarshal(reqs[0], &first); err != nil {
		t.Fatal(err)
	}
	offered := map[string]string{}
	for _, tl := range first.Tools {
		if strings.HasPrefix(tl.Function.Name, "custom_tool__") {
			b, _ := json.Marshal(tl.Function.Parameters)
			offered[tl.Function.Name] = string(b)
		}
	}
	lr := run(t, dir, "tools", "list", "--config", "cfg.yaml", "--agent", "calc", "--json")
	if lr.code != 0 {
		t.Fatalf("tools list: exit %d\n%s", lr.code, lr.stderr)
	}
	var listed []struct {
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(lr.stdout), &listed); err != nil {
		t.Fatalf("tools list --json: %v\n%s", err, lr.stdout)
	}
	var names []string
	for _, tl := range listed {
		if !strings.HasPrefix(tl.Name, "custom_tool__") {
			continue
		}
		names = append(names, tl.Name)
		if b, _ := json.Marshal(tl.Parameters); offered[tl.Name] != string(b) {
			t.Errorf("%s: tools list schema %s, the run offered %s", tl.Name, b, offered[tl.Name])
		}
	}
	if want := []string{"custom_tool__two_num_tool", "custom_tool__plant"}; !slices.Equal(names, want) || len(offered) != len(want) {
		t.Errorf("tools list: %v, the run: %v; want %v", names, offered, want)
	}
	if !strings.Contains(offered["custom_tool__two_num_tool"], `"x":{"description":"First number","type":"integer"}`) {
		t.Errorf("two_num_tool's schema: %s", offered["custom_tool__two_num_tool"])
	}
	if strings.Contains(offered["custom_tool__plant"], `"path"`) {
		t.Errorf("a preset argument is offered to the model: %s", offered["custom_tool__plant"])
	}
}

// A custom tool whose file imports a module that is not installed stops the run before any
// model call, saying which module and where.
func TestCustomToolsMissingModuleStopsTheRun(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tools", "t.py"), "import massgen_e2e_missing_module\n\ndef f(q: str) -> str:\n    return q\n")
	p := newProvider(t, map[string]func(turn) reply{"model-a": func(turn) reply { return reply{text: "never"} }})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), fmt.Sprintf(`agents:
  - id: a
    backend:
      type: chatcompletion
      model: model-a
      base_url: %s
      custom_tools:
        - {path: tools/t.py, function: f}
`, p.URL()))
	for _, args := range [][]string{{"configs", "validate", "cfg.yaml"}, {"--config", "cfg.yaml", "--display", "plain", "hi"}} {
		res := run(t, dir, args...)
		if res.code == 0 || !strings.Contains(res.stderr, "cfg.yaml:8: agents[0].backend.custom_tools[0].path") ||
			!strings.Contains(res.stderr, "imports the Python module massgen_e2e_missing_module, which is not installed") {
			t.Errorf("%v: exit %d\n%s", args, res.code, res.stderr)
		}
	}
	if n := len(p.requests("model-a")); n != 0 {
		t.Errorf("%d model calls before the run was refused", n)
	}
}
