package toolscmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// TestMain: execute_command re-executes this test binary as the sandbox helper.
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}

type project struct{ dir string }

func newProject(t *testing.T, extra string) *project {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for f, c := range map[string]string{"src/main.go": "package main\n", "src/golden/g.json": "{}", "outside/secret.txt": "secret"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := `agents:
  - id: agent_a
    backend: {type: openai, model: gpt-5, cwd: ws_a}
orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: temp_workspaces
  context_paths:
    - path: src
      permission: write
      protected_paths: [golden]
` + extra
	if err := os.WriteFile(filepath.Join(dir, "cfg.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return &project{dir: dir}
}

func (p *project) opts() (*Options, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
		Getwd:     func() (string, error) { return p.dir, nil },
		HomeDir:   func() (string, error) { return filepath.Join(p.dir, "outside"), nil },
		LookupEnv: func(string) (string, bool) { return "", false },
	}
	return &Options{
		IO:        f.IO,
		OpenAgent: f.OpenAgent,
		Target:    cmdutil.AgentRequest{Config: filepath.Join(p.dir, "cfg.yaml"), Agent: "agent_a"},
	}, out, errOut
}

func TestListRun(t *testing.T) {
	p := newProject(t, "")
	o, out, _ := p.opts()
	if err := listRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"read_file (read)  args: head, path*, tail", "write_file (write)", "execute_command (read)", "DIRECTORY ACCESS RESTRICTIONS"} {
		if !strings.Contains(s, want) {
			t.Errorf("list output lacks %q:\n%s", want, s)
		}
	}
	o, out, _ = p.opts()
	o.JSON, o.Target.Final = true, true
	if err := listRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var tools []toolOut
	if err := json.Unmarshal(out.Bytes(), &tools); err != nil || len(tools) < 18 {
		t.Fatalf("json list: %v (%d tools)", err, len(tools))
	}
	if tools[0].Parameters["type"] != "object" {
		t.Errorf("parameters = %v", tools[0].Parameters)
	}
}

// TestListIsTheRegistry: `tools list` prints massgen's tools from their one registry
// (filesystem.Builtins): the same tools in the same order, each with its declared schema, its
// write flag and its description (followed by the agent's directory limits). A tool added to the
// registry (one new file) is listed with nothing else changed.
func TestListIsTheRegistry(t *testing.T) {
	p := newProject(t, "")
	reg := filesystem.Builtins()
	for _, final := range []bool{false, true} {
		o, out, _ := p.opts()
		o.JSON, o.Target.Final = true, final
		if err := listRun(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		var listed []toolOut
		if err := json.Unmarshal(out.Bytes(), &listed); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range listed {
			got = append(got, tl.Name)
		}
		if !slices.Equal(got, names(reg)) {
			t.Fatalf("final=%v: tools list --json lists %v\nthe registry holds %v", final, got, names(reg))
		}
		for i, tl := range listed {
			d := reg[i]
			want, _ := json.Marshal(d.Schema())
			got, _ := json.Marshal(tl.Parameters)
			if string(got) != string(want) {
				t.Errorf("%s: listed schema %s, declared %s", tl.Name, got, want)
			}
			if tl.Write != d.Writes() || !strings.HasPrefix(tl.Description, d.Description()+"\n\n") {
				t.Errorf("%s: listed write=%v %.60q, declared write=%v %.60q", tl.Name, tl.Write, tl.Description, d.Writes(), d.Description())
			}
		}
	}
	o, out, _ := p.opts()
	if err := listRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var heads []string
	for _, line := range strings.Split(out.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, " ") {
			name, _, _ := strings.Cut(line, " ")
			heads = append(heads, name)
		}
	}
	if !slices.Equal(heads, names(reg)) {
		t.Errorf("tools list prints %v\nthe registry holds %v", heads, names(reg))
	}
}

func TestCallRun(t *testing.T) {
	p := newProject(t, "")
	ws := filepath.Join(p.dir, ".massgen", "workspaces", "ws_a")
	tests := []struct {
		name  string
		final bool
		tool  string
		args  string
		code  int
		has   string
	}{
		{"read context", false, "read_file", `{"path":"` + p.dir + `/src/main.go"}`, 0, "package main"},
		{"write workspace", false, "write_file", `{"path":"notes.md","content":"hi"}`, 0, "bytes_written"},
		{"coordination cannot write context", false, "write_file", `{"path":"` + p.dir + `/src/x.go","content":"x"}`, 1, "denied"},
		{"final writes context", true, "write_file", `{"path":"` + p.dir + `/src/x.go","content":"x"}`, 0, "created"},
		{"protected", true, "write_file", `{"path":"` + p.dir + `/src/golden/g.json","content":"x"}`, 1, "protected"},
		{"outside", false, "read_file", `{"path":"` + p.dir + `/outside/secret.txt"}`, 1, "denied"},
		{"command", false, "execute_command", `{"command":"echo hello"}`, 0, "hello"},
		{"bad json", false, "read_file", `{"path":`, 2, ""},
		{"unknown tool", false, "no_such_tool", `{}`, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, out, errOut := p.opts()
			o.Tool, o.Args, o.Target.Final = tt.tool, tt.args, tt.final
			err := callRun(context.Background(), o)
			if code := cmdutil.CodeOf(err); code != tt.code {
				t.Fatalf("exit %d, want %d (err %v, stdout %s, stderr %s)", code, tt.code, err, out, errOut)
			}
			if tt.has != "" && !strings.Contains(out.String(), tt.has) {
				t.Errorf("stdout %q lacks %q", out, tt.has)
			}
			if tt.code != 2 {
				var m map[string]any
				if err := json.Unmarshal(out.Bytes(), &m); err != nil {
					t.Errorf("stdout is not one JSON object: %q", out)
				}
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes.md")); err != nil || string(b) != "hi" {
		t.Errorf("workspace file: %q %v", b, err)
	}
	// An audit line was written to a run log folder.
	logs, _ := filepath.Glob(filepath.Join(p.dir, ".massgen", "logs", "log_*", "permissions.jsonl"))
	if len(logs) == 0 {
		t.Fatal("no audit log written")
	}
	found := false
	for _, l := range logs {
		if b, _ := os.ReadFile(l); strings.Contains(string(b), "read_file") {
			found = true
		}
	}
	if !found {
		t.Error("audit logs do not mention the call")
	}
}

func TestCallCreatesOnlyTheWorkspace(t *testing.T) {
	p := newProject(t, "")
	o, out, _ := p.opts()
	o.Tool, o.Args = "list_allowed_directories", "{}"
	if err := callRun(context.Background(), o); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".massgen", "workspaces", "ws_a")); err != nil {
		t.Fatal("workspace not created")
	}
	for _, d := range []string{"snapshots", "temp_workspaces", "trash"} {
		if _, err := os.Stat(filepath.Join(p.dir, ".massgen", d)); err == nil {
			t.Errorf(".massgen/%s created", d)
		}
	}
}

func TestCommandSandboxNoneWarns(t *testing.T) {
	p := newProject(t, "command_sandbox: none\n")
	o, _, errOut := p.opts()
	o.Tool, o.Args = "execute_command", `{"command":"true"}`
	if err := callRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "WITHOUT a kernel sandbox") {
		t.Errorf("no warning on stderr: %q", errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getwd: os.Getwd, LookupEnv: func(string) (string, bool) { return "", false }, HomeDir: os.UserHomeDir}
	for _, args := range [][]string{{"call", "--agent", "a", "read_file", "{}"}, {"call", "--config", "x.yaml", "read_file", "{}"}, {"call", "--config", "x", "--agent", "a"}, {}} {
		cmd := NewCmd(f)
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if code := cmdutil.CodeOf(cmd.Execute()); code != cmdutil.ExitUsage {
			t.Errorf("tools %v: exit %d, want 2", args, code)
		}
	}
}

// names are the tools' names in order.
func names(s tooldecl.Set) []string {
	out := make([]string, len(s))
	for i, t := range s {
		out[i] = t.Name()
	}
	return out
}
