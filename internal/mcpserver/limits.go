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

// LineError is why a line was refused: the code and message of the JSON-RPC error sent back,
// and the id of the request it answers (nil: null, the id could not be read).
type LineError struct {
	Code    int
	Message string
	ID      json.RawMessage
}

// Messages of the refusals the guard answers with.
var (
	tooLongMessage = fmt.Sprintf("Invalid Request: message longer than %d bytes", MaxLineBytes)
	tooDeepMessage = fmt.Sprintf("nesting deeper than %d levels", MaxDepth)
)

// CheckLine checks one client line: it returns the message to pass on (trimmed; nil for a blank
// line), or the error to answer with. Batches (a JSON array) are refused: MCP 2025-06-18 dropped
// them, and the SDK ends the session on one. A request refused for its size or depth, or for
// not being JSON-RPC, is answered with -32600 and its id when the id can be read (the client is
// waiting on it); otherwise with id null, -32700 for what is not JSON or too deep to parse.
func CheckLine(line []byte) ([]byte, *LineError) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if len(line) > MaxLineBytes {
		return nil, refusal(CodeInvalidRequest, tooLongMessage, scanID(line))
	}
	if d := depth(line); d > MaxDepth {
		if id := scanID(line); id != nil {
			return nil, refusal(CodeInvalidRequest, "Invalid Request: "+tooDeepMessage, id)
		}
		return nil, refusal(CodeParseError, "Parse error: "+tooDeepMessage, nil)
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v) // for the reason
		return nil, refusal(CodeParseError, fmt.Sprintf("Parse error: %v", err), nil)
	}
	if line[0] == '[' {
		return nil, refusal(CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported", nil)
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return nil, refusal(CodeInvalidRequest, fmt.Sprintf("Invalid Request: %v", err), scanID(line))
	}
	return line, nil
}

func refusal(code int, message string, id json.RawMessage) *LineError {
	return &LineError{Code: code, Message: message, ID: id}
}

// scanID is the id of the request in data, or nil (see idScanner).
func scanID(data []byte) json.RawMessage {
	var s idScanner
	s.feed(data)
	return s.result()
}

// maxIDBytes bounds the id read from a refused message; maxKeyBytes the member names read.
const (
	maxIDBytes  = 256
	maxKeyBytes = 64 // "method" with every letter escaped fits
)

// idScanner reads the id of a JSON-RPC request from its text as the text goes by, in constant
// memory and without parsing it (the text may be too long to keep or too deep to parse): the
// top-level object's "id" member, when it is a string or a number, in a message that has a
// "method" member (a request, not a response). Feed it the text in pieces, then call result.
type idScanner struct {
	phase    scanPhase
	depth    int
	inString bool
	escaped  bool
	key      []byte // the top-level member name being read (up to maxKeyBytes)
	member   string // the top-level member whose value is being read
	id       []byte // the id's text, as read
	idDone   bool   // the id's value was read to its end
	idBad    bool   // not a string or number, or too long
	method   bool   // a top-level "method" member was seen
}

type scanPhase uint8

const (
	phaseStart      scanPhase = iota // before the top-level value
	phaseKey                         // expecting a member name or '}'
	phaseInKey                       // in a member name
	phaseColon                       // expecting ':'
	phaseValue                       // expecting a member's value
	phaseInValue                     // in a member's value
	phaseAfterValue                  // expecting ',' or '}'
	phaseEnd                         // the top-level object ended, or it is not an object
)

func (s *idScanner) feed(data []byte) {
	for i := 0; i < len(data); i++ {
		if s.decided() {
			return
		}
		if s.inString && !s.escaped && s.phase != phaseInKey && !(s.phase == phaseInValue && s.member == "id" && s.depth == 1) {
			// Inside a string nobody reads (a file's content): jump to its next quote or escape.
			j := bytes.IndexAny(data[i:], `"\`)
			if j < 0 {
				return
			}
			i += j
		}
		s.step(data[i])
	}
}

// decided: nothing more in the text can change the result.
func (s *idScanner) decided() bool {
	return s.phase == phaseEnd || s.idBad || (s.idDone && s.method)
}

func (s *idScanner) step(c byte) {
	capturing := s.phase == phaseInValue && s.member == "id" && s.depth == 1 && !s.idDone
	if s.inString {
		if capturing {
			s.capture(c)
		}
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.inString = false
			if s.phase == phaseInKey {
				s.member = ""
				if len(s.key) < maxKeyBytes {
					s.member = string(s.key)
					if bytes.IndexByte(s.key, '\\') >= 0 { // "\u0069d" is "id" too
						_ = json.Unmarshal([]byte(`"`+s.member+`"`), &s.member)
					}
				}
				s.phase = phaseColon
			} else if s.depth == 1 {
				s.endValue()
			}
			return
		}
		if s.phase == phaseInKey && len(s.key) < maxKeyBytes {
			s.key = append(s.key, c)
		}
		return
	}
	space := c == ' ' || c == '\t' || c == '\r' || c == '\n'
	switch s.phase {
	case phaseStart:
		switch {
		case space:
		case c == '{':
			s.depth, s.phase = 1, phaseKey
		default:
			s.phase = phaseEnd
		}
	case phaseKey:
		switch {
		case space:
		case c == '"':
			s.inString, s.key, s.phase = true, s.key[:0], phaseInKey
		default: // '}' or not JSON
			s.phase = phaseEnd
		}
	case phaseColon:
		switch {
		case space:
		case c == ':':
			s.phase = phaseValue
		default:
			s.phase = phaseEnd
		}
	case phaseValue:
		if space {
			return
		}
		s.phase = phaseInValue
		if s.member == "method" && c == '"' {
			s.method = true
		}
		if s.member == "id" && !s.idDone {
			s.id = s.id[:0]
			s.capture(c)
		}
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
			if s.member == "id" && !s.idDone {
				s.idBad = true
			}
		}
	case phaseInValue:
		switch {
		case s.depth > 1: // inside an object or array value
			switch c {
			case '"':
				s.inString = true
			case '{', '[':
				s.depth++
			case '}', ']':
				s.depth--
				if s.depth == 1 {
					s.endValue()
				}
			}
		case space || c == ',' || c == '}': // the end of a number or literal
			s.endValue()
			s.step(c)
		case capturing:
			s.capture(c)
		}
	case phaseAfterValue:
		switch {
		case space:
		case c == ',':
			s.phase = phaseKey
		default: // '}' or not JSON
			s.phase = phaseEnd
		}
	}
}

func (s *idScanner) capture(c byte) {
	if len(s.id) >= maxIDBytes {
		s.idBad = true
		return
	}
	s.id = append(s.id, c)
}

func (s *idScanner) endValue() {
	if s.member == "id" && !s.idDone {
		s.idDone = true
	}
	s.phase = phaseAfterValue
}

// result is the request's id as JSON text, or nil when there is none that can be answered.
func (s *idScanner) result() json.RawMessage {
	if !s.method || !s.idDone || s.idBad || len(s.id) == 0 || !json.Valid(s.id) {
		return nil
	}
	if c := s.id[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return nil // null, true, false
	}
	return json.RawMessage(bytes.Clone(s.id))
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
