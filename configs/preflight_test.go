package configs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreflight(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lookPath := func(name string) (string, error) {
		switch name {
		case "npx", exe, "claude":
			return name, nil
		case "/no/such/server":
			return "", &exec.Error{Name: name, Err: os.ErrNotExist}
		}
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	tests := []struct {
		name      string
		backend   string
		wantProbs []string
		wantWarns []string
	}{
		{"runnable", "{type: openai, model: gpt-5}", nil, nil},
		{"default model", "{type: claude}", nil, nil},
		{"missing model", "{type: vllm}", []string{"config.yaml:3: agents[0].backend: missing model: the vllm backend has no default model; add model: NAME"}, nil},
		{"missing model behind a typo", "{type: openai, modle: gpt-5}",
			[]string{"config.yaml:3: agents[0].backend: missing model: the openai backend has no default model; add model: NAME (modle: at line 3; did you mean model?)"}, nil},
		{"claude_code with its CLI", "{type: claude_code}", nil, nil},
		{"mcp commands", "{type: claude, mcp_servers: [{name: a, command: npx}, {name: b, command: nope-cmd}, {name: c, command: /no/such/server}, {name: d, command: ./rel.py}, {name: e, command: " + exe + "}, {name: f, type: streamable-http, url: http://x}]}",
			[]string{
				`config.yaml:3: agents[0].backend.mcp_servers[1].command: MCP server "b": command "nope-cmd" is not on PATH: the agent would run without its tools`,
				`config.yaml:3: agents[0].backend.mcp_servers[2].command: MCP server "c": command "/no/such/server" cannot be run: `,
			}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := mustLoad(t, t.TempDir(), "agents:\n  - id: a\n    backend: "+tt.backend+"\n", nil)
			probs, warns := cfg.Preflight(lookPath)
			if len(probs) != len(tt.wantProbs) || len(warns) != len(tt.wantWarns) {
				t.Fatalf("problems %v, warnings %v; want %d and %d", probs, warns, len(tt.wantProbs), len(tt.wantWarns))
			}
			for i, w := range tt.wantProbs {
				if !strings.HasPrefix(probs[i].String(), w) {
					t.Errorf("problem %q, want prefix %q", probs[i], w)
				}
			}
			for i, w := range tt.wantWarns {
				if !strings.HasPrefix(warns[i].String(), w) {
					t.Errorf("warning %q, want prefix %q", warns[i], w)
				}
			}
		})
	}
}

// The start of a run refuses what validation refuses about the config and prints the same
// warnings: LoadForRun is Load plus Preflight.
func TestLoadForRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.yaml", "agents:\n  - id: a\n    backend: {type: grok, model: grok-4, enable_code_execution: true}\n")
	cfg, warnings, err := LoadForRun(LoadOptions{Name: ok, BaseDir: dir})
	if err != nil || cfg == nil || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "enable_code_execution: ignored: this backend has no provider code execution") {
		t.Fatalf("cfg %v, warnings %v, err %v", cfg, warnings, err)
	}
	bad := write("bad.yaml", "agents:\n  - id: a\n    backend: {type: claude_code}\n  - id: b\n    backend: {type: openai, betas: [x]}\n")
	t.Setenv("PATH", t.TempDir()) // no claude CLI
	cfg, warnings, err = LoadForRun(LoadOptions{Name: bad, BaseDir: dir})
	var ve *ValidationError
	if cfg != nil || !errors.As(err, &ve) || len(ve.Problems) != 2 {
		t.Fatalf("claude_code without its CLI and a missing model must stop the run: cfg %v, err %v", cfg, err)
	}
	if want := "agents[0].backend.type: claude_code needs `claude` on PATH (not found): install Claude Code"; !strings.Contains(ve.Problems[0].Message, want) {
		t.Errorf("problem %q, want %q", ve.Problems[0].Message, want)
	}
	if len(warnings) != 1 || warnings[0].Key != "agents[1].backend.betas" {
		t.Errorf("warnings = %v", warnings)
	}
	// Plain Load still reads the config, for the inspection commands.
	if _, _, err := Load(LoadOptions{Name: bad, BaseDir: dir}); err != nil {
		t.Errorf("Load: %v", err)
	}
}

func TestResolvedYAMLMarksWhatIsNotInEffect(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), `agents:
  - id: a
    backend:
      type: openai
      model: gpt-5
      enable_web_search: true
      command_line_docker_image: python:3.12
      mcp_servers:
        s: {command: npx, security: {level: strict}}
  - id: b
    backend: {type: claude_code, allowed_tools: [Read, Bash], max_turns: 3}
orchestrator:
  coordination: {enable_agent_task_planning: false}
  dspy: {enabled: true}
`, nil)
	out, err := cfg.ResolvedYAML()
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		"enable_web_search: true\n",
		"command_line_docker_image: python:3.12 # ignored: docker execution is not supported",
		"security:\n",
		"allowed_tools: # ignored (claude_code backend): Claude Code's own tools (Read, Write, Bash, ...) are turned off",
		"max_turns: 3\n",
		"enable_agent_task_planning: false\n",
		`dspy: # ignored: the question is not paraphrased`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("resolved YAML lacks %q:\n%s", want, got)
		}
	}
}
