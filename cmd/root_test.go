package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/clienv"
)

// testEnv is clienv's Env with this package's ways to run it.
type testEnv struct{ *clienv.Env }

func newTestEnv(t *testing.T, stdin string) *testEnv { return &testEnv{clienv.New(t, stdin)} }

func (e *testEnv) exec(args ...string) int {
	return Execute(context.Background(), e.Factory(), args)
}

const workspaceConfig = clienv.WorkspaceConfig

func TestConfigsValidate(t *testing.T) {
	e := newTestEnv(t, "")
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"} {
		e.Vars[k] = "k" // validate checks every agent's key, as a run does
	}
	good := e.Write(t, "good.yaml", workspaceConfig)
	e.Write(t, "warn.yaml", workspaceConfig+"  context_paths:\n    - path: not-here\nflavour: x\n")
	e.Write(t, "bad.yaml", "agents:\n  - id: a\n    backend:\n      type: openai\n     model: x\n")
	e.Write(t, "invalid.yaml", "agents:\n  - id: a\n    backend: {type: opnai}\n  - id: a\n    backend: {type: openai}\n")

	if code := e.exec("configs", "validate", good, "warn.yaml", "@examples/basic/multi/three_agents_default"); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, e.ErrOut)
	}
	for _, s := range []string{good + ": ok (2 agents)", "warn.yaml: ok (2 agents)", "@examples/basic/multi/three_agents_default: ok (3 agents)"} {
		if !strings.Contains(e.Out.String(), s) {
			t.Errorf("stdout lacks %q:\n%s", s, e.Out)
		}
	}
	for _, s := range []string{"warn.yaml:10: warning: context path " + filepath.Join(e.Wd, "not-here") + " does not exist", `warn.yaml:11: warning: unknown key "flavour"`} {
		if !strings.Contains(e.ErrOut.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, e.ErrOut)
		}
	}

	e.Out.Reset()
	e.ErrOut.Reset()
	if code := e.exec("configs", "validate", "bad.yaml", "invalid.yaml", good); code != cmdutil.ExitUsage {
		t.Fatalf("exit %d, want 2", code)
	}
	wantErr := []string{
		"bad.yaml:5: did not find expected key",
		`invalid.yaml:3: agents[0].backend.type: unknown backend "opnai"`,
		`invalid.yaml:4: agents[1].id: duplicate id "a" (first used at line 2)`,
	}
	for _, s := range wantErr {
		if !strings.Contains(e.ErrOut.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, e.ErrOut)
		}
	}
	if !strings.Contains(e.Out.String(), good+": ok") {
		t.Errorf("the valid file should still be reported ok:\n%s", e.Out)
	}
}

func TestConfigsListAndShow(t *testing.T) {
	e := newTestEnv(t, "")
	if code := e.exec("configs", "list"); code != 0 {
		t.Fatalf("list exit %d", code)
	}
	// The test env has the OpenAI and Gemini keys, not Grok's.
	if !strings.Contains(e.Out.String(), "@examples/basic/multi/three_agents_default  (cannot run here)\n") ||
		!strings.Contains(e.Out.String(), "    why:    no XAI_API_KEY\n") {
		t.Errorf("list lacks three_agents_default:\n%s", e.Out)
	}

	e.Out.Reset()
	e.Write(t, "c.yaml", workspaceConfig+"  context_paths:\n    - path: .\n      permission: write\n      protected_paths: [keep]\n"+
		"agent_extra: 1\n")
	e.Vars["KEY"] = "sk-123"
	e.Write(t, "k.yaml", "agent:\n  id: solo\n  backend: {type: openai, api_key: \"${KEY}\", cwd: /abs/ws}\n")
	if code := e.exec("configs", "show", "--resolved", "c.yaml"); code != 0 {
		t.Fatalf("show exit %d: %s", code, e.ErrOut)
	}
	got := e.Out.String()
	mg := filepath.Join(e.Wd, ".massgen")
	for _, s := range []string{
		"cwd: " + filepath.Join(mg, "workspaces/workspace1"),
		"snapshot_storage: " + filepath.Join(mg, "snapshots"),
		"agent_temporary_workspace: " + filepath.Join(mg, "temp_workspaces"),
		"session_storage: " + filepath.Join(mg, "sessions"),
		"- path: " + e.Wd,
		"- " + filepath.Join(e.Wd, "keep"),
	} {
		if !strings.Contains(got, s) {
			t.Errorf("show --resolved lacks %q:\n%s", s, got)
		}
	}
	e.Out.Reset()
	if code := e.exec("configs", "show", "--resolved", "k.yaml"); code != 0 {
		t.Fatalf("show exit %d: %s", code, e.ErrOut)
	}
	if strings.Contains(e.Out.String(), "sk-123") || !strings.Contains(e.Out.String(), "api_key: <redacted>") || !strings.Contains(e.Out.String(), "agents:") {
		t.Errorf("show --resolved must turn agent: into agents: and mask keys:\n%s", e.Out)
	}
	e.Out.Reset()
	if code := e.exec("configs", "show", "@examples/basic/single/single_agent"); code != 0 {
		t.Fatalf("show exit %d", code)
	}
	raw, _ := configs.Example("basic/single/single_agent")
	if e.Out.String() != string(raw) {
		t.Errorf("show without --resolved should print the file as written")
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  []string
	}{
		{"missing context paths are all listed", []string{"--config", "c.yaml", "--context", "nope1", "--context", "nope2:read", "q"}, 2,
			[]string{"Context paths not found:", "nope1 does not exist", "nope2 does not exist"}},
		{"malformed config", []string{"--config", "bad.yaml", "q"}, 2, []string{"bad.yaml:2: "}},
		{"unknown config", []string{"--config", "nope.yaml", "q"}, 2, []string{"nope.yaml: config nope.yaml: no such file"}},
		{"no config", []string{"q"}, 2, []string{"no config: pass --config"}},
		{"unknown flag", []string{"--bogus"}, 2, []string{"unknown flag: --bogus"}},
		{"two questions", []string{"--config", "c.yaml", "a", "b"}, 2, []string{"accepts at most 1 arg"}},
		{"a subcommand's arguments", []string{"configs", "show", "a", "b"}, 2, []string{"accepts 1 arg"}},
		{"a subcommand's unknown flag", []string{"tools", "list", "--bogus"}, 2, []string{"unknown flag: --bogus"}},
		{"a subcommand's bad flag value", []string{"permissions", "check", "--final=maybe"}, 2, []string{"maybe"}},
		{"bad display", []string{"--config", "c.yaml", "--display", "fancy", "q"}, 2, []string{`--display "fancy"`}},
		{"empty question", []string{"--config", "c.yaml", "  "}, 2, []string{"empty QUESTION"}},
		{"session and continue", []string{"--config", "c.yaml", "--session", "s1", "--continue", "q"}, 2, []string{"cannot be used together"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, "")
			e.Write(t, "c.yaml", workspaceConfig)
			e.Write(t, "bad.yaml", "agents:\n  - id: \"a\n")
			if code := e.exec(tt.args...); code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, e.ErrOut)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(e.ErrOut.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, e.ErrOut)
				}
			}
			if e.Out.Len() != 0 {
				t.Errorf("stdout = %q", e.Out)
			}
		})
	}
}

// TestValidateMassGenConfigs runs `massgen configs validate` over MassGen's basic/, providers/
// and tools/filesystem/ configs (../shared/massgen-configs beside the repository), with their
// API keys set: exit 0.
func TestValidateMassGenConfigs(t *testing.T) {
	root, _ := filepath.Abs("../../shared/massgen-configs")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("MassGen configs not found at %s: %v", root, err)
	}
	var files []string
	for _, dir := range []string{"basic", "providers", "tools/filesystem"} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) == ".yaml" {
				files = append(files, p)
			}
			return err
		})
	}
	if len(files) < 30 {
		t.Fatalf("only %d configs found", len(files))
	}
	// claude_code configs need the claude CLI on PATH (a stand-in: validation does not run it).
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	e := newTestEnv(t, "")
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY", "CEREBRAS_API_KEY",
		"OPENROUTER_API_KEY", "ZAI_API_KEY", "MOONSHOT_API_KEY", "KIMI_API_KEY", "GROQ_API_KEY", "TOGETHER_API_KEY",
		"FIREWORKS_API_KEY", "DEEPSEEK_API_KEY", "QWEN_API_KEY", "DASHSCOPE_API_KEY", "NEBIUS_API_KEY", "POE_API_KEY",
		"AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"} {
		e.Vars[k] = "test-key"
	}
	if code := e.exec(append([]string{"configs", "validate"}, files...)...); code != 0 {
		t.Fatalf("exit %d:\n%s", code, e.ErrOut)
	}
	if got := strings.Count(e.Out.String(), ": ok ("); got != len(files) {
		t.Errorf("%d of %d reported ok", got, len(files))
	}
}
