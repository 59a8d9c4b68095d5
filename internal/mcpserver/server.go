// Package mcpserver offers an agent's Toolset, permission checks included, to any MCP client over
// newline-delimited JSON-RPC (stdio for `massgen mcp serve`). Every client line is checked before
// the MCP SDK sees it, so malformed, too deep or too long input gets a JSON-RPC error and the
// server keeps serving.
package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/mcpclient"
)

// Serve offers every tool of ts to one MCP client speaking newline-delimited JSON-RPC on in/out
// until the client disconnects or ctx is done. Each call goes through ts.Call, so it gets exactly
// the permission checks, sandbox and audit an agent's own call gets; a denial is an error result
// with its reason, never a protocol error. A bad line (see Limits) is answered with a JSON-RPC
// error (id null) and skipped.
func Serve(ctx context.Context, ts *filesystem.Toolset, in io.Reader, out io.Writer) error {
	if ts == nil {
		return errors.New("mcpserver: Serve: nil Toolset")
	}
	srv := mcp.NewServer(mcpclient.Implementation(), nil)
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
	w := &lockedWriter{w: out}
	transport := &mcp.IOTransport{
		Reader:        io.NopCloser(newLineGuard(in, w)),
		Writer:        w,
		MaxLineLength: MaxLineBytes + 1, // lines reach the SDK trimmed, with their newline
	}
	if err := srv.Run(ctx, transport); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp serve: %w", err)
	}
	return nil
}

// lockedWriter serialises whole writes: the SDK writes each message with one Write, and so do
// the error replies of the line guard.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// readerSize is the guard's read buffer; lines may be longer (up to MaxLineBytes).
const readerSize = 64 << 10

// lineGuard hands the SDK only lines that are well-formed JSON-RPC messages within the limits;
// every other line is answered on w with a JSON-RPC error and dropped.
type lineGuard struct {
	r       *bufio.Reader
	w       io.Writer
	pending []byte // the checked line being read by the SDK
	err     error  // end of input, returned once pending is drained
}

func newLineGuard(in io.Reader, w io.Writer) *lineGuard {
	return &lineGuard{r: bufio.NewReaderSize(in, readerSize), w: w}
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, tooLong, err := g.readLine()
		if err != nil {
			g.err = err // the last line (without a newline) is still checked
		}
		if tooLong {
			g.reply(CodeInvalidRequest, fmt.Sprintf("Invalid Request: message longer than %d bytes", MaxLineBytes))
			continue
		}
		msg, perr := CheckLine(line)
		switch {
		case perr != nil:
			g.reply(perr.Code, perr.Message)
		case msg != nil:
			g.pending = append(msg, '\n')
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// readLine reads one line, keeping at most MaxLineBytes of it: past that the rest of the line is
// read and dropped, so a huge line costs bounded memory.
func (g *lineGuard) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := g.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxLineBytes+2 { // + "\r\n"
				line, tooLong = nil, true
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

func (g *lineGuard) reply(code int, message string) {
	data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message}})
	if err != nil {
		return
	}
	_, _ = g.w.Write(append(data, '\n'))
}
