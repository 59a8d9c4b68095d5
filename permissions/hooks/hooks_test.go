package hooks

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
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
	res, err := run(t, configs.Hook{Command: "env > " + out}, in)
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
	for _, want := range []string{"PATH=", "HOME=", "LC_ALL=C.UTF-8", "TZ=UTC", "PYTHONSAFEPATH=1", "MASSGEN_HOOK_EVENT=pre_tool_use",
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

// Hooks run through the system shell: on Unix /bin/sh -c, with its syntax (several lines,
// quoting, $((...))), the call on stdin and the exit status as the result.
func TestHookRunsThroughSystemShell(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Unix form; cmd.exe's command line is tested in internal/sysshell")
	}
	h := configs.Hook{Command: "read -r line\nprintf '%s|%s|' \"$MASSGEN_TOOL\" $((2*3))\ncase \"$line\" in *write_file*) exit 4;; esac"}
	res, err := run(t, h, Input{Event: PreToolUse, Tool: "write_file"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != 4 || res.Stdout != "write_file|6|" {
		t.Errorf("hook = %+v, want exit 4 and stdout %q", res, "write_file|6|")
	}
}

// Windows spells some variables in mixed case and compares them without case: they pass
// whatever their case; secrets do not.
func TestMinimalEnvWindowsNames(t *testing.T) {
	environ := []string{`Path=C:\Windows`, `SystemRoot=C:\Windows`, `PATHEXT=.EXE`, `ComSpec=C:\Windows\System32\cmd.exe`,
		`USERPROFILE=C:\Users\u`, "OPENAI_API_KEY=sk-x", "GitHub_Token=ghp-x"}
	env := MinimalEnv(environ, Input{Event: PostToolUse})
	got := strings.Join(env, "\n")
	for _, kv := range environ[:5] {
		if !strings.Contains(got, kv) {
			t.Errorf("MinimalEnv lacks %q:\n%s", kv, got)
		}
	}
	for _, s := range []string{"sk-x", "ghp-x"} {
		if strings.Contains(got, s) {
			t.Errorf("MinimalEnv passed a secret %q:\n%s", s, got)
		}
	}
}

// run readies h as a hook that needs no approval and runs it.
func run(t *testing.T, h configs.Hook, in Input) (Result, error) {
	t.Helper()
	hs, err := Prepare([]configs.Hook{h}, t.TempDir(), os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	var r Runner
	return r.Run(context.Background(), hs[0], in, os.Environ())
}

// A hook runs in an empty private folder of its own, never in massgen's working directory (the
// project, which an agent may write): python3 -m, npx and the like look there first.
func TestHookRunsInAnEmptyPrivateFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	wd, _ := os.Getwd()
	out := filepath.Join(t.TempDir(), "where")
	res, err := run(t, configs.Hook{Command: "pwd > " + out + "; ls -A >> " + out + "; stat -c %a . >> " + out}, Input{})
	if err != nil || res.Code != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] == wd || lines[1] != "700" {
		t.Errorf("hook ran in %q (massgen's is %s), want an empty 0700 folder", b, wd)
	}
	if _, err := os.Stat(lines[0]); !os.IsNotExist(err) {
		t.Errorf("the hook's folder %s was left behind", lines[0])
	}
}
