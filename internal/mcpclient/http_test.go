package mcpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/configs"
)

// TestConnectStreamableHTTP reaches a streamable-HTTP MCP server by url (MassGen's `url:` form).
func TestConnectStreamableHTTP(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	ext, errs := Connect(t.Context(), []configs.MCPServer{{Name: "remote", Type: "streamable-http", URL: hs.URL}}, nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	t.Cleanup(func() { _ = Close(ext) })
	tools := ext["remote"].Tools()
	if len(tools) != 1 || tools[0].Name != "echo" || tools[0].Description != "Echoes text" {
		t.Fatalf("tools = %+v", tools)
	}
	if props, _ := tools[0].Parameters["properties"].(map[string]any); props["text"] == nil {
		t.Errorf("schema lost its properties: %v", tools[0].Parameters)
	}
	r := ext["remote"].Call(t.Context(), "echo", map[string]any{"text": "hi"})
	if r.IsError || !strings.Contains(r.Content, "echo: hi") {
		t.Errorf("call = %+v", r)
	}
	// Bad arguments are rejected by the server's schema validation: an error result.
	r = ext["remote"].Call(t.Context(), "echo", map[string]any{"text": 42})
	if !r.IsError {
		t.Errorf("call with bad args = %+v, want an error result", r)
	}
}

func TestConnectUnreachableURL(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	_, errs := Connect(t.Context(), []configs.MCPServer{{Name: "gone", URL: url}}, nil, nil)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `mcp server "gone" failed to start`) {
		t.Errorf("errs = %v", errs)
	}
}
