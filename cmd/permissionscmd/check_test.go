package permissionscmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// project is a directory with a config, a workspace, a context path with a protected dir and a
// file outside everything.
type project struct {
	dir string
}

func newProject(t testing.TB) *project {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"src/golden", "outside", ".massgen/workspaces/ws_a"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"src/main.go", "src/golden/g.json", "outside/secret.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := `agents:
  - id: agent_a
    backend: {type: openai, model: gpt-5, cwd: ws_a}
  - id: agent_b
    backend: {type: openai, model: gpt-5, cwd: ws_b}
orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: temp_workspaces
  context_paths:
    - path: src
      permission: write
      protected_paths: [golden]
`
	if err := os.WriteFile(filepath.Join(dir, "cfg.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return &project{dir: dir}
}

func (p *project) opts(stdin string) (*CheckOptions, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errOut},
		Getwd:     func() (string, error) { return p.dir, nil },
		HomeDir:   func() (string, error) { return filepath.Join(p.dir, "outside"), nil },
		LookupEnv: func(string) (string, bool) { return "", false },
	}
	return &CheckOptions{
		IO:        f.IO,
		OpenAgent: f.OpenAgent,
		Target:    cmdutil.AgentRequest{Config: filepath.Join(p.dir, "cfg.yaml"), Agent: "agent_a"},
	}, out, errOut
}

func TestCheckRun(t *testing.T) {
	p := newProject(t)
	ws := filepath.Join(p.dir, ".massgen/workspaces/ws_a")
	tests := []struct {
		name   string
		set    func(o *CheckOptions)
		code   int
		prefix string // stdout starts with
		has    string
	}{
		{"read context", func(o *CheckOptions) { o.Read = p.dir + "/src/main.go" }, 0, "allow\t" + p.dir + "/src/main.go\t", "context path"},
		{"write context as coordination", func(o *CheckOptions) { o.Write = p.dir + "/src/main.go" }, 1, "deny\t" + p.dir + "/src/main.go\t", "read-only during coordination"},
		{"write context as final", func(o *CheckOptions) { o.Write = p.dir + "/src/main.go"; o.Target.Final = true }, 0, "allow\t", ""},
		{"protected", func(o *CheckOptions) { o.Write = p.dir + "/src/golden/g.json"; o.Target.Final = true }, 1, "deny\t", "protected"},
		{"relative resolves in the workspace", func(o *CheckOptions) { o.Write = "new.txt" }, 0, "allow\t" + ws + "/new.txt\t", ""},
		{"outside", func(o *CheckOptions) { o.Read = p.dir + "/outside/secret.txt" }, 1, "deny\t", "outside every path"},
		{"--context adds a path", func(o *CheckOptions) {
			o.Read = p.dir + "/outside/secret.txt"
			o.Target.Contexts = []string{"outside:read"}
		}, 0, "allow\t", ""},
		{"tool call", func(o *CheckOptions) {
			o.Tool = "read_multiple_files"
			o.Args = `{"paths":["a","` + p.dir + `/outside/secret.txt"]}`
		}, 1, "deny\t" + p.dir + "/outside/secret.txt\t", "paths[1]"},
		{"command", func(o *CheckOptions) { o.Tool = "execute_command"; o.Args = `{"command":"echo sudoku > out.txt"}` }, 0, "allow\t", ""},
		{"dangerous command", func(o *CheckOptions) { o.Tool = "execute_command"; o.Args = `{"command":"sudo ls"}` }, 1, "deny\t\t", "sudo"},
		{"other agent's workspace", func(o *CheckOptions) { o.Read = p.dir + "/.massgen/workspaces/ws_b/x" }, 1, "deny\t", "another agent"},
		{"usage: nothing to check", func(o *CheckOptions) {}, 2, "", ""},
		{"usage: two things", func(o *CheckOptions) { o.Read = "a"; o.Write = "b" }, 2, "", ""},
		{"usage: bad args JSON", func(o *CheckOptions) { o.Tool = "read_file"; o.Args = "{" }, 2, "", ""},
		{"usage: no agent", func(o *CheckOptions) { o.Read = "a"; o.Target.Agent = "" }, 2, "", ""},
		{"config: unknown agent", func(o *CheckOptions) { o.Read = "a"; o.Target.Agent = "zed" }, 2, "", ""},
		{"config: missing file", func(o *CheckOptions) { o.Read = "a"; o.Target.Config = p.dir + "/nope.yaml" }, 2, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, out, _ := p.opts("")
			tt.set(o)
			err := checkRun(context.Background(), o)
			if code := cmdutil.CodeOf(err); code != tt.code {
				t.Fatalf("exit %d (%v), want %d; out %q", code, err, tt.code, out.String())
			}
			if !strings.HasPrefix(out.String(), tt.prefix) || !strings.Contains(out.String(), tt.has) {
				t.Fatalf("out %q; want prefix %q containing %q", out.String(), tt.prefix, tt.has)
			}
			if tt.code != 2 && strings.Count(out.String(), "\n") != 1 {
				t.Errorf("want exactly one line, got %q", out.String())
			}
		})
	}
	// It writes nothing: no .massgen/logs, no workspace for agent_b, no snapshots.
	for _, d := range []string{".massgen/logs", ".massgen/workspaces/ws_b", ".massgen/snapshots", ".massgen/temp_workspaces"} {
		if _, err := os.Stat(filepath.Join(p.dir, d)); err == nil {
			t.Errorf("check created %s", d)
		}
	}
}

func TestCheckBatch(t *testing.T) {
	p := newProject(t)
	in := strings.Join([]string{
		`{"tool":"read_file","args":{"path":"` + p.dir + `/src/main.go"}}`,
		`{"tool":"write_file","args":{"path":"` + p.dir + `/src/main.go","content":"x"}}`,
		`not json`,
		``,
		`{"read":"` + p.dir + `/outside/secret.txt"}`,
		`{"write":"x.txt"}`,
		`{"args":{}}`,
		`{"tool":"execute_command","args":{"command":"cat /etc/passwd"}}`,
	}, "\n")
	o, out, _ := p.opts(in)
	o.Batch = true
	if err := checkRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []struct {
		allowed bool
		has     string
	}{{true, "context path"}, {false, "read-only"}, {false, "line 3: invalid JSON"}, {false, "line 4: empty"},
		{false, "outside"}, {true, "workspace"}, {false, "line 7: no \"tool\""}, {false, "/etc/passwd"}}
	if len(lines) != len(want) {
		t.Fatalf("%d lines for %d inputs:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		var got struct {
			Allowed *bool   `json:"allowed"`
			Path    *string `json:"path"`
			Reason  string  `json:"reason"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil || got.Allowed == nil || got.Path == nil {
			t.Fatalf("line %d: %q (%v)", i+1, lines[i], err)
		}
		if *got.Allowed != w.allowed || !strings.Contains(got.Reason, w.has) {
			t.Errorf("line %d: %s; want allowed %v and %q", i+1, lines[i], w.allowed, w.has)
		}
	}
}

// batchInput is n lines cycling through allowed and denied calls, with the expected answers.
func batchInput(p *project, n int) ([]byte, []bool) {
	calls := []struct {
		line  string
		allow bool
	}{
		{`{"tool":"read_file","args":{"path":"` + p.dir + `/src/main.go"}}`, true},
		{`{"tool":"write_file","args":{"path":"notes/a.txt","content":"hello"}}`, true},
		{`{"tool":"write_file","args":{"path":"` + p.dir + `/src/golden/g.json","content":"x"}}`, false},
		{`{"tool":"read_file","args":{"path":"` + p.dir + `/outside/secret.txt"}}`, false},
		{`{"tool":"execute_command","args":{"command":"ls -la && cat src.txt > out.txt"}}`, true},
		{`{"tool":"copy_file","args":{"source_path":"a.txt","destination_path":"` + p.dir + `/src/b.txt"}}`, false},
	}
	var b bytes.Buffer
	want := make([]bool, n)
	for i := 0; i < n; i++ {
		c := calls[i%len(calls)]
		b.WriteString(c.line)
		b.WriteByte('\n')
		want[i] = c.allow
	}
	return b.Bytes(), want
}

func buildBinary(t testing.TB) string {
	t.Helper()
	bin := testbin.For(t)
	return bin
}

func runBatchBinary(t testing.TB, bin string, p *project, input []byte) []byte {
	cmd := exec.Command(bin, "permissions", "check", "--config", filepath.Join(p.dir, "cfg.yaml"), "--agent", "agent_a", "--batch")
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(p.dir, "outside"))
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("massgen permissions check --batch: %v\n%s", err, stderr.String())
	}
	return out
}

// The real binary answers 100,000 lines, in order, correctly.
func TestBatchBinary100k(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	p := newProject(t)
	bin := buildBinary(t)
	input, want := batchInput(p, 100_000)
	out := runBatchBinary(t, bin, p, input)
	sc := bufio.NewScanner(bytes.NewReader(out))
	i := 0
	for sc.Scan() {
		if i >= len(want) {
			t.Fatalf("more output lines than input lines")
		}
		line := sc.Bytes()
		wantPrefix := fmt.Sprintf(`{"allowed":%v,`, want[i])
		if !bytes.HasPrefix(line, []byte(wantPrefix)) {
			t.Fatalf("line %d: %s; want %s...", i+1, line, wantPrefix)
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%d output lines for %d inputs", i, len(want))
	}
}

// BenchmarkBatchBinary100k reports the wall time of `--batch` over 100,000 lines (real binary).
func BenchmarkBatchBinary100k(b *testing.B) {
	p := newProject(b)
	bin := buildBinary(b)
	input, _ := batchInput(p, 100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runBatchBinary(b, bin, p, input)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/100k-lines")
}

// BenchmarkBatchInProcess measures the decision loop alone (no process start, no config load).
func BenchmarkBatchInProcess(b *testing.B) {
	p := newProject(b)
	o, _, _ := p.opts("")
	ctx := context.Background()
	env, err := o.OpenAgent(ctx, cmdutil.AgentRequest{Config: o.Target.Config, Agent: o.Target.Agent, DecideOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	guard, err := env.Agent.Guard(env.Role)
	if err != nil {
		b.Fatal(err)
	}
	c := &checker{agent: env.Agent, role: env.Role, pol: guard.Policy()}
	input, _ := batchInput(p, 10_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := runBatch(ctx, c, bytes.NewReader(input), &bytes.Buffer{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/line")
}

// Project rules in .massgen/permissions.yaml are honoured, per agent too.
func TestCheckProjectRules(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	p := newProject(t)
	rules := "deny: [\"execute_command(git push*)\"]\nagents:\n  agent_a:\n    deny: [read_file]\n"
	if err := os.WriteFile(filepath.Join(p.dir, ".massgen", "permissions.yaml"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	if to, _, _ := p.trustOpts(""); trustRun(to) != nil { // approved, as the user would
		t.Fatal("trust failed")
	}
	for _, tc := range []struct {
		agent, tool, args string
		code              int
	}{
		{"agent_a", "execute_command", `{"command":"git push origin main"}`, 1},
		{"agent_b", "execute_command", `{"command":"git push origin main"}`, 1},
		{"agent_a", "read_file", `{"path":"x"}`, 1},
		{"agent_b", "read_file", `{"path":"x"}`, 0},
	} {
		o, out, _ := p.opts("")
		o.Target.Agent, o.Tool, o.Args = tc.agent, tc.tool, tc.args
		if code := cmdutil.CodeOf(checkRun(context.Background(), o)); code != tc.code {
			t.Errorf("%s %s %s: exit %d (%s), want %d", tc.agent, tc.tool, tc.args, code, out.String(), tc.code)
		}
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".massgen", "permissions.yaml"), []byte("mode: yolo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, _, _ := p.opts("")
	o.Read = "x"
	if err := checkRun(context.Background(), o); cmdutil.CodeOf(err) != 2 || !strings.Contains(err.Error(), "permissions.yaml") {
		t.Errorf("bad project file: %v", err)
	}
}

// The cobra command wires every flag into CheckOptions.
func TestNewCmdCheckFlags(t *testing.T) {
	var got *CheckOptions
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getwd: os.Getwd, HomeDir: os.UserHomeDir, LookupEnv: os.LookupEnv}
	cmd := NewCmdCheck(f, func(_ context.Context, o *CheckOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--config", "c.yaml", "--agent", "a1", "--final", "--context", "src:write", "--context", "docs:read",
		"--tool", "read_file", "--args", `{"path":"x"}`})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Target.Config != "c.yaml" || got.Target.Agent != "a1" || !got.Target.Final || strings.Join(got.Target.Contexts, ",") != "src:write,docs:read" ||
		got.Tool != "read_file" || got.Args != `{"path":"x"}` || got.Batch || got.Read != "" {
		t.Fatalf("options %+v", got)
	}
	cmd = NewCmdCheck(f, func(_ context.Context, o *CheckOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--agent", "a1", "--batch"})
	if err := cmd.Execute(); err != nil || !got.Batch {
		t.Fatalf("--batch: %v %+v", err, got)
	}
	cmd = NewCmdCheck(f, nil)
	cmd.SetArgs([]string{"stray"})
	if err := cmd.Execute(); err == nil {
		t.Error("a positional argument was accepted")
	}
}
