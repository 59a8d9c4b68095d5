package mcpserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// repoRoot walks up from the test's directory to the folder holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// npmModule returns the path of an npm package file installed by `make test-deps`, or skips.
func npmModule(t *testing.T, rel string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; the MCP tests run real npm packages (see `make test-deps`)")
	}
	p := filepath.Join(repoRoot(t), ".cache", "npm", "node_modules", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is missing: run `make test-deps` to install the npm packages the MCP tests use", p)
	}
	return p
}

// fsServerScript is the real @modelcontextprotocol/server-filesystem entry point.
func fsServerScript(t *testing.T) string {
	return npmModule(t, "@modelcontextprotocol/server-filesystem/dist/index.js")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// textOf joins the text contents of a result (Serve only ever sends text).
func textOf(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
