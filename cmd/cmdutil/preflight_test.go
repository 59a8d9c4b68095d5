package cmdutil

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// CheckConfig reports every problem of every agent at once: keys by variable, missing models,
// refused types, MCP commands.
func TestCheckConfig(t *testing.T) {
	cfg, _, err := configs.LoadBytes("c.yaml", []byte(`agents:
  - id: a
    backend: {type: openai, model: gpt-5}
  - id: b
    backend: {type: claude_code}
  - id: c
    backend: {type: vllm}
  - id: d
    backend:
      type: gemini
      model: gemini-2.5-flash
      mcp_servers: [{name: s, command: massgen-test-no-such-command}]
`), configs.LoadOptions{BaseDir: t.TempDir(), LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	lookPath := func(name string) (string, error) { return "", &exec.Error{Name: name, Err: exec.ErrNotFound} }
	var got []string
	probs, _ := CheckConfig(cfg, lookPath)
	for _, p := range probs {
		got = append(got, p.Key)
	}
	want := []string{"agents[0].backend.api_key", "agents[1].backend.type", "agents[2].backend",
		"agents[3].backend.api_key", "agents[3].backend.mcp_servers[0].command"} // by line
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("problems at %q, want %q", got, want)
	}
}

// BenchmarkCheckConfig: the preflight of the largest built-in (50 agents), which every run now
// pays before its first prompt.
func BenchmarkCheckConfig(b *testing.B) {
	env := map[string]string{"GEMINI_API_KEY": "k"}
	cfg, _, err := configs.Load(configs.LoadOptions{Name: "@examples/basic/multi/fifty_gemini_agents", BaseDir: b.TempDir(),
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if probs, _ := CheckConfig(cfg, nil); len(probs) != 0 {
			b.Fatal(probs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/50, "µs/agent")
}
