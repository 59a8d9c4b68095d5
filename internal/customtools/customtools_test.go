package customtools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/permissions"
)

// TestMain lets the test binary act as the command sandbox's helper (namespaces mode).
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}

// needSandbox skips when this machine cannot run sandboxed python3.
func needSandbox(t testing.TB) {
	t.Helper()
	if _, err := sandbox.Effective(""); err != nil {
		t.Skipf("no command sandbox here: %v", err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

const toolsPy = `"""Tools for the tests."""
import asyncio, json, os, time
from typing import List, Optional
from massgen.tool._result import ExecutionResult, TextContent

async def two_num_tool(x: int, y: int) -> ExecutionResult:
    """Add two numbers together.

    Args:
        x: First number
        y: Second number
    """
    print("chatter on stdout must not spoil the answer")
    return ExecutionResult(output_blocks=[TextContent(data=f"The sum of {x} and {y} is {x + y}")])

def plain(word: str, times: int = 2) -> str:
    """Repeat a word."""
    return word * times

def as_dict(key: str, secret: str = "", agent_cwd: Optional[str] = None):
    """Return a mapping."""
    return {"key": key, "secret": secret, "cwd": agent_cwd}

def stream(n: int):
    """Yield n results, one of them a log."""
    for i in range(n):
        yield ExecutionResult(output_blocks=[TextContent(data=str(i))], is_log=(i == 1))

def write_to(path: str, content: str) -> str:
    """Write content to path."""
    with open(path, "w") as f:
        f.write(content)
    return "wrote " + path

def read_from(path: str) -> str:
    """Read path."""
    with open(path) as f:
        return f.read()

def boom():
    """Raise."""
    raise ValueError("the tool failed")

def env_var(name: str) -> str:
    """An environment variable of the process."""
    return os.environ.get(name, "<unset>")

def big(n: int) -> str:
    """A long result."""
    return "\u00e9" * n

def slow(seconds: float):
    """Sleep."""
    time.sleep(seconds)
    return "woke"
`

// fixture is one agent's layout: a workspace, a read-only context path, a directory outside
// every root, and the tools file in its own directory (not readable to the agent).
type fixture struct {
	base, ws, proj, out, tools string
	cfg                        *configs.Config
	sb                         filesystem.CommandSandbox
}

func newFixture(t testing.TB, entries string) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{base: base, ws: filepath.Join(base, "ws"), proj: filepath.Join(base, "proj"), out: filepath.Join(base, "outside"),
		tools: filepath.Join(base, "tooldir", "tools.py")}
	for _, d := range []string{f.ws, f.proj, f.out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, f.tools, toolsPy)
	writeFile(t, filepath.Join(f.proj, "data.txt"), "project data")
	writeFile(t, filepath.Join(f.out, "secret.txt"), "outside secret")
	text := "agents:\n  - id: agent_a\n    backend:\n      type: openai\n      model: m\n      cwd: " + f.ws + "\n      cwd_owned: true\n      custom_tools:\n" + entries
	f.cfg, _, err = configs.LoadBytes("c.yaml", []byte(text), configs.LoadOptions{BaseDir: base})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	pol, err := permissions.New(permissions.Spec{Agent: "agent_a", Role: permissions.Coordination, Workspace: f.ws, Sandboxed: true,
		ContextPaths: []permissions.ContextPath{{Path: f.proj}}})
	if err != nil {
		t.Fatal(err)
	}
	f.sb = filesystem.CommandSandbox{Policy: filesystem.SandboxPolicy(pol), Workspace: f.ws}
	return f
}

func writeFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) provider(t testing.TB, o Options) *Provider {
	t.Helper()
	o.Config, o.Sandbox, o.Describe = f.cfg, f.sb, true
	p, err := New(context.Background(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

const allTools = `        - path: tooldir/tools.py
          function: [two_num_tool, plain, as_dict, stream, write_to, read_from, boom, slow, big]
          preset_args: [null, null, {secret: s3cret}, null, null, null, null, null, null]
          timeout_seconds: 2
`

func decode(t *testing.T, r filesystem.Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Content), &m); err != nil {
		t.Fatalf("result %q is not a JSON object: %v", r.Content, err)
	}
	return m
}

// Schemas are read from the functions (signature, type hints, docstring), minus what the
// config fills in; calls run in the sandbox and answer what MassGen's model would see.
func TestDescribeAndCall(t *testing.T) {
	lane.Long(t)
	needSandbox(t)
	f := newFixture(t, allTools)
	p := f.provider(t, Options{})
	tools := map[string]filesystem.Tool{}
	for _, tl := range p.Tools() {
		tools[tl.Name] = tl
	}
	add := tools["custom_tool__two_num_tool"]
	if add.Description != "Add two numbers together." {
		t.Errorf("description %q", add.Description)
	}
	wantSchema := `{"properties":{"x":{"description":"First number","type":"integer"},"y":{"description":"Second number","type":"integer"}},"required":["x","y"],"type":"object"}`
	if b, _ := json.Marshal(add.Parameters); string(b) != wantSchema {
		t.Errorf("schema %s\nwant   %s", b, wantSchema)
	}
	props := tools["custom_tool__as_dict"].Parameters["properties"].(map[string]any)
	if _, ok := props["secret"]; ok {
		t.Error("a preset argument is offered to the model")
	}
	if _, ok := props["agent_cwd"]; ok {
		t.Error("agent_cwd is offered to the model of an agent with a workspace")
	}

	tests := []struct {
		tool       string
		args       map[string]any
		wantResult string // "" : an error
		wantError  string
	}{
		{tool: "custom_tool__two_num_tool", args: map[string]any{"x": 123, "y": 456}, wantResult: "The sum of 123 and 456 is 579"},
		{tool: "custom_tool__plain", args: map[string]any{"word": "ab", "times": 3}, wantResult: "ababab"},
		{tool: "custom_tool__as_dict", args: map[string]any{"key": "k"}, wantResult: `{"key": "k", "secret": "s3cret", "cwd": "` + f.ws + `"}`},
		{tool: "custom_tool__stream", args: map[string]any{"n": 3}, wantResult: "02"},
		{tool: "custom_tool__as_dict", args: map[string]any{"key": "k", "secret": "mine"}, wantError: "argument(s) secret are set by the configuration"},
		{tool: "custom_tool__as_dict", args: map[string]any{"key": "k", "agent_cwd": "/"}, wantError: "argument(s) agent_cwd are set by the configuration"},
		{tool: "custom_tool__plain", args: map[string]any{"word": "a", "nope": 1}, wantError: "unexpected argument(s) nope (valid: times, word)"},
		{tool: "custom_tool__plain", args: map[string]any{}, wantError: "TypeError: plain() missing 1 required positional argument: 'word'"},
		{tool: "custom_tool__boom", wantError: "custom_tool__boom: ValueError: the tool failed"},
		{tool: "custom_tool__slow", args: map[string]any{"seconds": 30}, wantError: "custom_tool__slow: no result within 2s"},
	}
	// A result larger than what is read back is cut, saying so.
	for _, n := range []int{1000, 900 * 1000} {
		r := p.Call(context.Background(), "custom_tool__big", map[string]any{"n": n}, f.sb)
		text, _ := decode(t, r)["result"].(string)
		switch {
		case r.IsError:
			t.Errorf("big(%d): %.300s", n, r.Content)
		case n == 1000 && text != strings.Repeat("é", n):
			t.Errorf("big(%d) was changed: %.300s", n, text)
		case n > 1000 && (!strings.HasSuffix(text, "\n[... truncated: the result has 900000 characters]") || len(text) < 500*1000):
			t.Errorf("big(%d): %d bytes ending %q", n, len(text), text[max(0, len(text)-80):])
		}
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.wantError, func(t *testing.T) {
			r := p.Call(context.Background(), tt.tool, tt.args, f.sb)
			m := decode(t, r)
			if tt.wantError != "" {
				if !r.IsError || !strings.Contains(r.Message, tt.wantError) {
					t.Errorf("got %s, want an error containing %q", r.Content, tt.wantError)
				}
				return
			}
			if r.IsError || m["result"] != tt.wantResult {
				t.Errorf("got %s, want result %q", r.Content, tt.wantResult)
			}
		})
	}
}

// The sandbox is the boundary: a custom tool writes only where the agent may write and reads
// only what it may read, whatever its arguments say.
func TestCustomToolsAreSandboxed(t *testing.T) {
	lane.Long(t)
	needSandbox(t)
	for _, mode := range []sandbox.Mode{sandbox.ModeBubblewrap, sandbox.ModeNamespaces, sandbox.ModeLandlock} {
		t.Run(string(mode), func(t *testing.T) {
			if _, err := sandbox.Effective(mode); err != nil {
				t.Skipf("%s: %v", mode, err)
			}
			testSandboxed(t, mode)
		})
	}
}

func testSandboxed(t *testing.T, mode sandbox.Mode) {
	f := newFixture(t, allTools)
	f.sb.Mode = mode
	p := f.provider(t, Options{})
	call := func(tool string, args map[string]any) filesystem.Result {
		return p.Call(context.Background(), tool, args, f.sb)
	}
	if r := call("custom_tool__write_to", map[string]any{"path": filepath.Join(f.ws, "ok.txt"), "content": "mine"}); r.IsError {
		t.Fatalf("writing the workspace: %s", r.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "ok.txt")); string(b) != "mine" {
		t.Errorf("workspace file = %q", b)
	}
	for _, target := range []string{filepath.Join(f.out, "planted.txt"), filepath.Join(f.proj, "data.txt"), filepath.Join(f.base, "tooldir", "tools.py")} {
		r := call("custom_tool__write_to", map[string]any{"path": target, "content": "pwned"})
		if !r.IsError {
			t.Errorf("writing %s outside the writable roots succeeded: %s", target, r.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(f.out, "planted.txt")); err == nil {
		t.Error("a custom tool created a file outside the agent's writable roots")
	}
	if b, _ := os.ReadFile(filepath.Join(f.proj, "data.txt")); string(b) != "project data" {
		t.Errorf("read-only context file changed: %q", b)
	}
	if r := call("custom_tool__read_from", map[string]any{"path": filepath.Join(f.proj, "data.txt")}); r.IsError || decode(t, r)["result"] != "project data" {
		t.Errorf("reading a readable context path: %s", r.Content)
	}
	if r := call("custom_tool__read_from", map[string]any{"path": filepath.Join(f.out, "secret.txt")}); !r.IsError {
		t.Errorf("read a file outside every root: %s", r.Content)
	}
}

// What keeps a function from being offered is a problem at its config line: a module its file
// imports that is not installed (named), a function that does not exist, a preset argument the
// function does not take, a syntax error.
func TestDescribeProblems(t *testing.T) {
	lane.Long(t)
	needSandbox(t)
	tests := []struct {
		name, file, entry string
		want              []string
	}{
		{"missing module", "import massgen_no_such_module\ndef f(): pass\n", "function: f",
			[]string{"c.yaml:9: agents[0].backend.custom_tools[0].path: custom tool custom_tool__f: ", "t.py:1 imports the Python module massgen_no_such_module, which is not installed for "}},
		{"missing submodule", "import os\nfrom xml.no_such import x\ndef f(): pass\n", "function: f",
			[]string{"t.py:2 imports the Python module xml.no_such", "(pip install xml)"}},
		{"MassGen's own modules", "from massgen.logger_config import logger\ndef f(): pass\n", "function: f",
			[]string{"t.py:1 imports massgen.logger_config, a module of MassGen's Python package"}},
		{"missing function", "def f(): pass\ndef g(): pass\n", "function: [f, nope]",
			[]string{"c.yaml:10: agents[0].backend.custom_tools[0].function[1]: custom tool custom_tool__nope: ", "no function nope in the file (its functions: f, g)"}},
		{"preset the function does not take", "def f(a): pass\n", "function: f\n          preset_args: {b: 1}",
			[]string{"c.yaml:11: agents[0].backend.custom_tools[0].preset_args: custom tool custom_tool__f: f has no parameter b (its parameters: a)"}},
		{"syntax error", "def f(:\n  pass\n", "function: f", []string{"t.py:1: SyntaxError"}},
		{"raises on import", "raise RuntimeError('no config')\n", "function: f", []string{"loading ", "t.py:1 failed: RuntimeError: no config"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "        - path: t.py\n          "+tt.entry+"\n")
			writeFile(t, filepath.Join(f.base, "t.py"), tt.file)
			_, err := New(context.Background(), Options{Config: f.cfg, Sandbox: f.sb, Describe: true})
			var ve *configs.ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("err = %v, want one problem", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(ve.Problems[0].String(), w) {
					t.Errorf("problem %q lacks %q", ve.Problems[0], w)
				}
			}
		})
	}
}

// A function is read once per run however many agents offer it; deciding only reads nothing.
func TestDescribeIsCachedPerRun(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, "        - {path: tooldir/tools.py, function: plain}\n")
	cache := NewCache()
	first := f.provider(t, Options{Cache: cache})
	// A second agent's provider with the same cache: an interpreter that cannot run proves it
	// did not read the file again.
	broken := func(filesystem.CommandSandbox) (string, error) { return "/nonexistent/python3", nil }
	second := f.provider(t, Options{Cache: cache, LookPath: broken})
	a, _ := json.Marshal(first.Tools())
	b, _ := json.Marshal(second.Tools())
	if string(a) != string(b) {
		t.Errorf("cached tools differ:\n%s\n%s", a, b)
	}
	if _, err := New(context.Background(), Options{Config: f.cfg, Sandbox: f.sb, Describe: true, LookPath: broken}); err == nil {
		t.Error("a new cache read the file with a broken interpreter and succeeded")
	}
	p, err := New(context.Background(), Options{Config: f.cfg, Sandbox: f.sb, LookPath: broken})
	if err != nil {
		t.Fatalf("deciding only: %v", err)
	}
	if tl := p.Tools(); len(tl) != 1 || tl[0].Name != "custom_tool__plain" {
		t.Errorf("deciding only: tools %+v", tl)
	}
}

// Stopping the run stops the call and its process.
func TestCallIsCancelled(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, "        - {path: tooldir/tools.py, function: slow, timeout_seconds: 60}\n")
	p := f.provider(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan filesystem.Result)
	go func() { done <- p.Call(ctx, "custom_tool__slow", map[string]any{"seconds": 60}, f.sb) }()
	time.AfterFunc(300*time.Millisecond, cancel)
	select {
	case r := <-done:
		if !r.IsError || !strings.Contains(r.Message, "cancelled") {
			t.Errorf("cancelled call: %s", r.Content)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call outlived its cancellation")
	}
}

// Arguments too large for one command line are refused with a message, not a failed exec.
func TestHugeArgumentsRefused(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, "        - {path: tooldir/tools.py, function: plain}\n")
	p := f.provider(t, Options{})
	r := p.Call(context.Background(), "custom_tool__plain", map[string]any{"word": strings.Repeat("x", maxRequest)}, f.sb)
	if !r.IsError || !strings.Contains(r.Message, "at most") {
		t.Errorf("huge arguments: %s", r.Message)
	}
}

// The interpreter is the first python3 on PATH the sandbox lets commands run: one under a
// directory it hides (a pyenv shim in the home) is passed over.
func TestInterpreter(t *testing.T) {
	needSandbox(t)
	sys, err := exec.LookPath("python3")
	if err != nil {
		t.Skip(err)
	}
	home := t.TempDir()
	shim := filepath.Join(home, "shims", "python3")
	writeFile(t, shim, "#!/bin/sh\nexit 1\n")
	if err := os.Chmod(shim, 0o755); err != nil {
		t.Fatal(err)
	}
	var sysDirs []string
	for _, d := range []string{"/usr/bin", "/bin", "/usr/local/bin"} {
		if c := filepath.Join(d, "python3"); fileExists(c) {
			sysDirs = append(sysDirs, d)
		}
	}
	if len(sysDirs) == 0 {
		t.Skipf("no system python3 (only %s)", sys)
	}
	t.Setenv("PATH", filepath.Dir(shim)+string(os.PathListSeparator)+strings.Join(sysDirs, string(os.PathListSeparator)))
	got, err := Interpreter(filesystem.CommandSandbox{})
	if err != nil || strings.HasPrefix(got, home) {
		t.Errorf("Interpreter = %q, %v; want a system python3", got, err)
	}
	got, err = Interpreter(filesystem.CommandSandbox{Mode: sandbox.ModeNone})
	if err != nil || got != shim {
		t.Errorf("without a sandbox: %q, %v; want the first on PATH", got, err)
	}
	t.Setenv("PATH", filepath.Dir(shim))
	if _, err := Interpreter(filesystem.CommandSandbox{}); err == nil || !strings.Contains(err.Error(), "does not let commands read") {
		t.Errorf("only a hidden python3: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Interpreter(filesystem.CommandSandbox{}); err == nil || !strings.Contains(err.Error(), "not on PATH") {
		t.Errorf("no python3: %v", err)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// The tool's file lies where the agent may write: while calls run, the agent swaps it for a
// link to a secret outside its roots (and back). The file is granted to the process by its
// resolved name, never through a link, so no call ever runs the secret.
func TestSwappedToolFileNeverGrantsItsTarget(t *testing.T) {
	lane.Long(t)
	needSandbox(t)
	for _, mode := range []sandbox.Mode{sandbox.ModeBubblewrap, sandbox.ModeLandlock} {
		t.Run(string(mode), func(t *testing.T) {
			if _, err := sandbox.Effective(mode); err != nil {
				t.Skipf("%s: %v", mode, err)
			}
			f := newFixture(t, "        - {path: ws/tool.py, function: f}\n")
			f.sb.Mode = mode
			tool := filepath.Join(f.ws, "tool.py")
			writeFile(t, tool, "def f():\n    return 'public'\n")
			secret := filepath.Join(f.out, "secret.py")
			writeFile(t, secret, "def f():\n    return 'TOPSECRET'\n")
			p := f.provider(t, Options{})
			// Ready-made replacements, renamed over the file in turn (each rename is atomic).
			link, plain := filepath.Join(f.ws, "link.tmp"), filepath.Join(f.ws, "plain.tmp")
			stop := make(chan struct{})
			done := make(chan int)
			go func() {
				swaps := 0
				defer func() { done <- swaps }()
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = os.Remove(link)
					if os.Symlink(secret, link) == nil && os.Rename(link, tool) == nil {
						swaps++
					}
					if os.WriteFile(plain, []byte("def f():\n    return 'public'\n"), 0o644) == nil && os.Rename(plain, tool) == nil {
						swaps++
					}
				}
			}()
			public := 0
			for i := 0; i < 40; i++ {
				r := p.Call(context.Background(), "custom_tool__f", nil, f.sb)
				if strings.Contains(r.Content, "TOPSECRET") {
					t.Fatalf("call %d ran the secret: %s", i, r.Content)
				}
				if !r.IsError {
					public++
				}
			}
			close(stop)
			if swaps := <-done; swaps < 40 {
				t.Errorf("only %d swaps raced the calls", swaps)
			}
			t.Logf("%s: %d of 40 calls ran the real file, the others failed closed", mode, public)
		})
	}
}

// A tool's process gets none of massgen's secrets, only the variables its entry's env names.
func TestEnvironment(t *testing.T) {
	needSandbox(t)
	t.Setenv("OPENAI_API_KEY", "sk-massgen-secret")
	f := newFixture(t, "        - {path: tooldir/tools.py, function: env_var, env: {MY_TOOL_KEY: v123}}\n")
	p := f.provider(t, Options{})
	for name, want := range map[string]string{"MY_TOOL_KEY": "v123", "OPENAI_API_KEY": "<unset>", runnerEnv: "<unset>"} {
		r := p.Call(context.Background(), "custom_tool__env_var", map[string]any{"name": name}, f.sb)
		if got := decode(t, r)["result"]; got != want {
			t.Errorf("%s = %v, want %q (%s)", name, got, want, r.Content)
		}
	}
}

// A file of MassGen's tool folder (a built-in function found without path:) may import its
// package relatively (from .._result import ...): it is loaded under its name in MassGen's
// package, the imports resolving against massgen's shim.
func TestBuiltinFileRelativeImports(t *testing.T) {
	needSandbox(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(base, "repo", "massgen", "tool", "__init__.py"), "")
	writeFile(t, filepath.Join(base, "repo", "massgen", "tool", "_file_handlers", "__init__.py"), "from ._file_operations import read_file_content\n")
	writeFile(t, filepath.Join(base, "repo", "massgen", "tool", "_file_handlers", "_file_operations.py"), `"""File operations."""
from .._result import ExecutionResult, TextContent


async def read_file_content(target_path: str) -> ExecutionResult:
    """Read a file.

    Args:
        target_path: the file
    """
    return ExecutionResult(output_blocks=[TextContent(data="read " + target_path)])
`)
	cfgDir := filepath.Join(base, "repo", "massgen", "configs")
	writeFile(t, filepath.Join(cfgDir, "c.yaml"), "agents:\n  - id: agent_a\n    backend:\n      type: openai\n      model: m\n      cwd: "+ws+"\n      cwd_owned: true\n      custom_tools:\n        - {function: read_file_content}\n")
	cfg, _, err := configs.Load(configs.LoadOptions{Name: filepath.Join(cfgDir, "c.yaml"), BaseDir: base})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := permissions.New(permissions.Spec{Agent: "agent_a", Role: permissions.Coordination, Workspace: ws, Sandboxed: true})
	if err != nil {
		t.Fatal(err)
	}
	sb := filesystem.CommandSandbox{Policy: filesystem.SandboxPolicy(pol), Workspace: ws}
	p, err := New(context.Background(), Options{Config: cfg, Sandbox: sb, Describe: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r := p.Call(context.Background(), "custom_tool__read_file_content", map[string]any{"target_path": "x.txt"}, sb)
	if r.IsError || decode(t, r)["result"] != "read x.txt" {
		t.Errorf("got %s", r.Content)
	}
}

// A python3 an agent could replace (first on PATH, in a folder it may write) is passed over for
// the next one; when every python3 is such, the tools are refused.
func TestInterpreterAvoidsAgentWritablePython(t *testing.T) {
	sys, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	planted := t.TempDir()
	if err := os.WriteFile(filepath.Join(planted, "python3"), []byte("#!/bin/sh\necho planted\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", planted+string(os.PathListSeparator)+filepath.Dir(sys))
	shaped := func(p string) string {
		if strings.HasPrefix(p, planted) {
			return "agent alpha may write there"
		}
		return ""
	}
	sb := filesystem.CommandSandbox{Mode: sandbox.ModeNone}
	if got, err := interpreter(sb, shaped); err != nil || got != filepath.Join(filepath.Dir(sys), "python3") {
		t.Errorf("interpreter = %q, %v; want the one after the planted python3", got, err)
	}
	if got, _ := interpreter(sb, nil); got != filepath.Join(planted, "python3") {
		t.Errorf("without the check the first python3 is %q", got)
	}
	t.Setenv("PATH", planted)
	if _, err := interpreter(sb, shaped); err == nil || !strings.Contains(err.Error(), "lies where an agent could change it") {
		t.Errorf("only a planted python3: %v", err)
	}
}
