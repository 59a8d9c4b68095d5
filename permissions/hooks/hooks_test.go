package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// A hook runs outside every sandbox: it must not inherit massgen's secrets.
func TestHookEnvironmentIsMinimal(t *testing.T) {
	secrets := map[string]string{
		"OPENAI_API_KEY": "sk-openai-secret", "ANTHROPIC_API_KEY": "sk-ant-secret", "GEMINI_API_KEY": "g-secret",
		"XAI_API_KEY": "x-secret", "GITHUB_TOKEN": "ghp-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
		"OPENAI_BASE_URL": "http://evil.example", "LD_PRELOAD": "/tmp/evil.so",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("LC_ALL", "C.UTF-8")
	t.Setenv("TZ", "UTC")
	out := filepath.Join(t.TempDir(), "env.txt")
	in := Input{Event: PreToolUse, Agent: "agent_a", Role: "final", Tool: "write_file", Workspace: "/w/ws1"}
	res, err := Run(context.Background(), configs.Hook{Command: "env > " + out}, in, os.Environ())
	if err != nil || res.Code != 0 {
		t.Fatalf("hook: %v %+v", err, res)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := string(data)
	for k, v := range secrets {
		if strings.Contains(env, k+"=") || strings.Contains(env, v) {
			t.Errorf("hook saw %s:\n%s", k, env)
		}
	}
	for _, want := range []string{"PATH=", "HOME=", "LC_ALL=C.UTF-8", "TZ=UTC", "MASSGEN_HOOK_EVENT=pre_tool_use",
		"MASSGEN_AGENT=agent_a", "MASSGEN_ROLE=final", "MASSGEN_TOOL=write_file", "MASSGEN_WORKSPACE=/w/ws1"} {
		if !strings.Contains(env, want) {
			t.Errorf("hook env lacks %q:\n%s", want, env)
		}
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		matcher string
		names   []string
		want    bool
	}{
		{"", []string{"write_file"}, true},
		{"*", []string{"anything"}, true},
		{"write_*", []string{"write_file"}, true},
		{"write_*", []string{"mcp__fs__write_file", "write_file"}, true},
		{"execute_*", []string{"write_file"}, false},
		{"[", []string{"write_file"}, false}, // a bad pattern matches nothing
	}
	for _, tt := range tests {
		if got := Matches(configs.Hook{Matcher: tt.matcher}, tt.names...); got != tt.want {
			t.Errorf("Matches(%q, %v) = %v, want %v", tt.matcher, tt.names, got, tt.want)
		}
	}
}
