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

// FuzzIDScanner: on any JSON object, the scanner reads the same id as a JSON decoder does (the
// first "id" member, a string or a number, when a string "method" member is present), whatever
// the pieces it is fed in; on anything else it never reads an id that is not a string or number.
func FuzzIDScanner(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"method":"x","id":"a\"b"}`, `{"id":1,"id":2,"method":"x"}`,
		`{"method":"x","params":{"id":3},"id":-1.5e2}`, `{"id":[1],"method":"x"}`, `{"a":"\\","id":2,"method":"m"}`, `{"\u0069d":5,"\u006d\u0065thod":"m"}`,
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, piece uint8) {
		size := int(piece)%16 + 1
		var s idScanner
		for i := 0; i < len(data); i += size {
			s.feed(data[i:min(i+size, len(data))])
		}
		got := s.result()
		if got != nil {
			if _, err := jsonrpc.MakeID(decodeAny(got)); err != nil {
				t.Fatalf("%q: id %s: %v", data, got, err)
			}
		}
		if !json.Valid(data) {
			return
		}
		want := referenceID(data)
		if string(got) != string(want) {
			t.Fatalf("%q: scanner read id %q, the decoder %q", data, got, want)
		}
	})
}

// referenceID is what a JSON decoder finds: the first top-level "id" (string or number) of an
// object with a string "method", nil otherwise.
func referenceID(data []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	first := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if k := tok.(string); first[k] == nil {
			first[k] = v
		}
	}
	id, method := first["id"], first["method"]
	if len(method) == 0 || method[0] != '"' || len(id) == 0 || len(id) > maxIDBytes {
		return nil
	}
	if c := id[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return nil
	}
	return id
}
