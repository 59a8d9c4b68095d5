package configscmd

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/sandbox"
)

func needPython(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Effective(""); err != nil {
		t.Skipf("no command sandbox here: %v", err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// missingWhat is what a custom_tools problem must say is missing: a Python module, a file from
// MassGen's repository, one of MassGen's built-in functions, python3, a function.
var missingWhat = regexp.MustCompile(`imports the Python module \S+, which is not installed|` +
	`imports massgen\.\S+, a module of MassGen's Python package, which is not installed|` +
	`does not exist: it is a file from MassGen's repository|` +
	`missing path: \S+ would be one of MassGen's built-in tool functions|` +
	`need python3, which is not on PATH|no function \S+ in the file`)

func (e *testEnv) findings(t *testing.T, files ...string) Report {
	t.Helper()
	e.out.Reset()
	e.validate(files, false, true)
	var r Report
	if err := json.Unmarshal(e.out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, e.out)
	}
	return r
}

// configs validate reads the custom tools as a run's set-up does and says what is missing,
// at the line of the entry at fault. The configs are in MassGen's forms: its built-in
// two_num_tool without a path, a path into MassGen's repository, a user's file using MassGen's
// result types (which massgen provides), one importing a module that is not installed.
func TestValidateCustomTools(t *testing.T) {
	needPython(t)
	e := newTestEnv(t)
	e.env["OPENAI_API_KEY"] = "k"
	if err := os.MkdirAll(filepath.Join(e.wd, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write(t, "tools/my_tool.py", `from massgen.tool._result import ExecutionResult, TextContent
from massgen.tool import context_params

@context_params("agent_id")
async def two_num_tool(x: int, y: int, agent_id: str = "") -> ExecutionResult:
    """Add two numbers together."""
    return ExecutionResult(output_blocks=[TextContent(data=str(x + y))])
`)
	e.write(t, "tools/needs_pkg.py", "import massgen_test_missing_pkg.sub\n\ndef f(q: str) -> str:\n    return q\n")
	agent := func(entry string) string {
		return "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-5-nano\n      custom_tools:\n" + entry
	}
	tests := []struct {
		name, entry string
		want        string // "" : valid
	}{
		{"user file with MassGen's result types", `        - name: ["two_num_tool"]
          category: "math"
          path: "tools/my_tool.py"
          function: ["two_num_tool"]
`, ""},
		{"MassGen built-in, no path", `        - name: ["two_num_tool"]
          function: ["two_num_tool"]
`, "c.yaml:7: agents[0].backend.custom_tools[0]: missing path: two_num_tool would be one of MassGen's built-in tool functions"},
		{"a file of MassGen's repository", `        - name: ["understand_image"]
          category: "multimodal"
          path: "massgen/tool/_multimodal_tools/understand_image.py"
          function: ["understand_image"]
`, "c.yaml:9: agents[0].backend.custom_tools[0].path: custom tool custom_tool__understand_image: " + filepath.Join("WD", "massgen/tool/_multimodal_tools/understand_image.py") + " does not exist: it is a file from MassGen's repository"},
		{"a module that is not installed", `        - path: tools/needs_pkg.py
          function: f
`, "c.yaml:7: agents[0].backend.custom_tools[0].path: custom tool custom_tool__f: " + filepath.Join("WD", "tools/needs_pkg.py") + ":1 imports the Python module massgen_test_missing_pkg, which is not installed"},
		{"a function that does not exist", `        - path: tools/my_tool.py
          function: [two_num_tool, wrong_two_num_tool]
`, "c.yaml:8: agents[0].backend.custom_tools[0].function[1]: custom tool custom_tool__wrong_two_num_tool: " + filepath.Join("WD", "tools/my_tool.py") + ": no function wrong_two_num_tool in the file (its functions: two_num_tool)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.write(t, "c.yaml", agent(tt.entry))
			r := e.findings(t, "c.yaml")
			var errs []string
			for _, f := range r.Findings {
				if f.Severity == "error" {
					errs = append(errs, f.File+":"+itoa(f.Line)+": "+f.Key+": "+f.Message)
				}
			}
			want := strings.ReplaceAll(tt.want, "WD", e.wd)
			switch {
			case want == "" && (len(errs) > 0 || !r.Valid):
				t.Errorf("errors %q, want none", errs)
			case want != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0], want)):
				t.Errorf("errors %q\nwant one starting %q", errs, want)
			}
		})
	}
	// Without python3 the message names the tools.
	e.write(t, "c.yaml", agent(tests[0].entry))
	t.Setenv("PATH", t.TempDir())
	r := e.findings(t, "c.yaml")
	if r.Valid || len(r.Findings) == 0 || !strings.Contains(r.Findings[0].Message, "the custom tools custom_tool__two_num_tool need python3, which is not on PATH") {
		t.Errorf("without python3: %+v", r.Findings)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Every MassGen config in shared/massgen-configs that uses custom_tools either validates or
// fails saying what is missing.
func TestMassGenCustomToolConfigs(t *testing.T) {
	needPython(t)
	root := sharedConfigs(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "custom_tools:") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skipf("no config in %s uses custom_tools (TestValidateCustomTools covers MassGen's forms)", root)
	}
	e := newTestEnv(t)
	e.wd = root // MassGen resolves custom tool paths against the directory it runs in
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY", "QWEN_API_KEY", "DASHSCOPE_API_KEY"} {
		e.env[k] = "k"
	}
	for _, file := range files {
		r := e.findings(t, file)
		for _, f := range r.Findings {
			if f.Severity == "error" && strings.Contains(f.Key, "custom_tools") && !missingWhat.MatchString(f.Message) {
				t.Errorf("%s:%d: %s: does not say what is missing", f.File, f.Line, f.Message)
			}
		}
		t.Logf("%s: valid=%v", file, r.Valid)
	}
}
