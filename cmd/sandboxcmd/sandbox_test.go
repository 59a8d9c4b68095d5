package sandboxcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/toolscmd"
	"github.com/massgen-go/massgen/internal/sandbox"
)

// TestMain: execute_command re-executes this test binary as the sandbox helper.
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}

func newProject(t *testing.T, extra string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package main\n"), 0o644)
	// extra: more keys of agent_a.
	cfg := `agents:
  - id: agent_a
    backend: {type: openai, model: gpt-5, cwd: ws_a}
` + extra + `  - id: agent_b
    backend: {type: openai, model: gpt-5, cwd: ws_b}
orchestrator:
  context_paths:
    - path: src
      permission: write
`
	if err := os.WriteFile(filepath.Join(dir, "cfg.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func factory(dir string) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
		Getwd:     func() (string, error) { return dir, nil },
		HomeDir:   func() (string, error) { return filepath.Join(dir, "home"), nil },
		LookupEnv: func(string) (string, bool) { return "", false },
	}, out, errOut
}

// outcome is what a command did, as either way of running it reports it.
type outcome struct {
	ran    bool // massgen ran it (not denied)
	code   int
	stdout string
}

func exitCode(err error) int {
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

// viaTool runs command as `massgen tools call ... execute_command` does.
func viaTool(t *testing.T, dir, agent, command string) outcome {
	t.Helper()
	f, out, errOut := factory(dir)
	args, _ := json.Marshal(map[string]string{"command": command})
	cmd := toolscmd.NewCmdCall(f, nil)
	cmd.SetArgs([]string{"--config", filepath.Join(dir, "cfg.yaml"), "--agent", agent, "execute_command", string(args)})
	err := cmd.ExecuteContext(context.Background())
	var res struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Denied   bool   `json:"denied"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil || res.Denied {
		if exitCode(err) != 1 {
			t.Fatalf("tools call %q: %v %s %s", command, err, out, errOut)
		}
		return outcome{}
	}
	return outcome{ran: true, code: res.ExitCode, stdout: res.Stdout}
}

// viaSandboxRun runs argv with `massgen sandbox run`.
func viaSandboxRun(t *testing.T, dir string, agent string, argv ...string) (outcome, string) {
	t.Helper()
	f, out, errOut := factory(dir)
	cmd := NewCmdRun(f, nil)
	flags := []string{"--config", filepath.Join(dir, "cfg.yaml")}
	if agent != "" {
		flags = append(flags, "--agent", agent)
	}
	cmd.SetArgs(append(append(flags, "--"), argv...))
	err := cmd.ExecuteContext(context.Background())
	code := exitCode(err)
	if code == ExitNotRun {
		return outcome{}, errOut.String()
	}
	// The command's own status is silent; massgen's own errors say something.
	var ee *cmdutil.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.Err != nil) {
		t.Fatalf("sandbox run %q: %v %s", argv, err, errOut)
	}
	return outcome{ran: true, code: code, stdout: out.String()}, errOut.String()
}

// TestSandboxRunIsExecuteCommand: `massgen sandbox run -- ARGV` does what the agent's
// execute_command does with the same command: the same output, the same files written, the same
// refusals, the same network.
func TestSandboxRunIsExecuteCommand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the comparison runs where commands are sandboxed (Linux)")
	}
	if _, err := sandbox.Effective(""); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "host server") }))
	defer srv.Close()
	host := srv.Listener.Addr().String()
	for _, net := range []string{"", "    command_network: {mode: allowlist, allowed_domains: [\"" + host + "\"]}\n"} {
		dir := newProject(t, net)
		ws := filepath.Join(dir, ".massgen", "workspaces", "ws_a")
		tests := []struct {
			argv []string
			file string // written in the workspace
			ran  bool   // massgen runs it (the permission layer allows it)
		}{
			// /etc/hostname is outside the agent's paths: the permission layer refuses it, both ways.
			{[]string{"sh", "-c", "echo hi > x; cat /etc/hostname"}, "x", false},
			{[]string{"sh", "-c", "echo hi > x; cat x"}, "x", true},
			{[]string{"sh", "-c", "echo pwned > " + filepath.Join(dir, "src", "main.go")}, "", false},
			// A path the permission layer cannot see: the sandbox keeps the context path read-only.
			{[]string{"sh", "-c", "p=$(pwd)/../../../src/main.go; echo pwned > $p"}, "", true},
			{[]string{"curl", "-sS", "--max-time", "5", "http://" + host + "/"}, "", true},
			{[]string{"echo a b > z; cat z"}, "z", true},
		}
		for _, tt := range tests {
			command, err := CommandLine(tt.argv)
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			got := make([]outcome, 2)
			for i := range got {
				if tt.file != "" {
					os.Remove(filepath.Join(ws, tt.file))
				}
				if i == 0 {
					got[i] = viaTool(t, dir, "agent_a", command)
				} else {
					got[i], _ = viaSandboxRun(t, dir, "", tt.argv...) // agent_a: the first
				}
				if tt.file != "" {
					b, _ := os.ReadFile(filepath.Join(ws, tt.file))
					files = append(files, string(b))
				}
			}
			if got[0] != got[1] || got[0].ran != tt.ran {
				t.Errorf("%q (network %q): execute_command %+v, sandbox run %+v", tt.argv, net, got[0], got[1])
			}
			if len(files) == 2 && (files[0] != files[1] || tt.ran && files[0] == "") {
				t.Errorf("%q: files %q", tt.argv, files)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "src", "main.go")); string(b) != "package main\n" {
				t.Fatalf("%q: a coordination command wrote the context path", tt.argv)
			}
		}
	}
	// The network differs as the config says: off by default, the listed address in allowlist.
	dir := newProject(t, "")
	o, stderr := viaSandboxRun(t, dir, "agent_a", "curl", "-sS", "--max-time", "5", "http://"+host+"/")
	if o.code == 0 || !strings.Contains(stderr, "command network none") || !strings.Contains(stderr, "massgen: network is off") {
		t.Errorf("none: %+v %s", o, stderr)
	}
	dir = newProject(t, "    command_network: {mode: allowlist, allowed_domains: [\""+host+"\"]}\n")
	o, stderr = viaSandboxRun(t, dir, "agent_a", "curl", "-sS", "--max-time", "5", "http://"+host+"/")
	if o.code != 0 || o.stdout != "host server" || !strings.Contains(stderr, "massgen: network: "+host+" allowed") {
		t.Errorf("allowlist: %+v %s", o, stderr)
	}
	if o, _ := viaSandboxRun(t, dir, "agent_b", "curl", "-sS", "--max-time", "5", "http://"+host+"/"); o.code == 0 {
		t.Errorf("agent_b has no network but got %+v", o)
	}
}

func TestCommandLine(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"make test && echo ok"}, "make test && echo ok"},
		{[]string{"sh", "-c", "echo hi > x; cat /etc/hostname"}, "sh -c 'echo hi > x; cat /etc/hostname'"},
		{[]string{"echo", "it's", "$HOME"}, `echo "it's" '$HOME'`},
	} {
		got, err := CommandLine(tt.argv)
		if err != nil || got != tt.want {
			t.Errorf("CommandLine(%q) = %q, %v; want %q", tt.argv, got, err, tt.want)
		}
	}
}
