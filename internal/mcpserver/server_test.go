package mcpserver

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// buildMassgen builds the real binary for tests that run it as a process.
func buildMassgen(t *testing.T) string {
	t.Helper()
	bin := testbin.For(t)
	return bin
}

type tsResult struct {
	Server struct{ Name string }
	Tools  []struct {
		Name        string
		Description string
		InputSchema map[string]any
	}
	Results []struct {
		IsError bool
		Text    string
	}
}

// runTSClient runs the official TypeScript SDK client (testdata/ts_client.cjs) with a plan.
func runTSClient(t *testing.T, dir string, plan map[string]any) tsResult {
	t.Helper()
	npmModule(t, "@modelcontextprotocol/sdk/package.json")
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "ts_client.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", script, string(raw))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_MODULES="+filepath.Join(repoRoot(t), ".cache", "npm", "node_modules"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript client: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var res tsResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("TypeScript client printed %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	return res
}

// TestServeToTypeScriptClient: `massgen mcp serve` (the real binary) is driven by the official
// TypeScript SDK. The agent's own tools and the tools of its MCP filesystem server (the real npm
// one, chained behind massgen) are listed; an allowed read works; reading the sibling of a file
// context path and writing a protected file are denied with the permission reason, through both.
func TestServeToTypeScriptClient(t *testing.T) {
	lane.Long(t)
	fsScript := fsServerScript(t)
	bin := buildMassgen(t)

	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	project := filepath.Join(dir, "project")
	cssPath := filepath.Join(site, "styles.css")
	siblingPath := filepath.Join(site, "index.html")
	protectedPath := filepath.Join(project, "golden.txt")
	writeFile(t, cssPath, "body { color: red; }")
	writeFile(t, siblingPath, "<html>secret sibling</html>")
	writeFile(t, protectedPath, "golden data")

	config := `agents:
  - id: agent_a
    backend:
      type: scripted
      cwd: workspace1
      script:
        - text: "unused"
      mcp_servers:
        - name: fs
          type: stdio
          command: node
          args: ["` + fsScript + `", "` + cssPath + `", "` + project + `"]
orchestrator:
  context_paths:
    - path: "` + cssPath + `"
      permission: write
    - path: "` + project + `"
      permission: write
      protected_paths: ["golden.txt"]
`
	writeFile(t, filepath.Join(dir, "massgen.yaml"), config)

	plan := map[string]any{
		"command": bin,
		"args":    []string{"mcp", "serve", "--config", "massgen.yaml", "--agent", "agent_a", "--final"},
		"calls": []map[string]any{
			{"name": "read_file", "arguments": map[string]any{"path": cssPath}},
			{"name": "read_file", "arguments": map[string]any{"path": siblingPath}},
			{"name": "write_file", "arguments": map[string]any{"path": protectedPath, "content": "overwritten"}},
			{"name": "mcp__fs__read_text_file", "arguments": map[string]any{"path": cssPath}},
			{"name": "mcp__fs__read_text_file", "arguments": map[string]any{"path": siblingPath}},
			{"name": "mcp__fs__write_file", "arguments": map[string]any{"path": protectedPath, "content": "overwritten"}},
		},
	}
	res := runTSClient(t, dir, plan)

	if res.Server.Name != "massgen" {
		t.Errorf("server name = %q, want massgen", res.Server.Name)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema["type"] != "object" {
			t.Errorf("tool %s: input schema type %v", tool.Name, tool.InputSchema["type"])
		}
	}
	for _, want := range []string{"read_file", "write_file", "mcp__fs__read_text_file", "mcp__fs__write_file"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if len(res.Results) != 6 {
		t.Fatalf("got %d results, want 6: %+v", len(res.Results), res.Results)
	}
	checks := []struct {
		name      string
		wantError bool
		want      string
		notWant   string
	}{
		{"read_file allowed", false, "color: red", ""},
		{"read_file sibling denied", true, "file-context-sibling", "secret sibling"},
		{"write_file protected denied", true, "protected-path", ""},
		{"mcp fs read allowed", false, "color: red", ""},
		{"mcp fs sibling denied", true, "file-context-sibling", "secret sibling"},
		{"mcp fs protected write denied", true, "protected-path", ""},
	}
	for i, c := range checks {
		r := res.Results[i]
		if r.IsError != c.wantError {
			t.Errorf("%s: isError = %v, want %v; text: %s", c.name, r.IsError, c.wantError, r.Text)
		}
		if c.want != "" && !strings.Contains(r.Text, c.want) {
			t.Errorf("%s: %s lacks %q", c.name, r.Text, c.want)
		}
		if c.notWant != "" && strings.Contains(r.Text, c.notWant) {
			t.Errorf("%s: %s leaks %q", c.name, r.Text, c.notWant)
		}
	}
	if b, _ := os.ReadFile(protectedPath); string(b) != "golden data" {
		t.Errorf("protected file changed: %q", b)
	}
	// Every call was audited in the run's log folder.
	audits, _ := filepath.Glob(filepath.Join(dir, ".massgen", "logs", "log_*", "permissions.jsonl"))
	if len(audits) != 1 {
		t.Fatalf("audit logs: %v", audits)
	}
	if b, _ := os.ReadFile(audits[0]); !strings.Contains(string(b), "golden.txt") {
		t.Errorf("audit log lacks the denied write:\n%s", b)
	}
}
