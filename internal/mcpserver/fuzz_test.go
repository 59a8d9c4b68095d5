package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzCheckLine: whatever a client sends, a line passed on to the SDK is one JSON-RPC message,
// within the limits, on one line; anything else is refused with -32700 or -32600.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","method":"x"}`, `[]`, `42`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[[[[{}]]]]}}`, `{"a":"\"[{"}`, "\xff", `{"jsonrpc":"2.0",`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, err := CheckLine(line)
		if err != nil {
			if msg != nil || (err.Code != CodeParseError && err.Code != CodeInvalidRequest) {
				t.Fatalf("refusal %+v with message %q", err, msg)
			}
			if err.ID != nil {
				if _, derr := jsonrpc.MakeID(decodeAny(err.ID)); derr != nil || err.Code != CodeInvalidRequest {
					t.Fatalf("refusal of %q answered with id %s (code %d): %v", line, err.ID, err.Code, derr)
				}
			}
			return
		}
		if msg == nil {
			if len(bytes.TrimSpace(line)) != 0 {
				t.Fatalf("non-blank line %q dropped without an error", line)
			}
			return
		}
		if !json.Valid(msg) || bytes.ContainsAny(msg, "\n") || depth(msg) > MaxDepth || len(msg) > MaxLineBytes {
			t.Fatalf("passed on %q", msg)
		}
		if _, derr := jsonrpc.DecodeMessage(msg); derr != nil {
			t.Fatalf("passed on a message the SDK refuses: %q: %v", msg, derr)
		}
	})
}

func decodeAny(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return struct{}{} // not JSON: MakeID refuses it
	}
	return v
}
