package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCheckLine(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		line string
		code int    // 0: passed on
		id   string // the id answered with ("": null)
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0, ""},
		{"request with CRLF and spaces", "  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \r\n", 0, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{"response", `{"jsonrpc":"2.0","id":"a","result":{}}`, 0, ""},
		{"nesting at the limit", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + deep(MaxDepth-2) + `}}`, 0, ""},
		{"brackets inside strings do not count", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"` + strings.Repeat("[{", 5000) + `\""}}`, 0, ""},
		{"not JSON", `{"jsonrpc":"2.0",`, CodeParseError, ""},
		{"garbage", "\x00\xff hello", CodeParseError, ""},
		{"two values on a line", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, CodeParseError, ""},
		{"50,000 deep", deep(50000), CodeParseError, ""},
		{"deep inside a request", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + deep(MaxDepth) + `}}`, CodeInvalidRequest, "1"},
		{"50,000 deep inside a request, id after", `{"jsonrpc":"2.0","method":"x","params":{"a":` + deep(50000) + `},"id":"deep"}`, CodeInvalidRequest, `"deep"`},
		{"deep without a method", `{"jsonrpc":"2.0","id":1,"result":` + deep(MaxDepth) + `}`, CodeParseError, ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, ""},
		{"a number", `42`, CodeInvalidRequest, ""},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, "1"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, ""},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, ""},
		{"too long", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"` + strings.Repeat("a", MaxLineBytes) + `"}}`, CodeInvalidRequest, "1"},
		{"too long, string id", `{"jsonrpc":"2.0","id":"a\"b","method":"x","params":{"s":"` + strings.Repeat("a", MaxLineBytes) + `"}}`, CodeInvalidRequest, `"a\"b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := CheckLine([]byte(tt.line))
			switch {
			case tt.code == 0 && (err != nil || !json.Valid(msg) || bytes.ContainsAny(msg, "\r\n")):
				t.Errorf("refused or mangled: %q %+v", msg, err)
			case tt.code != 0 && (err == nil || err.Code != tt.code || msg != nil):
				t.Errorf("got %q %+v, want error %d", msg, err, tt.code)
			case tt.code != 0 && string(err.ID) != tt.id:
				t.Errorf("answered with id %s, want %q", err.ID, tt.id)
			}
		})
	}
	if msg, err := CheckLine([]byte(" \r\n")); msg != nil || err != nil {
		t.Errorf("blank line: %q %v", msg, err)
	}
}

// `massgen mcp serve` (the real binary) answers every bad line with a JSON-RPC error, with the
// request's id when it can be read (the client waits on it), and keeps serving: a malformed
// line, 50,000-deep JSON, a 10 MB and a 24 MiB request, a request nested 50,000 deep, a batch, a
// bare number; after each, the next request is answered.
func TestServeSurvivesBadInput(t *testing.T) {
	bin := buildMassgen(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "massgen.yaml"), "agents:\n  - id: agent_a\n    backend:\n      type: scripted\n      cwd: ws\n      script:\n        - text: unused\n")
	cmd := exec.CommandContext(t.Context(), bin, "mcp", "serve", "--config", "massgen.yaml", "--agent", "agent_a")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir()}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	type reply struct {
		ID     any             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(line string) reply {
		t.Helper()
		done := make(chan error, 1)
		go func() { _, err := io.WriteString(stdin, line+"\n"); done <- err }()
		raw, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no answer to %.60q: %v\nstderr:\n%s", line, err, stderr.String())
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		var r reply
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("answer %q: %v", raw, err)
		}
		return r
	}
	toolsList := func(id int) {
		t.Helper()
		r := send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list"}`)
		if r.Error != nil || !bytes.Contains(r.Result, []byte(`"read_file"`)) {
			t.Fatalf("tools/list: %+v %s", r.Error, r.Result)
		}
	}
	if r := send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	toolsList(1)
	bad := []struct {
		name, line string
		code       int
		id         any // nil: null
	}{
		{"malformed", `{"jsonrpc":"2.0","id":2,"method":`, -32700, nil},
		{"50,000 deep", strings.Repeat("[", 50000) + strings.Repeat("]", 50000), -32700, nil},
		{"10 MB request", `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"x","content":"` + strings.Repeat("a", 10_000_000) + `"}}}`, -32600, 30.0},
		{"24 MiB line", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"x","content":"` + strings.Repeat("a", 24<<20) + `"}}}`, -32600, 3.0},
		{"request 50,000 deep", `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"read_file","arguments":{"path":` + strings.Repeat("[", 50000) + strings.Repeat("]", 50000) + `}}}`, -32600, "deep"},
		{"wrong version", `{"jsonrpc":"1.0","id":31,"method":"ping"}`, -32600, 31.0},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, nil},
		{"number", `42`, -32600, nil},
	}
	for i, b := range bad {
		r := send(b.line)
		if r.Error == nil || r.Error.Code != b.code || r.ID != b.id {
			t.Errorf("%s: answer %+v (id %v), want error %d with id %v", b.name, r.Error, r.ID, b.code, b.id)
		}
		toolsList(100 + i)
	}
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("mcp serve exited with %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mcp serve did not exit after stdin closed")
	}
	if _, err := os.Stat(filepath.Join(dir, "ws", "x")); err == nil {
		t.Error("the refused 24 MiB call was executed")
	}
}

// BenchmarkCheckLine: the guard's cost on a tools/call carrying a 1 MiB file.
func BenchmarkCheckLine(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"x","content":"` + strings.Repeat("a", 1<<20) + `"}}}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := CheckLine(line); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIDScanner: the id of a refused request is read from its text fed in pieces of any size
// (a line too long to keep goes by chunk after chunk): only a string or number id of a message
// with a method, at the top level.
func TestIDScanner(t *testing.T) {
	tests := []struct {
		text, want string // want "": no id
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, `7`},
		{` { "method" : "x" , "id" : -12.5e3 } `, `-12.5e3`},
		{`{"method":"x","params":{"id":1,"a":[{"id":2}]},"id":"top"}`, `"top"`},
		{`{"method":"x","id":"with \" quote and \\ backslash"}`, `"with \" quote and \\ backslash"`},
		{`{"method":"x","params":{"s":"\"id\":5"},"id":6}`, `6`},
		{`{"id":7,"result":{}}`, ``},          // a response: no method
		{`{"id":null,"method":"x"}`, ``},      // null is no id to answer
		{`{"id":true,"method":"x"}`, ``},      // nor a boolean
		{`{"id":{"a":1},"method":"x"}`, ``},   // nor an object
		{`{"id":[1],"method":"x"}`, ``},       // nor an array
		{`{"method":1,"id":3}`, ``},           // method not a string
		{`[{"id":1,"method":"x"}]`, ``},       // a batch
		{`{"identifier":1,"method":"x"}`, ``}, // another member
		{`{"id":"` + strings.Repeat("x", maxIDBytes) + `","method":"x"}`, ``},
		{`{"id":1,"id":2,"method":"x"}`, `1`},
		{`{"id":4,"method":"x","params":` + strings.Repeat("[", 50000), `4`}, // cut short: the id was read
	}
	for _, tt := range tests {
		for _, size := range []int{1, 2, 3, 7, len(tt.text)} {
			var s idScanner
			for i := 0; i < len(tt.text); i += size {
				s.feed([]byte(tt.text[i:min(i+size, len(tt.text))]))
			}
			if got := string(s.result()); got != tt.want {
				t.Errorf("%.60s in pieces of %d: id %q, want %q", tt.text, size, got, tt.want)
			}
		}
	}
}

// BenchmarkIDScanner: reading the id of a refused line costs one pass over it (a line too long
// to keep streams through the scanner chunk by chunk). The worst case: the method comes last, so
// the whole line is read; a file's content without escapes, and one full of them.
func BenchmarkIDScanner(b *testing.B) {
	for _, bc := range []struct{ name, content string }{
		{"plain", strings.Repeat("abcdefgh[{", 1<<20)},
		{"escapes", strings.Repeat("abcdefgh\\\"[{", 1<<20)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			line := []byte(`{"jsonrpc":"2.0","id":7,"params":{"name":"write_file","arguments":{"path":"x","content":"` + bc.content + `"}},"method":"tools/call"}`)
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if id := scanID(line); string(id) != "7" {
					b.Fatalf("id %s", id)
				}
			}
		})
	}
}
