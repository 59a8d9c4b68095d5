package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// scriptedConfig answers "the answer" offline (the scripted backend), so a test can see whether
// a run happened.
const scriptedConfig = `agent:
  id: a
  backend:
    type: scripted
    script:
      - phase: coordination
        tool_calls: [{name: new_answer, args: {content: "ok"}}]
      - phase: final
        text: "the answer"
`

// A one-word question a typo away from a command is refused (exit 2, did you mean) instead of
// starting a run; after -- it is a task; exact command names are commands; a real one-word task
// runs.
func TestCommandTypos(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string // prefix
		stderr  string // substring
		wantRun bool
	}{
		{"versoin", []string{"--display", "silent", "versoin"}, cmdutil.ExitUsage, "", `"versoin" is not a command: did you mean "version"?`, false},
		{"helpp", []string{"--display", "silent", "helpp"}, cmdutil.ExitUsage, "", `did you mean "help"?`, false},
		{"sesions", []string{"--display", "silent", "sesions"}, cmdutil.ExitUsage, "", `did you mean "sessions"?`, false},
		{"case does not hide it", []string{"--display", "silent", "Configz"}, cmdutil.ExitUsage, "", `did you mean "configs"?`, false},
		{"the way out is named", []string{"--display", "silent", "tols"}, cmdutil.ExitUsage, "", "massgen [flags] -- tols", false},
		{"after -- it is a task", []string{"--display", "silent", "--", "versoin"}, cmdutil.ExitOK, "the answer", "", true},
		{"a real one-word task", []string{"--display", "silent", "refactor"}, cmdutil.ExitOK, "the answer", "", true},
		{"hello is not help", []string{"--display", "silent", "hello"}, cmdutil.ExitOK, "the answer", "", true},
		{"several words are a task", []string{"--display", "silent", "helpp me"}, cmdutil.ExitOK, "the answer", "", true},
		{"version is a command", []string{"version"}, cmdutil.ExitOK, "massgen ", "", false},
		{"--version", []string{"--version"}, cmdutil.ExitOK, "massgen ", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, "")
			e.Write(t, ".massgen/config.yaml", scriptedConfig) // a config is present: a run could start
			code := e.exec(tt.args...)
			if code != tt.code || !strings.HasPrefix(e.Out.String(), tt.stdout) || !strings.Contains(e.ErrOut.String(), tt.stderr) {
				t.Fatalf("exit %d (want %d), stdout %q, stderr:\n%s", code, tt.code, e.Out, e.ErrOut)
			}
			_, err := os.Stat(filepath.Join(e.Wd, ".massgen", "logs"))
			if ran := err == nil; ran != tt.wantRun {
				t.Errorf("a run happened: %v, want %v", ran, tt.wantRun)
			}
		})
	}
}
