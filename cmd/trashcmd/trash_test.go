package trashcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// deleteFromContext deletes file through a real Toolset (final agent, write context path) so the
// trash is filled exactly as in a run.
func deleteFromContext(t *testing.T, dir, file string) {
	t.Helper()
	ws := filepath.Join(dir, ".massgen", "workspaces", "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	pol, err := permissions.New(permissions.Spec{Agent: "agent_a", Role: permissions.Final, Workspace: ws,
		ContextPaths: []permissions.ContextPath{{Path: filepath.Join(dir, "project"), Write: true}}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := filesystem.NewToolset(filesystem.ToolsetOptions{Guard: guard.New(pol, guard.Options{}),
		TrashDir: filepath.Join(dir, ".massgen", "trash", "log_20260101_000000")})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"path": file})
	if res := ts.Call(context.Background(), "delete_file", args); res.IsError {
		t.Fatalf("delete: %s", res.Content)
	}
}

func setup(t *testing.T) (string, *Options, *bytes.Buffer, *bytes.Buffer) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "project"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	o := &Options{IO: &cmdutil.IOStreams{Out: out, ErrOut: errOut}, Getwd: func() (string, error) { return dir, nil }}
	return dir, o, out, errOut
}

func TestListAndRestore(t *testing.T) {
	dir, o, out, errOut := setup(t)
	if err := listRun(o); err != nil || !strings.Contains(errOut.String(), "empty") {
		t.Fatalf("empty list: %v %q", err, errOut)
	}
	f := filepath.Join(dir, "project", "notes.md")
	if err := os.WriteFile(f, []byte("keep me"), 0o640); err != nil {
		t.Fatal(err)
	}
	deleteFromContext(t, dir, f)
	if _, err := os.Stat(f); err == nil {
		t.Fatal("file not deleted")
	}
	out.Reset()
	if err := listRun(o); err != nil {
		t.Fatal(err)
	}
	id := "log_20260101_000000/0001"
	if s := out.String(); !strings.Contains(s, id) || !strings.Contains(s, f) || !strings.Contains(s, "agent_a") {
		t.Fatalf("list = %q", s)
	}
	o.JSON = true
	out.Reset()
	if err := listRun(o); err != nil {
		t.Fatal(err)
	}
	var entries []changes.TrashEntry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != 1 || entries[0].ID != id {
		t.Fatalf("json list = %q (%v)", out, err)
	}
	out.Reset()
	o.IDs = []string{id}
	if err := restoreRun(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(f); err != nil || string(b) != "keep me" || !strings.Contains(out.String(), "restored "+id+" -> "+f) {
		t.Fatalf("restore: %q %v, out %q", b, err, out)
	}
	if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode not kept: %v", fi.Mode())
	}
	// Restoring again fails (exit 1) with a message.
	errOut.Reset()
	if code := cmdutil.CodeOf(restoreRun(t.Context(), o)); code != cmdutil.ExitFailure || !strings.Contains(errOut.String(), "no trash entry") {
		t.Fatalf("second restore: exit %d, %q", code, errOut)
	}
}

func TestUsage(t *testing.T) {
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getwd: os.Getwd}
	for _, args := range [][]string{{}, {"restore"}} {
		cmd := NewCmd(f)
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if code := cmdutil.CodeOf(cmd.Execute()); code != cmdutil.ExitUsage {
			t.Errorf("trash %v: exit %d, want 2", args, code)
		}
	}
}
