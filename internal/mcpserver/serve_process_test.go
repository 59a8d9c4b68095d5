package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/lane"
)

// serveConfig is one scripted agent with a workspace: every tool is offered, write tools and
// execute_command included.
const serveConfig = "agents:\n  - id: agent_a\n    backend:\n      type: scripted\n      cwd: ws\n      script:\n        - text: unused\n"

// pipeToServe runs `massgen mcp serve` with input on stdin, then the end of input, and returns
// its stdout lines once it exits; exit status 0 is required.
func pipeToServe(t *testing.T, bin, dir, input string) []string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, "mcp", "serve", "--config", "massgen.yaml", "--agent", "agent_a")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir()}
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp serve: %v\nstderr:\n%s", err, stderr.String())
	}
	return strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
}

const (
	initializeLine  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// TestServeAnswersEveryRequestBeforeEOF: a client that writes its requests and closes stdin gets
// every answer before `massgen mcp serve` exits (the SDK alone cancels what is in flight at the
// end of input and drops the replies: [], [1] or [1,2] came back for ids 1-3). Each round pipes
// tools/list, ping, a directory listing and a command, then the end of input.
func TestServeAnswersEveryRequestBeforeEOF(t *testing.T) {
	lane.Long(t)
	bin := buildMassgen(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "massgen.yaml"), serveConfig)
	writeFile(t, filepath.Join(dir, ".massgen", "workspaces", "ws", "a.txt"), "a")
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_directory","arguments":{"path":"."}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"execute_command","arguments":{"command":"echo hi"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"ping"}`,
	}
	input := strings.Join(append([]string{initializeLine, initializedLine}, requests...), "\n") + "\n"
	for round := range 10 {
		var ids []int
		for _, l := range pipeToServe(t, bin, dir, input) {
			var r struct {
				ID    *int            `json:"id"`
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.ID == nil {
				t.Fatalf("round %d: reply %q: %v", round, l, err)
			}
			if r.Error != nil {
				t.Errorf("round %d: id %d answered with an error: %s", round, *r.ID, r.Error)
			}
			ids = append(ids, *r.ID)
		}
		slices.Sort(ids)
		if want := []int{0, 1, 2, 3, 4, 5, 6}; !slices.Equal(ids, want) {
			t.Fatalf("round %d: answered ids %v, want %v", round, ids, want)
		}
	}
}

// TestServeAnnotationsTellTheTruth: `mcp serve` announces readOnlyHint only for tools that never
// change anything, and destructiveHint for those that may overwrite or remove: execute_command
// is not read-only (a real client ran it without asking when it was announced so) and is
// destructive; create_directory only adds. Every tool offered is in the table, so a new tool
// needs a decision here.
func TestServeAnnotationsTellTheTruth(t *testing.T) {
	const (
		readOnly    = "read-only"
		additive    = "additive"
		destructive = "destructive"
	)
	want := map[string]string{
		"read_file": readOnly, "read_multiple_files": readOnly, "list_directory": readOnly, "directory_tree": readOnly,
		"search_files": readOnly, "get_file_info": readOnly, "list_allowed_directories": readOnly,
		"compare_directories": readOnly, "compare_files": readOnly,
		"create_directory": additive,
		"write_file":       destructive, "edit_file": destructive, "move_file": destructive, "copy_file": destructive,
		"copy_files_batch": destructive, "delete_file": destructive, "delete_files_batch": destructive,
		"execute_command": destructive,
	}
	bin := buildMassgen(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "massgen.yaml"), serveConfig)
	lines := pipeToServe(t, bin, dir, strings.Join([]string{initializeLine, initializedLine, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}, "\n")+"\n")
	var list struct {
		ID     int `json:"id"`
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				Annotations *struct {
					ReadOnlyHint    *bool `json:"readOnlyHint"`
					DestructiveHint *bool `json:"destructiveHint"`
				} `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
	}
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &list) != nil || list.ID != 1 {
		t.Fatalf("tools/list: %q", lines)
	}
	seen := map[string]bool{}
	for _, tool := range list.Result.Tools {
		seen[tool.Name] = true
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint == nil {
			t.Errorf("%s: no readOnlyHint", tool.Name)
			continue
		}
		got := readOnly
		switch {
		case *a.ReadOnlyHint && a.DestructiveHint != nil:
			got = "read-only with a destructiveHint"
		case *a.ReadOnlyHint:
		case a.DestructiveHint == nil: // MCP's default when absent: destructive
			got = destructive + " (by default)"
		case *a.DestructiveHint:
			got = destructive
		default:
			got = additive
		}
		if w, ok := want[tool.Name]; !ok {
			t.Errorf("%s: announced %s; add it to the table", tool.Name, got)
		} else if got != w {
			t.Errorf("%s: announced %s, want %s", tool.Name, got, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s: not offered", name)
		}
	}
	if t.Failed() {
		fmt.Fprintln(os.Stderr, lines[1])
	}
}
