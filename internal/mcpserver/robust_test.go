package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckLine(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		line string
		code int // 0: passed on
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0},
		{"request with CRLF and spaces", "  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \r\n", 0},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
		{"response", `{"jsonrpc":"2.0","id":"a","result":{}}`, 0},
		{"nesting at the limit", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + deep(MaxDepth-2) + `}}`, 0},
		{"brackets inside strings do not count", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"` + strings.Repeat("[{", 5000) + `\""}}`, 0},
		{"not JSON", `{"jsonrpc":"2.0",`, CodeParseError},
		{"garbage", "\x00\xff hello", CodeParseError},
		{"two values on a line", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, CodeParseError},
		{"50,000 deep", deep(50000), CodeParseError},
		{"deep inside a request", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + deep(MaxDepth) + `}}`, CodeParseError},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest},
		{"a number", `42`, CodeInvalidRequest},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest},
		{"too long", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"` + strings.Repeat("a", MaxLineBytes) + `"}}`, CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := CheckLine([]byte(tt.line))
			switch {
			case tt.code == 0 && (err != nil || !json.Valid(msg) || bytes.ContainsAny(msg, "\r\n")):
				t.Errorf("refused or mangled: %q %+v", msg, err)
			case tt.code != 0 && (err == nil || err.Code != tt.code || msg != nil):
				t.Errorf("got %q %+v, want error %d", msg, err, tt.code)
			}
		})
	}
	if msg, err := CheckLine([]byte(" \r\n")); msg != nil || err != nil {
		t.Errorf("blank line: %q %v", msg, err)
	}
}

// `massgen mcp serve` (the real binary) answers every bad line with a JSON-RPC error, id null,
// and keeps serving: a malformed line, 50,000-deep JSON, a 24 MiB line, a batch, a bare number;
// after each, the next request is answered.
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
		r := send(`{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/list"}`)
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
	}{
		{"malformed", `{"jsonrpc":"2.0","id":2,"method":`, -32700},
		{"50,000 deep", strings.Repeat("[", 50000) + strings.Repeat("]", 50000), -32700},
		{"24 MiB line", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"x","content":"` + strings.Repeat("a", 24<<20) + `"}}}`, -32600},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600},
		{"number", `42`, -32600},
	}
	for i, b := range bad {
		r := send(b.line)
		if r.Error == nil || r.Error.Code != b.code || r.ID != nil {
			t.Errorf("%s: answer %+v (id %v), want error %d with id null", b.name, r.Error, r.ID, b.code)
		}
		toolsList(2 + i)
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
