package doctorcmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/cmd/versioncmd"
)

const twoAgents = `agents:
  - id: gpt
    backend: {type: openai, model: gpt-5, cwd: ws1}
    command_network: {mode: allowlist, allowed_domains: [pypi.org]}
  - id: local
    backend:
      type: lmstudio
      model: qwen
      cwd: ws2
      mcp_servers:
        - {name: notes, command: massgen-doctor-notes}
        - {name: web, type: streamable-http, url: "http://127.0.0.1:1/mcp"}
`

type env struct {
	wd, home string
	vars     map[string]string
	onPath   map[string]bool
	out      *bytes.Buffer
}

func newEnv(t *testing.T) *env {
	root := t.TempDir()
	e := &env{wd: filepath.Join(root, "wd"), home: filepath.Join(root, "home"), vars: map[string]string{},
		onPath: map[string]bool{}, out: &bytes.Buffer{}}
	for _, d := range []string{e.wd, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) write(t *testing.T, name, text string) {
	t.Helper()
	p := filepath.Join(e.wd, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *env) run(configName string) (int, string) {
	f := &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{Out: e.out, ErrOut: &bytes.Buffer{}},
		Getwd:     func() (string, error) { return e.wd, nil },
		HomeDir:   func() (string, error) { return e.home, nil },
		LookupEnv: func(k string) (string, bool) { v, ok := e.vars[k]; return v, ok },
		LookPath: func(name string) (string, error) {
			if e.onPath[name] {
				return "/opt/bin/" + name, nil
			}
			return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
		},
	}
	opts := &Options{IO: f.IO, LoadConfig: f.LoadConfig, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv,
		LookPath: f.LookPath, Version: func() versioncmd.Info {
			return versioncmd.Info{Version: "v9.9.9", Commit: "abc123", GoVersion: "go1.26", Platform: "linux/amd64"}
		}, ConfigName: configName}
	return cmdutil.CodeOf(Run(opts)), e.out.String()
}

// From a folder below the project, doctor looks where a run from there looks: the project's
// .massgen/config.yaml is the config used, and its .massgen/ the state folder.
func TestDoctorFromASubfolder(t *testing.T) {
	e := newEnv(t)
	e.write(t, ".massgen/config.yaml", "agents:\n  - id: a\n    backend: {type: scripted, script: [{text: hi}], cwd: ws}\n")
	project := e.wd
	e.wd = filepath.Join(project, "src", "deep")
	if err := os.MkdirAll(e.wd, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := e.run("")
	for _, want := range []string{
		filepath.Join(project, ".massgen", "config.yaml") + " (used)",
		filepath.Join(project, ".massgen") + ": writable",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor from %s lacks %q (exit %d):\n%s", e.wd, want, code, out)
		}
	}
	if strings.Contains(out, filepath.Join(e.wd, ".massgen")) {
		t.Errorf("doctor looked in the current folder's .massgen:\n%s", out)
	}
}

func TestDoctor(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, e *env)
		config  string
		code    int
		want    []string
		notWant []string
	}{
		{"all well", func(t *testing.T, e *env) {
			e.write(t, "c.yaml", twoAgents)
			e.write(t, ".massgen/logs/x", "")
			e.vars["OPENAI_API_KEY"] = "sk-secret-value"
			e.onPath["massgen-doctor-notes"] = true
		}, "c.yaml", 0, []string{
			"massgen v9.9.9, commit abc123, go1.26 linux/amd64",
			"  ok    gpt (openai): OPENAI_API_KEY is set (in the environment)",
			"  ok    local (lmstudio): no key needed",
			"  ok    local: notes: massgen-doctor-notes (/opt/bin/massgen-doctor-notes)",
			"        local: web: http://127.0.0.1:1/mcp (a URL: reached when the run starts)",
			"  ok    no problem or warning",
			".massgen: writable",
			"Everything a run needs is in place.",
			"Command network",
			"gpt: allowlist (pypi.org)",
			"local: none",
		}, []string{"sk-secret-value", "FAIL"}},
		{"command network open", func(t *testing.T, e *env) {
			e.write(t, "c.yaml", "agents:\n  - id: a\n    backend: {type: scripted, script: [{text: hi}], cwd: ws}\norchestrator:\n  command_network: {mode: open}\n")
		}, "c.yaml", 0, []string{"  warn  a: open: commands reach any host (command_network: open)"}, nil},
		{"command network not enforced", func(t *testing.T, e *env) {
			e.write(t, "c.yaml", "agents:\n  - id: a\n    backend: {type: scripted, script: [{text: hi}], cwd: ws}\ncommand_sandbox: none\n")
		}, "c.yaml", 0, []string{"  warn  a: none: command_network mode none is not enforced: command_sandbox: none runs commands without a sandbox"}, nil},
		{"key from a .env file in ~/.config/massgen", func(t *testing.T, e *env) {
			e.write(t, "c.yaml", twoAgents)
			e.onPath["massgen-doctor-notes"] = true
			if err := os.MkdirAll(filepath.Join(e.home, ".config", "massgen"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.home, ".config", "massgen", ".env"), []byte("OPENAI_API_KEY=sk-from-dotenv\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "c.yaml", 0, []string{
			"OPENAI_API_KEY is set (in a .env file)",
			filepath.Join(e0home, ".config", "massgen", ".env") + " (read)",
		}, []string{"sk-from-dotenv"}},
		{"no key, no MCP command", func(t *testing.T, e *env) {
			e.write(t, "c.yaml", twoAgents)
		}, "c.yaml", 1, []string{
			`  FAIL  gpt (openai): backend "openai": no API key: set OPENAI_API_KEY in the environment (or .env), or api_key in the config`,
			`  FAIL  local: notes: MCP server "notes": command "massgen-doctor-notes" is not on PATH`,
			"2 problems to fix before a run.",
		}, []string{"Everything a run needs"}},
		{"the config does not load", func(t *testing.T, e *env) {
			e.write(t, "c.yaml", "agents:\n  - id: a\n    backend: {type: opnai}\n")
		}, "c.yaml", 1, []string{
			"  FAIL  config: does not load (see Config findings)",
			`  FAIL  c.yaml:3: agents[0].backend.type: unknown backend "opnai" (did you mean "openai"?`,
			"        not checked: no config",
		}, nil},
		{"findings are the validate findings", func(t *testing.T, e *env) {
			e.write(t, "c.yaml", "agents:\n  - id: a\n    backend: {type: openai, temprature: 1}\n")
			e.vars["OPENAI_API_KEY"] = "k"
		}, "c.yaml", 1, []string{
			"  FAIL  c.yaml:3: agents[0].backend: missing model",
			`  warn  c.yaml:3: warning: unknown key "agents[0].backend.temprature"`,
			"        a (openai): not checked: the backend cannot run (see Config findings)",
		}, nil},
		{"default config found in ~/.config/massgen", func(t *testing.T, e *env) {
			if err := os.MkdirAll(filepath.Join(e.home, ".config", "massgen"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.home, ".config", "massgen", "config.yaml"), []byte("agent: {id: a, backend: {type: scripted, script: [{text: hi}]}}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", 0, []string{
			filepath.Join(e0home, ".config", "massgen", "config.yaml") + " (used)",
			filepath.Join(e0home, ".massgen", "config.yaml") + " (absent)",
			"  ok    a (scripted): no key needed",
		}, nil},
		{"no config at all is not a failure", func(t *testing.T, e *env) {}, "", 0, []string{
			"  warn  no default config",
			"        not checked: no config",
			".massgen: does not exist yet; the first run creates it",
		}, nil},
		{".massgen is not a directory", func(t *testing.T, e *env) {
			e.write(t, ".massgen", "a file")
		}, "", 1, []string{".massgen: is not a directory"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.setup(t, e)
			code, out := e.run(tt.config)
			out = strings.ReplaceAll(out, e.home, e0home)
			if code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q", w)
				}
			}
			// The writability probe leaves nothing behind.
			for _, pat := range []string{"*", ".massgen/*"} {
				left, _ := filepath.Glob(filepath.Join(e.wd, pat, ".massgen-doctor-*"))
				more, _ := filepath.Glob(filepath.Join(e.wd, ".massgen-doctor-*"))
				if len(left)+len(more) > 0 {
					t.Errorf("probe files left: %v %v (%s)", left, more, pat)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// e0home stands for the test's home folder in expected output.
const e0home = "/HOME"
