package backends

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// ccServerName is the name the CLIs know massgen's tool server by: the model sees the tools as
// mcp__massgen__<tool> (claude, and codex's namespace mcp__massgen) or mcp_massgen_<tool>
// (gemini).
const ccServerName = "massgen"

// ccToolPrefix is what the claude CLI puts before the name of a tool of ccServerName.
const ccToolPrefix = "mcp__" + ccServerName + "__"

// ccBridge offers a request's tools to one CLI process as an MCP server on the loopback
// interface. It runs nothing itself: each call the model makes is handed to Generate through
// calls and answered with the result the orchestrator sends back, so every call goes through
// the orchestrator's own Toolset (its permission checks, sandbox, audit and events), exactly as
// a call made by any other backend's model.
type ccBridge struct {
	url string // http://127.0.0.1:PORT/<secret>/mcp
	// tokenURL and token are the other way in: http://127.0.0.1:PORT/mcp with the header
	// "Authorization: Bearer <token>", for CLIs that can read a token from their environment
	// (the secret then never sits in a file or on a command line).
	tokenURL, token string
	calls           chan *ccCall
	srv             *http.Server

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
// CLI can connect as soon as it starts. delay holds back the first answer (tests: a slow
// bridge).
func newCCBridge(tools []ToolSpec, delay time.Duration, log *zap.Logger) (*ccBridge, error) {
	secret := make([]byte, ccSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("tool server secret: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tool server: %w", err)
	}
	path := "/" + hex.EncodeToString(secret) + "/mcp"
	b := &ccBridge{
		url:      "http://" + ln.Addr().String() + path,
		tokenURL: "http://" + ln.Addr().String() + "/mcp",
		token:    hex.EncodeToString(secret),
		calls:    make(chan *ccCall),
		done:     make(chan struct{}),
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "massgen", Title: "massgen tools", Version: "1"}, nil)
	for _, t := range tools {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: objectSchema(t.Parameters)}, b.handle(t.Name))
	}
	mux := http.NewServeMux()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if delay > 0 {
		h = slowStart(h, delay)
	}
	mux.Handle(path, h)
	mux.Handle("/mcp", bearerOnly(b.token, h))
	b.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second, ErrorLog: zap.NewStdLog(log)}
	go func() {
		if err := b.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("massgen's tool server for the CLI stopped", zap.Error(err))
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

// bearerOnly passes only requests that carry "Authorization: Bearer <token>".
func bearerOnly(token string, h http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// slowStart delays the handler's first request (the client's initialize) by d.
func slowStart(h http.Handler, d time.Duration) http.Handler {
	var first atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Close stops the server; calls still waiting get an error.
func (b *ccBridge) Close() {
	b.closeOnce.Do(func() {
		close(b.done)
		_ = b.srv.Close()
	})
}
