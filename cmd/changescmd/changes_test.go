package changescmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
	"github.com/massgen-go/massgen/session"
)

// turnWith runs calls as the final agent with a change journal (as a run does) and saves the
// turn in a session under dir/.massgen/sessions; it returns the project folder.
func turnWith(t *testing.T, dir string, calls map[string]map[string]any) string {
	t.Helper()
	proj := filepath.Join(dir, "project")
	ws := filepath.Join(dir, ".massgen", "workspaces", "ws")
	for _, d := range []string{proj, ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "index.html"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := permissions.New(permissions.Spec{Agent: "agent_a", Role: permissions.Final, Workspace: ws,
		ContextPaths: []permissions.ContextPath{{Path: proj, Write: true}}})
	if err != nil {
		t.Fatal(err)
	}
	trash := filepath.Join(dir, ".massgen", "trash")
	j, err := changes.NewJournal(filepath.Join(trash, "changes_turn1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := filesystem.NewToolset(filesystem.ToolsetOptions{Guard: guard.New(pol, guard.Options{}),
		TrashDir: filepath.Join(trash, "log_1"), Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	for tool, args := range calls {
		raw, _ := json.Marshal(args)
		if res := ts.Call(context.Background(), tool, raw); res.IsError {
			t.Fatalf("%s: %s", tool, res.Content)
		}
	}
	cs, err := j.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	store, err := session.Open(filepath.Join(dir, ".massgen", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.New(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveTurn(session.Turn{Task: "t", Answer: "a", Workspace: ws, Changes: cs,
		ContextPaths: []configs.ContextPath{{Path: proj, Permission: "write"}}}); err != nil {
		t.Fatal(err)
	}
	return proj
}

func TestDiffAndUndo(t *testing.T) {
	dir := t.TempDir()
	proj := turnWith(t, dir, map[string]map[string]any{
		"write_file": {"path": filepath.Join(dir, "project", "index.html"), "content": "new\n"},
	})
	tests := []struct {
		name     string
		tty      bool
		noColor  bool
		wantOut  string
		wantEsc  bool
		wantCode int
	}{
		{"plain", false, false, "--- " + filepath.Join(proj, "index.html") + "\n+++ " + filepath.Join(proj, "index.html") + "\n@@ -1 +1 @@\n-old\n+new\n", false, 0},
		{"terminal", true, false, "", true, 0},
		{"terminal with NO_COLOR", true, true, "-old\n+new\n", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, _ := cmdutil.TestStreams("")
			ios.StdoutTTY = tt.tty
			o := &Options{IO: ios, Getwd: func() (string, error) { return dir, nil },
				LookupEnv: func(k string) (string, bool) { return "", k == "NO_COLOR" && tt.noColor }, Now: time.Now}
			if err := diffRun(context.Background(), o); cmdutil.CodeOf(err) != tt.wantCode {
				t.Fatalf("diff: %v", err)
			}
			if !strings.Contains(out.String(), tt.wantOut) || strings.Contains(out.String(), "\x1b[") != tt.wantEsc {
				t.Errorf("diff output:\n%q", out.String())
			}
		})
	}

	ios, out, errOut := cmdutil.TestStreams("")
	o := &Options{IO: ios, Getwd: func() (string, error) { return dir, nil }, LookupEnv: func(string) (string, bool) { return "", false }, Now: time.Now}
	if err := undoRun(context.Background(), o); err != nil {
		t.Fatalf("undo: %v\n%s", err, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "index.html")); string(b) != "old\n" {
		t.Errorf("index.html after undo = %q", b)
	}
	if !strings.Contains(out.String(), "restored  "+filepath.Join(proj, "index.html")) {
		t.Errorf("undo output: %q", out.String())
	}
	// A second undo finds nothing left (the only turn is undone) and says how to redo it; with
	// --turn the turn is refused as already undone.
	ios, _, _ = cmdutil.TestStreams("")
	o.IO = ios
	if err := undoRun(context.Background(), o); cmdutil.CodeOf(err) != cmdutil.ExitFailure || !strings.Contains(err.Error(), "nothing left to undo") ||
		!strings.Contains(err.Error(), "--turn 1 --force") {
		t.Errorf("second undo: %v", err)
	}
	o.Turn = 1
	if err := undoRun(context.Background(), o); cmdutil.CodeOf(err) != cmdutil.ExitFailure || !strings.Contains(err.Error(), "already undone") {
		t.Errorf("undo --turn 1 again: %v", err)
	}
}

func TestUndoLeavesChangedFilesAlone(t *testing.T) {
	dir := t.TempDir()
	proj := turnWith(t, dir, map[string]map[string]any{
		"write_file": {"path": filepath.Join(dir, "project", "index.html"), "content": "new\n"},
	})
	if err := os.WriteFile(filepath.Join(proj, "index.html"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, out, _ := cmdutil.TestStreams("")
	o := &Options{IO: ios, Getwd: func() (string, error) { return dir, nil }, LookupEnv: func(string) (string, bool) { return "", false }, Now: time.Now}
	err := undoRun(context.Background(), o)
	if cmdutil.CodeOf(err) != cmdutil.ExitFailure || !strings.Contains(out.String(), "skipped   "+filepath.Join(proj, "index.html")+": changed since the turn") {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "index.html")); string(b) != "mine\n" {
		t.Errorf("a file changed since was touched: %q", b)
	}
	o.Force = true
	if err := undoRun(context.Background(), o); err != nil {
		t.Fatalf("undo --force: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "index.html")); string(b) != "old\n" {
		t.Errorf("--force did not put the original back: %q", b)
	}
}

func TestTurnChangesErrors(t *testing.T) {
	dir := t.TempDir()
	turnWith(t, dir, map[string]map[string]any{"write_file": {"path": filepath.Join(dir, "project", "x.txt"), "content": "x\n"}})
	tests := []struct {
		name    string
		o       Options
		code    int
		message string
	}{
		{"no such turn", Options{Turn: 5}, cmdutil.ExitUsage, "has turns 1 to 1, not 5"},
		{"negative turn", Options{Turn: -1}, cmdutil.ExitUsage, "numbered from 1"},
		{"bad session id", Options{Session: "../x"}, cmdutil.ExitUsage, "not a session id"},
		{"no sessions", Options{Config: ""}, cmdutil.ExitFailure, "no sessions in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _ := cmdutil.TestStreams("")
			o := tt.o
			o.IO, o.LookupEnv, o.Now = ios, func(string) (string, bool) { return "", false }, time.Now
			wd := dir
			if tt.name == "no sessions" {
				wd = t.TempDir()
			}
			o.Getwd = func() (string, error) { return wd, nil }
			err := diffRun(context.Background(), &o)
			if cmdutil.CodeOf(err) != tt.code || err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("err = %v (code %d), want code %d and %q", err, cmdutil.CodeOf(err), tt.code, tt.message)
			}
		})
	}
}

// TestTamperedChangesAreRefused: a changes.json naming copies outside this folder's trash, or a
// path outside the turn's context paths, is refused before undo touches anything.
func TestTamperedChangesAreRefused(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(cs map[string]any, dir string)
		want   string
	}{
		{"path outside the context paths", func(cs map[string]any, dir string) {
			cs["changes"].([]any)[0].(map[string]any)["path"] = filepath.Join(dir, "outside.txt")
		}, "in none of the turn's context paths"},
		{"copies in another trash", func(cs map[string]any, dir string) {
			other := filepath.Join(dir, "elsewhere")
			_ = os.MkdirAll(other, 0o755)
			cs["trash_root"] = other
			rec := cs["changes"].([]any)[0].(map[string]any)
			rec["before"].(map[string]any)["kept"] = ""
			rec["after"].(map[string]any)["kept"] = ""
		}, "not in this folder's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			turnWith(t, dir, map[string]map[string]any{"write_file": {"path": filepath.Join(dir, "project", "index.html"), "content": "new\n"}})
			files, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "*", "turn_1", "changes.json"))
			if len(files) != 1 {
				t.Fatalf("changes.json: %v", files)
			}
			raw, _ := os.ReadFile(files[0])
			var cs map[string]any
			if err := json.Unmarshal(raw, &cs); err != nil {
				t.Fatal(err)
			}
			tt.tamper(cs, dir)
			raw, _ = json.Marshal(cs)
			if err := os.WriteFile(files[0], raw, 0o600); err != nil {
				t.Fatal(err)
			}
			ios, _, _ := cmdutil.TestStreams("")
			o := &Options{IO: ios, Getwd: func() (string, error) { return dir, nil }, LookupEnv: func(string) (string, bool) { return "", false }, Now: time.Now, Force: true}
			err := undoRun(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("undo: %v, want %q", err, tt.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "project", "index.html")); string(b) != "new\n" {
				t.Errorf("a refused undo changed index.html: %q", b)
			}
		})
	}
}
