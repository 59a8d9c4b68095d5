package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Limits on one client message (docs/mcp.md). Anything past them is refused with a JSON-RPC
// error before it is parsed, so a hostile client costs bounded memory and stack.
const (
	// MaxLineBytes bounds one message line (a write_file call carries the whole file).
	MaxLineBytes = 8 << 20
	// MaxDepth bounds the nesting of objects and arrays in one message.
	MaxDepth = 128
)

// JSON-RPC error codes the guard answers with.
const (
	CodeParseError     = jsonrpc.CodeParseError     // -32700: not JSON, or nested too deeply
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest // -32600: JSON, but not one JSON-RPC message
)

// LineError is why a line was refused: the code and message of the JSON-RPC error sent back.
type LineError struct {
	Code    int
	Message string
}

// CheckLine checks one client line: it returns the message to pass on (trimmed; nil for a blank
// line), or the error to answer with. Batches (a JSON array) are refused: MCP 2025-06-18 dropped
// them, and the SDK ends the session on one.
func CheckLine(line []byte) ([]byte, *LineError) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if len(line) > MaxLineBytes {
		return nil, &LineError{CodeInvalidRequest, fmt.Sprintf("Invalid Request: message longer than %d bytes", MaxLineBytes)}
	}
	if d := depth(line); d > MaxDepth {
		return nil, &LineError{CodeParseError, fmt.Sprintf("Parse error: nesting deeper than %d levels", MaxDepth)}
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v) // for the reason
		return nil, &LineError{CodeParseError, fmt.Sprintf("Parse error: %v", err)}
	}
	if line[0] == '[' {
		return nil, &LineError{CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported"}
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return nil, &LineError{CodeInvalidRequest, fmt.Sprintf("Invalid Request: %v", err)}
	}
	return line, nil
}

// depth is the deepest nesting of objects and arrays in data, counted without parsing (strings
// skipped), so that it is cheap and iterative whatever the input. It stops counting past MaxDepth.
func depth(data []byte) int {
	d, deepest, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			if d > deepest {
				deepest = d
				if deepest > MaxDepth {
					return deepest
				}
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}
