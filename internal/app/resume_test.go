package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

func contextPathsOf(t *Turn) []string {
	var out []string
	for _, cp := range t.Config.Orchestrator.ContextPaths {
		out = append(out, cp.Path+":"+string(cp.Permission)+":"+strings.Join(cp.ProtectedPaths, ","))
	}
	return out
}

// TestEveryRunIsASessionAndContinueRestoresIt: a one-question run is saved as a session;
// --continue (or --session ID) with no other flag loads the session's config and context paths
// (protected paths and permissions included); flags given explicitly override them.
func TestEveryRunIsASessionAndContinueRestoresIt(t *testing.T) {
	// firstRun runs one question with --context in a fresh project; it returns the env, the
	// session id and the context paths the run had.
	firstRun := func(t *testing.T) (*testEnv, string, []string) {
		e := newTestEnv(t, "")
		e.Write(t, "c.yaml", workspaceConfig)
		e.Write(t, "alt.yaml", workspaceConfig)
		for _, f := range []string{"src/main.go", "docs/a.md", "other/x.txt"} {
			e.Write(t, f, "x")
		}
		first := &recorder{}
		opts := e.runOpts(first)
		opts.ConfigName, opts.Question = "c.yaml", "first"
		opts.Contexts = []string{"src", "docs:read"}
		if err := runRun(context.Background(), opts); err != nil {
			t.Fatalf("run: %v\n%s", err, e.ErrOut)
		}
		sessions, _ := filepath.Glob(filepath.Join(e.Wd, ".massgen", "sessions", "session_*"))
		if len(sessions) != 1 {
			t.Fatalf("a one-question run kept no session: %v\n%s", sessions, e.ErrOut)
		}
		cps := contextPathsOf(first.turn)
		if len(cps) != 2 || !strings.HasSuffix(cps[1], ":read:") {
			t.Fatalf("first run's context paths: %v", cps)
		}
		return e, filepath.Base(sessions[0]), cps
	}
	tests := []struct {
		name      string
		set       func(o *RunOptions, id string)
		wantCfg   string // relative to the project
		wantPaths []string
	}{
		{"--continue alone", func(o *RunOptions, _ string) { o.Continue = true }, "c.yaml", nil},
		{"--session ID alone", func(o *RunOptions, id string) { o.SessionID = id }, "c.yaml", nil},
		{"--config overrides", func(o *RunOptions, _ string) { o.Continue, o.ConfigName = true, "alt.yaml" }, "alt.yaml", nil},
		{"--context overrides", func(o *RunOptions, _ string) { o.Continue, o.Contexts = true, []string{"other:read"} }, "c.yaml", []string{"other:read:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, id, cps := firstRun(t)
			want := cps
			if tt.wantPaths != nil {
				want = nil
				for _, p := range tt.wantPaths {
					want = append(want, filepath.Join(e.Wd, p))
				}
			}
			rec := &recorder{}
			o := e.runOpts(rec)
			o.Question = "follow-up"
			tt.set(o, id)
			if err := runRun(context.Background(), o); err != nil {
				t.Fatalf("run: %v\n%s", err, e.ErrOut)
			}
			if got := rec.turn.Config.Source; got != filepath.Join(e.Wd, tt.wantCfg) {
				t.Errorf("config = %s, want %s", got, tt.wantCfg)
			}
			if got := contextPathsOf(rec.turn); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("context paths = %v, want %v", got, want)
			}
			if len(rec.turn.History) == 0 || rec.turn.History[0].User != "first" {
				t.Errorf("history = %v", rec.turn.History)
			}
		})
	}
}

func TestContinueWithoutAnySession(t *testing.T) {
	e := newTestEnv(t, "")
	o := e.runOpts(&recorder{})
	o.Continue, o.Question = true, "x"
	err := runRun(context.Background(), o)
	if cmdutil.CodeOf(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "no session to continue in "+filepath.Join(e.Wd, ".massgen", "sessions")) {
		t.Errorf("err = %v", err)
	}
}

// TestContinueWithAMissingConfig names the session and the config it ran with.
func TestContinueWithAMissingConfig(t *testing.T) {
	e := newTestEnv(t, "")
	cfg := e.Write(t, "c.yaml", workspaceConfig)
	o := e.runOpts(&recorder{})
	o.ConfigName, o.Question = "c.yaml", "first"
	if err := runRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	e.Write(t, "c.yaml", "") // now empty: not a valid config
	o = e.runOpts(&recorder{})
	o.Continue, o.Question = true, "x"
	err := runRun(context.Background(), o)
	if cmdutil.CodeOf(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "ran with config "+cfg) || !strings.Contains(err.Error(), "pass --config") {
		t.Errorf("err = %v", err)
	}
}

func TestLeavingInteractiveTellsHowToResume(t *testing.T) {
	e := newTestEnv(t, "a task\n/quit\n")
	e.Write(t, "c.yaml", workspaceConfig)
	o := e.runOpts(&recorder{})
	o.ConfigName, o.Yes = "c.yaml", true
	if err := runRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.ErrOut.String(), "Resume it with `massgen --continue` or `massgen --session session_") {
		t.Errorf("stderr:\n%s", e.ErrOut)
	}
}

// TestOutputJSONLines: stdout holds only JSON lines: files_changed and a result per turn, with
// the answer; a failure before any turn still ends with a result.
func TestOutputJSONLines(t *testing.T) {
	e := newTestEnv(t, "")
	e.Write(t, "c.yaml", workspaceConfig)
	o := e.runOpts(&recorder{})
	o.ConfigName, o.Question, o.Output = "c.yaml", "q", "json"
	if err := RunOutput(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(e.Out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout:\n%s", e.Out)
	}
	var fc, res map[string]any
	if json.Unmarshal([]byte(lines[0]), &fc) != nil || fc["type"] != "files_changed" ||
		json.Unmarshal([]byte(lines[1]), &res) != nil || res["type"] != "result" ||
		res["final_answer"] != "answer to q\n" || res["exit_code"] != 0.0 || !strings.HasPrefix(res["session"].(string), "session_") {
		t.Errorf("stdout:\n%s", e.Out)
	}

	e2 := newTestEnv(t, "")
	o = e2.runOpts(&recorder{failOn: "q"})
	e2.Write(t, "c.yaml", workspaceConfig)
	o.ConfigName, o.Question, o.Output = "c.yaml", "q", "json"
	err := RunOutput(context.Background(), o)
	if err == nil || !strings.Contains(e2.Out.String(), `"exit_code":1`) || !strings.Contains(e2.Out.String(), `"error":"boom"`) {
		t.Errorf("failed turn: %v\nstdout:\n%s", err, e2.Out)
	}

	e3 := newTestEnv(t, "")
	o = e3.runOpts(&recorder{})
	o.Question, o.Output = "q", "yaml"
	if err := RunOutput(context.Background(), o); cmdutil.CodeOf(err) != cmdutil.ExitUsage {
		t.Errorf("--output yaml: %v", err)
	}
}
