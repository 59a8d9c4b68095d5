package configs

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/massgen091"
)

// MassGen's custom_tools forms: one function, a list with per-function names and descriptions,
// shared or per-function preset_args; every function becomes one tool named custom_tool__NAME
// with its file made absolute against the current directory.
func TestCustomFunctions(t *testing.T) {
	base := t.TempDir()
	cfg, warns := mustLoad(t, base, `
agents:
  - id: a
    backend:
      type: openai
      model: gpt-5-nano
      custom_tools:
        - name: ["two_num_tool"]
          category: "math"
          path: "tools/math.py"
          function: ["two_num_tool"]
        - path: tools/web.py
          function: [fetch, crawl]
          name: [web_fetch, custom_tool__web_crawl]
          description: "Shared description"
          preset_args: [{timeout: 5}, null]
          timeout_seconds: 20
        - path: /abs/x.py
          function: one
          parameters: {type: object, properties: {q: {type: string}}}
          preset_args: {key: v}
`, nil)
	for _, w := range warns {
		t.Errorf("warning: %s", w)
	}
	fns, probs := cfg.CustomFunctions(0)
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	type got struct {
		Name, Function, Path, Description, FunctionKey string
		Preset                                         map[string]any
		Timeout                                        int
		HasParams                                      bool
	}
	var gs []got
	for _, f := range fns {
		gs = append(gs, got{f.Name, f.Function, f.Path, f.Description, f.FunctionKey, f.Preset, f.TimeoutSeconds, f.Parameters != nil})
	}
	want := []got{
		{"custom_tool__two_num_tool", "two_num_tool", filepath.Join(base, "tools/math.py"), "", "agents[0].backend.custom_tools[0].function", nil, DefaultCustomToolTimeout, false},
		{"custom_tool__web_fetch", "fetch", filepath.Join(base, "tools/web.py"), "Shared description", "agents[0].backend.custom_tools[1].function[0]", map[string]any{"timeout": 5}, 20, false},
		{"custom_tool__web_crawl", "crawl", filepath.Join(base, "tools/web.py"), "Shared description", "agents[0].backend.custom_tools[1].function[1]", nil, 20, false},
		{"custom_tool__one", "one", "/abs/x.py", "", "agents[0].backend.custom_tools[2].function", map[string]any{"key": "v"}, DefaultCustomToolTimeout, true},
	}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("functions:\n got %+v\nwant %+v", gs, want)
	}
	if _, line := cfg.Position(fns[2].FunctionKey); line != 13 {
		t.Errorf("line of %s = %d, want 13", fns[2].FunctionKey, line)
	}
}

// Entries that cannot become tools fail validation at their line.
func TestCustomToolsValidation(t *testing.T) {
	tests := []struct {
		name, entry, want string
	}{
		{"no function", "{path: t.py}", "config.yaml:6: agents[0].backend.custom_tools[0]: missing function:"},
		{"no path (a MassGen built-in)", "{function: two_num_tool}", "config.yaml:6: agents[0].backend.custom_tools[0]: missing path: two_num_tool would be one of MassGen's built-in tool functions, which massgen finds in massgen/tool/ of the MassGen checkout holding the config, but "},
		{"a module name", "{path: massgen.tool, function: f}", `config.yaml:6: agents[0].backend.custom_tools[0].path: "massgen.tool" is not a .py file`},
		{"names for fewer functions", "{path: t.py, function: [a, b, c], name: [x, y]}", "config.yaml:6: agents[0].backend.custom_tools[0].name: 2 values for 3 functions"},
		{"one name for two functions", "{path: t.py, function: [a, b], name: x}", "config.yaml:6: agents[0].backend.custom_tools[0].name: 1 values for 2 functions"},
		{"preset list too short", "{path: t.py, function: [a, b], preset_args: [{k: 1}]}", "config.yaml:6: agents[0].backend.custom_tools[0].preset_args: 1 mappings for 2 functions"},
		{"preset not a mapping", "{path: t.py, function: a, preset_args: 3}", "config.yaml:6: agents[0].backend.custom_tools[0].preset_args: expected a mapping"},
		{"not a Python name", "{path: t.py, function: 'a-b'}", `config.yaml:6: agents[0].backend.custom_tools[0].function: "a-b" is not a Python function name`},
		{"name too long", "{path: t.py, function: a, name: " + strings.Repeat("n", 60) + "}", "config.yaml:6: agents[0].backend.custom_tools[0].function: tool name"},
		{"function of the wrong type", "{path: t.py, function: {a: 1}}", "config.yaml:6: expected a string or a list of strings, found a mapping"},
		{"env name", "{path: t.py, function: a, env: {'A-B': x}}", `config.yaml:6: agents[0].backend.custom_tools[0].env.A-B: "A-B" is not an environment variable name`},
		{"env massgen sets", "{path: t.py, function: a, env: {HOME: /x}}", "config.yaml:6: agents[0].backend.custom_tools[0].env.HOME: HOME is set by massgen"},
		{"parameters not an object", "{path: t.py, function: a, parameters: {type: string}}", "config.yaml:6: agents[0].backend.custom_tools[0].parameters: the schema of a has type string"},
		{"negative timeout", "{path: t.py, function: a, timeout_seconds: -1}", "config.yaml:6: agents[0].backend.custom_tools[0].timeout_seconds: must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := load(t, t.TempDir(), "agents:\n  - id: a\n    backend:\n      type: openai\n      model: m\n      custom_tools: ["+tt.entry+"]\n", nil)
			if err == nil {
				t.Fatal("loaded")
			}
			ps := problems(t, err)
			if len(ps) != 1 || !strings.HasPrefix(ps[0].String(), tt.want) {
				t.Errorf("problems %v, want one starting %q", ps, tt.want)
			}
		})
	}
	// Two entries offering the same name.
	_, _, err := load(t, t.TempDir(), `agents:
  - id: a
    backend:
      type: openai
      model: m
      custom_tools:
        - {path: a.py, function: f}
        - {path: b.py, function: g, name: f}
`, nil)
	if ps := problems(t, err); len(ps) != 1 || !strings.Contains(ps[0].String(), "config.yaml:8: agents[0].backend.custom_tools[1].function: two custom tools are named custom_tool__f") {
		t.Errorf("duplicate names: %v", ps)
	}
}

// Preflight: custom tools need python3 on PATH (the message names them) and their files.
func TestPreflightCustomTools(t *testing.T) {
	base := t.TempDir()
	write(t, base, "tools/ok.py", "def f(): pass\n")
	text := `agents:
  - id: a
    backend:
      type: openai
      model: m
      custom_tools:
        - {path: tools/ok.py, function: [f, g]}
        - {path: tools/missing.py, function: h}
        - {path: massgen/tool/_basic/_two_num_tool.py, function: two_num_tool}
`
	cfg, _ := mustLoad(t, base, text, nil)
	noPython := func(name string) (string, error) { return "", &exec.Error{Name: name, Err: exec.ErrNotFound} }
	withPython := func(name string) (string, error) { return "/usr/bin/" + name, nil }
	probs, _ := cfg.Preflight(noPython)
	want := []string{
		"config.yaml:6: agents[0].backend.custom_tools: the custom tools custom_tool__f, custom_tool__g, custom_tool__h, custom_tool__two_num_tool need python3, which is not on PATH",
		"config.yaml:8: agents[0].backend.custom_tools[1].path: custom tool custom_tool__h: " + filepath.Join(base, "tools/missing.py") + " does not exist",
		"config.yaml:9: agents[0].backend.custom_tools[2].path: custom tool custom_tool__two_num_tool: " + filepath.Join(base, "massgen/tool/_basic/_two_num_tool.py") + " does not exist: it is a file from MassGen's repository",
	}
	if len(probs) != len(want) {
		t.Fatalf("problems %v, want %d", probs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(probs[i].String(), w) {
			t.Errorf("problem %q\nwant prefix %q", probs[i], w)
		}
	}
	if probs, _ := cfg.Preflight(withPython); len(probs) != 2 {
		t.Errorf("with python3: %v, want the two missing files", probs)
	}
	// A link: an agent that may write where it lies could point it anywhere.
	if err := os.Symlink(filepath.Join(base, "tools/ok.py"), filepath.Join(base, "tools/missing.py")); err != nil {
		t.Fatal(err)
	}
	if probs, _ := cfg.Preflight(withPython); len(probs) != 2 || !strings.Contains(probs[0].String(), "missing.py is a symbolic link: point path: at the file itself") {
		t.Errorf("a link: %v", probs)
	}
	if err := os.Remove(filepath.Join(base, "tools/missing.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(base, "tools/ok.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "tools/ok.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	if probs, _ := cfg.Preflight(withPython); len(probs) != 3 || !strings.Contains(probs[0].String(), "is not a regular file") {
		t.Errorf("a directory named .py: %v", probs)
	}
}

// configs show masks the values of a custom tool's env, as an MCP server's.
func TestCustomToolEnvRedacted(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n    backend:\n      type: openai\n      model: m\n      custom_tools: [{path: t.py, function: f, env: {KEY: \"${K}\"}}]\n", env{"K": "sk-secret"})
	if got := cfg.Agents[0].Backend.CustomTools[0].Env["KEY"]; got != "sk-secret" {
		t.Fatalf("env KEY = %q, want the expanded value", got)
	}
	out, err := cfg.ResolvedYAML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "sk-secret") || !strings.Contains(string(out), "KEY: <redacted>") {
		t.Errorf("resolved config:\n%s", out)
	}
	if cfg.Agents[0].Backend.CustomTools[0].Env["KEY"] != "sk-secret" {
		t.Error("redacting changed the config")
	}
}

// A custom_tools entry without path: names one of MassGen's built-in functions: found in the
// MassGen checkout holding the config, in MassGen's search order; otherwise the error names the
// function and where it was looked up.
func TestBuiltinToolFunctions(t *testing.T) {
	repo := t.TempDir()
	tool := filepath.Join(repo, "massgen", "tool")
	for name, text := range map[string]string{
		"__init__.py":                     "from ._basic import two_num_tool\n",
		"_basic/__init__.py":              "from ._two_num_tool import two_num_tool\n",
		"_basic/_two_num_tool.py":         "async def two_num_tool(x: int, y: int):\n    return x + y\n",
		"_code_executors/__init__.py":     "",
		"_code_executors/_python_exec.py": "def run_python_script(code):\n    pass\n\ndef helper():\n    pass\n",
		"_aaa_decoy/__init__.py":          "",
		"_aaa_decoy/decoy.py":             "def two_num_tool(x, y):\n    return 0\n",
		"_web_tools/crawl.py":             "class C:\n    def inner(self):\n        pass\n\nasync  def crawl4ai_md(url):\n    pass\n",
		"_other/split.py":                 "def helper2():\n    pass\n",
	} {
		write(t, tool, name, text)
	}
	cfgDir := filepath.Join(repo, "massgen", "configs", "tools")
	entry := func(e string) string {
		return "agents:\n  - id: a\n    backend:\n      type: openai\n      model: m\n      custom_tools: [" + e + "]\n"
	}
	tests := []struct {
		name, entry, want, wantErr string
		outside                    bool
	}{
		{name: "in a package MassGen searches first", entry: "{function: two_num_tool}", want: "_basic/_two_num_tool.py"},
		{name: "a list of one", entry: "{name: [run], function: [run_python_script]}", want: "_code_executors/_python_exec.py"},
		{name: "any other file of the tool folder", entry: "{function: crawl4ai_md}", want: "_web_tools/crawl.py"},
		{name: "a method is not a function", entry: "{function: inner}", wantErr: "inner is not one of MassGen's built-in tool functions: no file of " + tool + " defines it"},
		{name: "no such function", entry: "{function: wrong_two_num_tool}", wantErr: "wrong_two_num_tool is not one of MassGen's built-in tool functions: no file of " + tool + " defines it (looked in _basic, _code_executors"},
		{name: "functions in two files", entry: "{function: [helper, helper2]}", wantErr: "are defined in different files"},
		{name: "not in a checkout", entry: "{function: two_num_tool}", outside: true, wantErr: "is not in one (no massgen/tool/ package above it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cfgDir
			if tt.outside {
				dir = t.TempDir()
			}
			write(t, dir, "c.yaml", entry(tt.entry))
			cfg, _, err := Load(LoadOptions{Name: filepath.Join(dir, "c.yaml"), BaseDir: t.TempDir(), Home: t.TempDir()})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "agents[0].backend.custom_tools[0]") {
					t.Fatalf("Load = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fns, probs := cfg.CustomFunctions(0)
			if len(probs) > 0 || len(fns) != 1 || fns[0].Path != filepath.Join(tool, tt.want) {
				t.Errorf("functions %+v, problems %v; want the file %s", fns, probs, tt.want)
			}
		})
	}
}

// BenchmarkBuiltinToolLookup finds a built-in function in MassGen 0.1.91's tool folder (beside
// the checkout): two_num_tool, in the first package searched, and a name no file defines (every
// file read).
func BenchmarkBuiltinToolLookup(b *testing.B) {
	dir := filepath.Join(massgen091.Root(b), "massgen", "tool")
	for _, fn := range []string{"two_num_tool", "no_such_function"} {
		b.Run(fn, func(b *testing.B) {
			for b.Loop() {
				builtinToolFile(dir, "c.yaml", []string{fn})
			}
		})
	}
}
