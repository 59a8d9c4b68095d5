package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/filesystem"
)

// Serve offers every tool of ts to one MCP client speaking newline-delimited JSON-RPC on in/out
// (stdio for `massgen mcp serve`) until the client disconnects or ctx is done. Each call goes
// through ts.Call, so it gets exactly the permission checks, sandbox and audit an agent's own
// call gets; a denial is an error result with its reason, never a protocol error.
func Serve(ctx context.Context, ts *filesystem.Toolset, in io.Reader, out io.Writer) error {
	if ts == nil {
		return errors.New("mcptools: Serve: nil Toolset")
	}
	srv := mcp.NewServer(implementation, nil)
	for _, t := range ts.Tools() {
		schema := t.Parameters
		if schema == nil {
			schema = map[string]any{"type": "object"}
		}
		if _, ok := schema["type"]; !ok {
			// MCP requires an object schema; copy rather than change the Toolset's map.
			s := make(map[string]any, len(schema)+1)
			for k, v := range schema {
				s[k] = v
			}
			s["type"] = "object"
			schema = s
		}
		name := t.Name
		srv.AddTool(&mcp.Tool{
			Name:        name,
			Description: t.Description,
			InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: !t.Write},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.Arguments
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			r := ts.Call(ctx, name, args)
			return &mcp.CallToolResult{
				Content: []mcp.Content{&mcp.TextContent{Text: r.Content}},
				IsError: r.IsError,
			}, nil
		})
	}
	transport := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	if err := srv.Run(ctx, transport); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp serve: %w", err)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
