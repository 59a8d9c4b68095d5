package mcpcmd

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// TestOneVersionEverywhere: the built binary reports the same version in `--version`, in the
// MCP server's initialize answer (`mcp serve`) and in the first line of the log that run wrote.
func TestOneVersionEverywhere(t *testing.T) {
	bin := testbin.For(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("agents:\n  - id: agent_a\n    backend:\n      type: scripted\n      cwd: ws\n      script:\n        - text: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+dir)
	cmd := exec.Command(bin, "--version")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("--version: %v", err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	want, ok := strings.CutPrefix(first, "massgen ")
	if !ok || want == "" {
		t.Fatalf("--version printed %q", out)
	}

	serve := exec.Command(bin, "mcp", "serve", "-c", "c.yaml", "--agent", "agent_a")
	serve.Dir, serve.Env = dir, env
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatalf("mcp serve: %v", err)
	}
	got := cs.InitializeResult().ServerInfo
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if got.Name != "massgen" || got.Version != want {
		t.Errorf("mcp serve says %s %s; --version says %s", got.Name, got.Version, want)
	}

	logs, _ := filepath.Glob(filepath.Join(dir, ".massgen", "logs", "*", "massgen.log"))
	if len(logs) != 1 {
		t.Fatalf("logs: %v", logs)
	}
	f, err := os.Open(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		t.Fatal("empty log")
	}
	var line struct{ Msg, Version string }
	if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Version != want {
		t.Errorf("log's first line %s: want version %q", sc.Bytes(), want)
	}
}
