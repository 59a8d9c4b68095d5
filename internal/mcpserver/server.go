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
// with its reason, never a protocol error. A bad line (see CheckLine) is answered with a JSON-RPC
// error (with the request's id when it can be read) and skipped. At the end of the input Serve
// answers every request it read before it returns (see drainingTransport).
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
			Annotations: annotations(t),
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
	transport := &drainingTransport{&mcp.IOTransport{
		Reader:        io.NopCloser(newLineGuard(in, w)),
		Writer:        w,
		MaxLineLength: MaxLineBytes + 1, // lines reach the SDK trimmed, with their newline
	}}
	if err := srv.Run(ctx, transport); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp serve: %w", err)
	}
	return nil
}

// annotations tell a client what a tool may do, as its declaration says (filesystem.Tool):
// readOnlyHint only for tools that never change anything (not execute_command, whose commands
// are judged word by word but may write), destructiveHint for those that may overwrite or
// remove (delete, move, overwrite, commands). Clients decide on these whether to ask the user.
func annotations(t filesystem.Tool) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly}
	if !t.ReadOnly {
		destructive := t.Destructive
		a.DestructiveHint = &destructive
	}
	return a
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
		if tooLong != nil {
			g.reply(tooLong)
			continue
		}
		msg, perr := CheckLine(line)
		switch {
		case perr != nil:
			g.reply(perr)
		case msg != nil:
			g.pending = append(msg, '\n')
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// readLine reads one line, keeping at most MaxLineBytes of it: past that the rest of the line is
// read and dropped, so a huge line costs bounded memory, and the refusal (tooLong) carries the
// request's id, read as the line went by.
func (g *lineGuard) readLine() (line []byte, tooLong *LineError, err error) {
	var ids *idScanner // reading the id of a line too long to keep
	for {
		chunk, err := g.r.ReadSlice('\n')
		switch {
		case ids != nil:
			ids.feed(chunk)
		case len(line)+len(chunk) > MaxLineBytes+2: // + "\r\n"
			ids = &idScanner{}
			ids.feed(line)
			ids.feed(chunk)
			line = nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if ids != nil {
			return nil, refusal(CodeInvalidRequest, tooLongMessage, ids.result()), err
		}
		return line, nil, err
	}
}

// errorReply is a JSON-RPC error response; a nil ID is written as null.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   replyError      `json:"error"`
}

type replyError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// reply answers a refused line with a JSON-RPC error: with the request's id when it could be
// read, else null.
func (g *lineGuard) reply(le *LineError) {
	data, err := json.Marshal(errorReply{JSONRPC: "2.0", ID: le.ID, Error: replyError{le.Code, le.Message}})
	if err != nil {
		return
	}
	_, _ = g.w.Write(append(data, '\n'))
}
