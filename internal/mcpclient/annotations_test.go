package mcpclient

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's readOnlyHint reaches the Toolset (planning mode runs only read-only tools); a tool
// without annotations, or declared not read-only (destructive or not), may act on the world.
func TestReadOnlyHintIsKept(t *testing.T) {
	for _, tt := range []struct {
		name string
		ann  *mcp.ToolAnnotations
		want bool
	}{
		{"no annotations", nil, false},
		{"read-only", &mcp.ToolAnnotations{ReadOnlyHint: true}, true},
		{"not read-only, not destructive", &mcp.ToolAnnotations{ReadOnlyHint: false}, false},
		{"destructive", &mcp.ToolAnnotations{DestructiveHint: new(true)}, false},
	} {
		if got := toolFromMCP(&mcp.Tool{Name: "x", Annotations: tt.ann}).ReadOnly; got != tt.want {
			t.Errorf("%s: ReadOnly = %v, want %v", tt.name, got, tt.want)
		}
	}
}
