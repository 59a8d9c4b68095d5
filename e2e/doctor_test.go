package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctorConfig has an agent needing OPENAI_API_KEY, an MCP server command and a workspace (so
// it runs commands); sandbox is its command_sandbox.
func doctorConfig(sandbox string) string {
	return `agents:
  - id: gpt
    backend:
      type: openai
      model: gpt-5
      cwd: ws
      mcp_servers: [{name: notes, command: massgen-e2e-notes-server}]
command_sandbox: ` + sandbox + "\n"
}

// massgen doctor with the real binary: with and without the key, with and without the MCP
// command on PATH, and with and without bubblewrap (a PATH that lacks bwrap).
func TestDoctor(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	haveBwrap := err == nil && exec.Command(bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true").Run() == nil

	// A folder with only the MCP server command: on PATH, bwrap is not found.
	tools := t.TempDir()
	writeFile(t, filepath.Join(tools, "massgen-e2e-notes-server"), "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(filepath.Join(tools, "massgen-e2e-notes-server"), 0o755); err != nil {
		t.Fatal(err)
	}
	fullPath := tools + string(os.PathListSeparator) + os.Getenv("PATH")

	tests := []struct {
		name      string
		path      string
		key       bool
		sandbox   string
		needBwrap bool
		code      int
		want      []string
		notWant   []string
	}{
		{"all well", fullPath, true, "auto", false, 0, []string{
			"  ok    gpt (openai): OPENAI_API_KEY is set (in the environment)",
			"  ok    gpt: notes: massgen-e2e-notes-server (" + filepath.Join(tools, "massgen-e2e-notes-server") + ")",
			"Everything a run needs is in place.",
		}, []string{"sk-e2e-doctor", "FAIL"}},
		{"no key", fullPath, false, "auto", false, 1, []string{
			`  FAIL  gpt (openai): backend "openai": no API key: set OPENAI_API_KEY`,
			"1 problem to fix before a run.",
		}, nil},
		{"MCP command not on PATH", os.Getenv("PATH"), true, "auto", false, 1, []string{
			`  FAIL  gpt: notes: MCP server "notes": command "massgen-e2e-notes-server" is not on PATH`,
		}, nil},
		{"bubblewrap installed", fullPath, true, "bubblewrap", true, 0, []string{
			"  ok    bubblewrap: " + bwrap,
			"  ok    command_sandbox: bubblewrap: commands run under bubblewrap",
		}, nil},
		{"bubblewrap not on PATH", tools, true, "bubblewrap", false, 1, []string{
			"  -     bubblewrap: command_sandbox: bubblewrap: bwrap is not installed",
			"  FAIL  command_sandbox: bubblewrap: command_sandbox: bubblewrap: bwrap is not installed",
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needBwrap && !haveBwrap {
				t.Skip("bubblewrap is not installed or cannot create a sandbox here")
			}
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "cfg.yaml"), doctorConfig(tt.sandbox))
			env := []string{"PATH=" + tt.path, "HOME=" + t.TempDir(), "TMPDIR=" + os.TempDir(), "XDG_CONFIG_HOME=" + xdgConfig}
			if tt.key {
				env = append(env, "OPENAI_API_KEY=sk-e2e-doctor")
			}
			res := runEnv(t, dir, env, "doctor", "--config", "cfg.yaml")
			if res.code != tt.code {
				t.Errorf("exit %d, want %d", res.code, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.stdout, w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(res.stdout+res.stderr, w) {
					t.Errorf("output has %q", w)
				}
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			}
		})
	}
}

// --version and `massgen version` print the same build information; a typo of a command with a
// config present is refused before anything runs.
func TestVersionAndTypos(t *testing.T) {
	dir := t.TempDir()
	a, b := run(t, dir, "--version"), run(t, dir, "version")
	if a.code != 0 || a.stdout != b.stdout || !strings.HasPrefix(a.stdout, "massgen ") || !strings.Contains(a.stdout, "\ngo1.") {
		t.Errorf("--version %q (exit %d), version %q", a.stdout, a.code, b.stdout)
	}
	writeFile(t, filepath.Join(dir, ".massgen", "config.yaml"), "agent: {id: a, backend: {type: scripted, script: [{text: hi}]}}\n")
	res := run(t, dir, "versoin")
	if res.code != 2 || !strings.Contains(res.stderr, `did you mean "version"?`) || res.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".massgen", "logs")); !os.IsNotExist(err) {
		t.Errorf("a run started: %v", err)
	}
}
