package backends

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// ccServerName is the name the claude CLI knows massgen's tool server by: the model sees the
// tools as mcp__massgen__<tool>.
const ccServerName = "massgen"

// ccToolPrefix is what the claude CLI puts before the name of a tool of ccServerName.
const ccToolPrefix = "mcp__" + ccServerName + "__"

// ccBridge offers a request's tools to one claude process as an MCP server on the loopback
// interface. It runs nothing itself: each call the model makes is handed to Generate through
// calls and answered with the result the orchestrator sends back, so every call goes through
// the orchestrator's own Toolset (its permission checks, sandbox, audit and events), exactly as
// a call made by any other backend's model.
type ccBridge struct {
	url   string // http://127.0.0.1:PORT/<secret>/mcp
	calls chan *ccCall
	srv   *http.Server

	closeOnce sync.Once
	done      chan struct{} // closed by Close: pending calls give up
}

// ccCall is one tool call from the model, waiting for its result.
type ccCall struct {
	name  string
	args  json.RawMessage
	reply chan ccResult // buffered: the answer never blocks
}

type ccResult struct {
	text    string
	isError bool
}

// ccSecretBytes is the length of the random path segment that is the bridge's only credential:
// any local process can reach a loopback port, none can guess 128 random bits.
const ccSecretBytes = 16

// newCCBridge starts the bridge serving tools. The listener is bound before it returns, so the
// claude process can connect as soon as it starts.
func newCCBridge(tools []ToolSpec, log *zap.Logger) (*ccBridge, error) {
	secret := make([]byte, ccSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("claude_code: tool server secret: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("claude_code: tool server: %w", err)
	}
	path := "/" + hex.EncodeToString(secret) + "/mcp"
	b := &ccBridge{
		url:   "http://" + ln.Addr().String() + path,
		calls: make(chan *ccCall),
		done:  make(chan struct{}),
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "massgen", Title: "massgen tools", Version: "1"}, nil)
	for _, t := range tools {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: objectSchema(t.Parameters)}, b.handle(t.Name))
	}
	mux := http.NewServeMux()
	mux.Handle(path, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second, ErrorLog: zap.NewStdLog(log)}
	go func() {
		if err := b.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("claude_code tool server stopped", zap.Error(err))
		}
	}()
	return b, nil
}

// objectSchema is a tool's schema as MCP requires it (the SDK panics on anything else): an
// object schema, never nil. The orchestrator's map is copied, not changed.
func objectSchema(s map[string]any) map[string]any {
	if s == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if t, ok := s["type"].(string); ok && t == "object" {
		return s
	}
	c := maps.Clone(s)
	c["type"] = "object"
	return c
}

// handle passes one call to Generate and waits for its result. A call the orchestrator will
// never answer (the execution ended) fails when the bridge closes.
func (b *ccBridge) handle(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		c := &ccCall{name: name, args: args, reply: make(chan ccResult, 1)}
		select {
		case b.calls <- c:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.done:
			return nil, errors.New("massgen ended this call")
		}
		select {
		case r := <-c.reply:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.text}}, IsError: r.isError}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.done:
			return nil, errors.New("massgen ended this call")
		}
	}
}

// config is the --mcp-config JSON naming the bridge as the only MCP server.
func (b *ccBridge) config() []byte {
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		ccServerName: map[string]any{"type": "http", "url": b.url},
	}})
	return data
}

// Close stops the server; calls still waiting get an error.
func (b *ccBridge) Close() {
	b.closeOnce.Do(func() {
		close(b.done)
		_ = b.srv.Close()
	})
}
