// Package clienv gives command tests a working directory, a home, fake streams and the
// environment a run checks (the API keys the test configs name), with the cmdutil.Factory over
// them: what cmd's tests (the whole command tree) and internal/app's (the run) share.
package clienv

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// WorkspaceConfig is a two-agent config (openai and claude) with workspaces and the
// orchestrator's folders, for tests that set a run up without running a model.
const WorkspaceConfig = `agents:
  - id: a1
    backend: {type: openai, model: gpt-5, cwd: workspace1}
  - id: a2
    backend: {type: claude, model: claude-sonnet-4, cwd: workspace2}
orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: temp_workspaces
`

// Env is a working directory, a home and fake streams.
type Env struct {
	Wd, Home    string
	Out, ErrOut *bytes.Buffer
	IO          *cmdutil.IOStreams
	Vars        map[string]string // the environment LookupEnv sees
}

// New makes an Env in t.TempDir() with stdin as its input.
func New(t testing.TB, stdin string) *Env {
	t.Helper()
	root := t.TempDir()
	e := &Env{Wd: filepath.Join(root, "project"), Home: filepath.Join(root, "home"),
		Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{},
		// The user has the keys the test configs need: a run checks them before it starts.
		Vars: map[string]string{"OPENAI_API_KEY": "test-key", "ANTHROPIC_API_KEY": "test-key", "GEMINI_API_KEY": "test-key"}}
	for _, d := range []string{e.Wd, e.Home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.IO = &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: e.Out, ErrOut: e.ErrOut}
	return e
}

// Factory is the commands' Factory over the Env.
func (e *Env) Factory() *cmdutil.Factory {
	return &cmdutil.Factory{
		IO:        e.IO,
		Getwd:     func() (string, error) { return e.Wd, nil },
		HomeDir:   func() (string, error) { return e.Home, nil },
		LookupEnv: func(k string) (string, bool) { v, ok := e.Vars[k]; return v, ok },
	}
}

// Write writes text to name (relative to the working directory) and returns its path.
func (e *Env) Write(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(e.Wd, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
