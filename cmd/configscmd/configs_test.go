package configscmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/vocab"
)

type testEnv struct {
	wd, home    string
	env         map[string]string
	out, errOut *bytes.Buffer
	f           *cmdutil.Factory
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	e := &testEnv{wd: t.TempDir(), home: t.TempDir(), env: map[string]string{}, out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	e.f = &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{In: strings.NewReader(""), Out: e.out, ErrOut: e.errOut},
		Getwd:     func() (string, error) { return e.wd, nil },
		HomeDir:   func() (string, error) { return e.home, nil },
		LookupEnv: func(k string) (string, bool) { v, ok := e.env[k]; return v, ok },
	}
	return e
}

func (e *testEnv) write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.wd, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *testEnv) validate(files []string, strict, asJSON bool) int {
	opts := &ValidateOptions{IO: e.f.IO, Loader: loader(e.f), Files: files, Strict: strict, JSON: asJSON}
	return cmdutil.CodeOf(validateRun(opts))
}

// A config a run would reject is rejected by validate, with every reason at once and the line
// of each: a missing model (and the typo that hides it), every agent's missing key by variable
// name, a backend that cannot run, a bad option value; ignored and unknown keys are warnings.
func TestValidateFindsWhatARunRejects(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no claude CLI
	e := newTestEnv(t)
	e.write(t, "c.yaml", `agents:
  - id: a
    backend:
      type: openai
      modle: gpt-5
  - id: b
    backend:
      type: claude
      temprature: 0.2
      enable_code_interpreter: true
  - id: c
    backend: {type: gemini}
  - id: d
    backend: {type: claude_code, cwd: ws}
  - id: e
    backend:
      type: claude
      api_key: sk-test
      max_tokens: lots
      mcp_servers:
        - {name: tool, type: stdio, command: massgen-test-no-such-command}
`)
	if code := e.validate([]string{"c.yaml"}, false, false); code != cmdutil.ExitUsage {
		t.Fatalf("exit %d, want 2\n%s", code, e.errOut)
	}
	for _, want := range []string{
		`c.yaml:3: agents[0].backend: missing model: the openai backend has no default model; add model: NAME (modle: at line 5; did you mean model?)`,
		`c.yaml:5: warning: unknown key "agents[0].backend.modle" (not used; did you mean "model"?)`,
		`c.yaml:7: agents[1].backend.api_key: agent "b": backend "claude": no API key: set ANTHROPIC_API_KEY`,
		`c.yaml:9: warning: unknown key "agents[1].backend.temprature" (not used; did you mean "temperature"?)`,
		`c.yaml:10: warning: agents[1].backend.enable_code_interpreter: ignored: only openai has a code interpreter`,
		`c.yaml:12: agents[2].backend.api_key: agent "c": backend "gemini": no API key: set GEMINI_API_KEY or GOOGLE_API_KEY`,
		"c.yaml:14: agents[3].backend.type: claude_code needs `claude` on PATH (not found): install Claude Code",
		`c.yaml:19: agents[4].backend.max_tokens: "lots" is not a whole number (expected a whole number, at least 1)`,
		`c.yaml:21: agents[4].backend.mcp_servers[0].command: MCP server "tool": command "massgen-test-no-such-command" is not on PATH`,
	} {
		if !strings.Contains(e.errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, e.errOut)
		}
	}
	if n := strings.Count(e.errOut.String(), "max_tokens"); n != 1 {
		t.Errorf("max_tokens reported %d times, want once:\n%s", n, e.errOut)
	}
	if e.out.Len() != 0 {
		t.Errorf("nothing is ok:\nstdout %s", e.out)
	}
}

func TestValidateStrictAndJSON(t *testing.T) {
	e := newTestEnv(t)
	e.env["GEMINI_API_KEY"] = "k"
	e.write(t, "w.yaml", "agent:\n  id: a\n  backend:\n    type: gemini\n    enable_code_interpreter: true\n    temprature: 0.1\n")
	if code := e.validate([]string{"w.yaml"}, false, false); code != 0 {
		t.Fatalf("warnings only: exit %d\n%s", code, e.errOut)
	}
	if !strings.Contains(e.out.String(), "w.yaml: ok (1 agent)") {
		t.Errorf("stdout: %s", e.out)
	}
	e.out.Reset()
	e.errOut.Reset()
	if code := e.validate([]string{"w.yaml"}, true, false); code != cmdutil.ExitUsage {
		t.Fatalf("--strict: exit %d, want 2", code)
	}
	if e.out.Len() != 0 || !strings.Contains(e.errOut.String(), "w.yaml:5: agents[0].backend.enable_code_interpreter: ignored: only openai has a code interpreter") {
		t.Errorf("--strict must report warnings as errors:\nstdout %s\nstderr %s", e.out, e.errOut)
	}

	for _, strict := range []bool{false, true} {
		e.out.Reset()
		e.errOut.Reset()
		code := e.validate([]string{"w.yaml"}, strict, true)
		var r Report
		if err := json.Unmarshal(e.out.Bytes(), &r); err != nil {
			t.Fatalf("--json output: %v\n%s", err, e.out)
		}
		wantSeverity, wantCode := "warning", 0
		if strict {
			wantSeverity, wantCode = "error", cmdutil.ExitUsage
		}
		if code != wantCode || r.Valid != !strict || len(r.Files) != 1 || r.Files[0].Agents != 1 || e.errOut.Len() != 0 {
			t.Errorf("strict=%v: exit %d, report %+v, stderr %s", strict, code, r, e.errOut)
		}
		want := Finding{File: "w.yaml", Line: 6, Key: "agents[0].backend.temprature", Severity: wantSeverity,
			Message: `unknown key "agents[0].backend.temprature" (not used; did you mean "temperature"?)`, Suggestion: "temperature"}
		found := false
		for _, f := range r.Findings {
			found = found || f == want
		}
		if !found || len(r.Findings) != 2 {
			t.Errorf("strict=%v: findings %+v lack %+v", strict, r.Findings, want)
		}
	}
}

// show --resolved marks on its line every key massgen does not act on, and a backend that
// cannot run; implemented keys carry no comment.
func TestShowResolvedMarksIgnoredKeys(t *testing.T) {
	e := newTestEnv(t)
	e.write(t, "c.yaml", `agents:
  - id: a
    backend: {type: gemini, temperature: 0.2, enable_code_interpreter: true, enable_web_search: true, vector_store: vs_1}
  - id: b
    backend: {type: claude_code, cwd: ws, permission_mode: bypassPermissions}
orchestrator:
  voting_sensitivity: strict
  coordination: {enable_planning_mode: true, use_skills: true}
ui: {logging_enabled: true}
`)
	opts := &ShowOptions{IO: e.f.IO, Loader: loader(e.f), Name: "c.yaml", Resolved: true}
	if err := showRun(opts); err != nil {
		t.Fatal(err)
	}
	got := e.out.String()
	for _, want := range []string{
		"enable_code_interpreter: true # ignored: only openai has a code interpreter",
		"enable_web_search: true\n",
		"vector_store: vs_1 # ignored: provider vector stores are not used",
		"permission_mode: bypassPermissions # ignored (claude_code backend): Claude Code's own permission prompts are not used",
		"voting_sensitivity: strict\n",
		"enable_planning_mode: true\n",
		"use_skills: true # ignored: skills are not offered",
		"temperature: 0.2\n",
		"logging_enabled: true\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("show --resolved lacks %q:\n%s", want, got)
		}
	}
}

// Every MassGen config shared with the project validates as a run would, every key it has that
// massgen does not implement is reported, and none is unknown; the only errors are backend
// types massgen refuses.
func TestValidateMassGenConfigs(t *testing.T) {
	root := sharedConfigs(t)
	var files []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return nil
	})
	// claude_code configs need the claude CLI on PATH (a stand-in: validation does not run it).
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	e := newTestEnv(t)
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY", "ZAI_API_KEY",
		"AZURE_OPENAI_API_KEY", "OPENROUTER_API_KEY", "CEREBRAS_API_KEY", "QWEN_API_KEY", "NEBIUS_API_KEY", "FIREWORKS_API_KEY",
		"TOGETHER_API_KEY", "GROQ_API_KEY", "MOONSHOT_API_KEY", "POE_API_KEY"} {
		e.env[k] = "k"
	}
	e.env["AZURE_OPENAI_ENDPOINT"] = "https://example.openai.azure.com"
	e.validate(files, false, true)
	var r Report
	if err := json.Unmarshal(e.out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, e.out)
	}
	if len(r.Files) != len(files) || len(files) == 0 {
		t.Fatalf("%d files reported, %d given", len(r.Files), len(files))
	}
	reported := map[string]map[string]bool{}
	for _, f := range r.Findings {
		if reported[f.File] == nil {
			reported[f.File] = map[string]bool{}
		}
		reported[f.File][f.Key] = true
		switch {
		case strings.HasPrefix(f.Message, "unknown key"):
			t.Errorf("%s:%d: %s (add it to configs' key table)", f.File, f.Line, f.Message)
		case f.Severity == "error" && !strings.Contains(f.Message, "refused"):
			t.Errorf("%s:%d: unexpected error: %s", f.File, f.Line, f.Message)
		}
	}
	for _, file := range files {
		cfg, _, err := configs.Load(configs.LoadOptions{Name: file, BaseDir: e.wd, Home: e.home})
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		for i, a := range cfg.Agents {
			for k := range a.Backend.Extra {
				key := fmt.Sprintf("agents[%d].backend.%s", i, k)
				if entry, _ := configs.LookupKey(key, a.Backend.Type); entry.Status == configs.Ignored && len(entry.Same) == 0 && !reported[file][key] {
					t.Errorf("%s: %s is ignored but validate did not say so", file, key)
				}
			}
		}
	}
}

func sharedConfigs(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("MASSGEN_SHARED_CONFIGS"); d != "" {
		return d
	}
	dir, _ := filepath.Abs(".")
	for ; ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(filepath.Join(dir, "shared", "massgen-configs")); err == nil && fi.IsDir() {
			return filepath.Join(dir, "shared", "massgen-configs")
		}
		if filepath.Dir(dir) == dir {
			t.Skip("shared/massgen-configs not found above the checkout (set MASSGEN_SHARED_CONFIGS)")
		}
	}
}

// TestValidateNamesEachVocabulary: `configs validate` refuses a word outside each of the
// config's closed vocabularies (enumerated from internal/vocab, the one place their words are
// written) at its line, listing the words internal/vocab declares, all in one run.
func TestValidateNamesEachVocabulary(t *testing.T) {
	type at struct {
		line int
		key  string
	}
	// where is, for each vocabulary, the line and key of the word "bogus" in the config below.
	where := map[reflect.Type]at{
		reflect.TypeFor[vocab.PermissionMode]():    {3, "permissions.mode"},
		reflect.TypeFor[vocab.SandboxMode]():       {4, "command_sandbox"},
		reflect.TypeFor[vocab.Access]():            {7, "orchestrator.context_paths[0].permission"},
		reflect.TypeFor[vocab.Strictness]():        {8, "orchestrator.answer_novelty_requirement"},
		reflect.TypeFor[vocab.VotingSensitivity](): {9, "orchestrator.voting_sensitivity"},
		reflect.TypeFor[vocab.NetworkMode]():       {11, "orchestrator.command_network.mode"},
		reflect.TypeFor[vocab.Display]():           {13, "ui.display_type"}, // warned about, as MassGen reads any
		reflect.TypeFor[vocab.Phase]():             {20, "agents[0].backend.script[0].phase"},
		reflect.TypeFor[vocab.MCPTransport]():      {23, "agents[0].backend.mcp_servers[0].type"},
		reflect.TypeFor[vocab.SecurityLevel]():     {26, "agents[0].backend.mcp_servers[0].security.level"},
		reflect.TypeFor[vocab.EnvMode]():           {28, "agents[0].backend.mcp_servers[0].security.env.mode"},
	}
	e := newTestEnv(t)
	e.write(t, "c.yaml", `# every closed vocabulary, each with a word outside it
permissions:
  mode: bogus
command_sandbox: bogus
orchestrator:
  context_paths:
    - {path: ., permission: bogus}
  answer_novelty_requirement: bogus
  voting_sensitivity: bogus
  command_network:
    mode: bogus
ui:
  display_type: bogus
agents:
  - id: a
    backend:
      type: scripted
      script:
        - text: done
          phase: bogus
      mcp_servers:
        - name: tool
          type: bogus
          command: npx
          security:
            level: bogus
            env:
              mode: bogus
`)
	if code := e.validate([]string{"c.yaml"}, false, false); code != cmdutil.ExitUsage {
		t.Fatalf("exit %d, want 2\n%s", code, e.errOut)
	}
	for _, v := range vocab.All() {
		w, ok := where[v.Type]
		if !ok {
			t.Errorf("vocabulary %s is not in this test's config: add a key taking it", v.Type)
			continue
		}
		warn := ""
		if v.Type == reflect.TypeFor[vocab.Display]() {
			warn = "warning: "
		}
		want := fmt.Sprintf(`c.yaml:%d: %s%s: unknown %s "bogus" (known: %s)`, w.line, warn, w.key, v.Noun, strings.Join(v.Values, ", "))
		if !strings.Contains(e.errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, e.errOut)
		}
	}
}
