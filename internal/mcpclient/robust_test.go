package mcpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/configs"
)

// A server that never answers a call: the call ends at the per-call timeout as an error result
// (not at the run's timeout), and the server keeps serving other calls.
func TestCallTimeoutOnHangingServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hang", Version: "1"}, nil)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	type in struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "hang"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "ok"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	ext, errs := ConnectWith(t.Context(), Options{Servers: []configs.MCPServer{{Name: "slow", URL: hs.URL}}, CallTimeout: 300 * time.Millisecond})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	t.Cleanup(func() { _ = Close(ext) })
	r := ext["slow"].Call(t.Context(), "hang", nil)
	if !r.IsError || !strings.Contains(r.Content, "no answer within") {
		t.Errorf("hanging call = %+v, want a timeout error result", r)
	}
	if r := ext["slow"].Call(t.Context(), "ok", nil); r.IsError || !strings.Contains(r.Content, "fine") {
		t.Errorf("call after a timeout = %+v", r)
	}
}

// Broken schemas from a server are reduced to ones providers accept.
func TestToolFromMCPRepairsSchemas(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		want   map[string]any
	}{
		{name: "nil", schema: nil, want: map[string]any{"type": "object"}},
		{name: "missing type", schema: map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}},
			want: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}},
		{name: "not an object", schema: map[string]any{"type": "string"}, want: map[string]any{"type": "object"}},
		{name: "type not a string", schema: map[string]any{"type": 42}, want: map[string]any{"type": "object"}},
		{name: "properties not an object", schema: map[string]any{"type": "object", "properties": "x", "required": "a"}, want: map[string]any{"type": "object"}},
		{name: "schema is a string", schema: "garbage", want: map[string]any{"type": "object"}},
		{name: "valid kept", schema: map[string]any{"type": "object", "required": []any{"a"}}, want: map[string]any{"type": "object", "required": []any{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolFromMCP(&mcp.Tool{Name: "x", InputSchema: tt.schema}).Parameters
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("schema %v -> %v, want %v", tt.schema, got, tt.want)
			}
		})
	}
}

// A server that goes away mid-run: later calls are error results, not panics or hangs.
func TestServerGoneMidRun(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "gone", Version: "1"}, nil)
	type in struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "ok"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	ext, errs := ConnectWith(t.Context(), Options{Servers: []configs.MCPServer{{Name: "gone", URL: hs.URL}}, CallTimeout: 5 * time.Second})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	t.Cleanup(func() { _ = Close(ext) })
	if r := ext["gone"].Call(t.Context(), "ok", nil); r.IsError {
		t.Fatalf("first call = %+v", r)
	}
	hs.CloseClientConnections()
	hs.Close()
	if r := ext["gone"].Call(t.Context(), "ok", nil); !r.IsError || !strings.Contains(r.Content, `mcp server \"gone\"`) {
		t.Errorf("call to a server that went away = %+v, want an error result naming it", r)
	}
}
