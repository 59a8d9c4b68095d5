package snapshots

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/massgen-go/massgen/internal/wsowner"
)

type fixture struct {
	t     *testing.T
	base  string
	store *Store
	ws    map[string]string
}

func newFixture(t *testing.T, agents ...string) *fixture {
	t.Helper()
	base := t.TempDir()
	s, err := New(Options{
		SnapshotRoot: filepath.Join(base, "snapshots"),
		TempRoot:     filepath.Join(base, "temp_workspaces"),
		LogDir:       filepath.Join(base, "logs"),
		Agents:       agents,
		Logger:       zaptest.NewLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, base: base, store: s, ws: map[string]string{}}
	for _, a := range agents {
		f.ws[a] = filepath.Join(base, ".massgen", "workspaces", a)
		if _, err := wsowner.Claim(f.ws[a], filepath.Join(base, ".massgen"), false); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) write(agent, rel, content string) {
	f.t.Helper()
	writeFile(f.t, filepath.Join(f.ws[agent], rel), content)
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) save(agent, reason string) bool {
	f.t.Helper()
	ok, err := f.store.Save(context.Background(), agent, f.ws[agent], reason)
	if err != nil {
		f.t.Fatalf("Save(%s, %s): %v", agent, reason, err)
	}
	return ok
}

func (f *fixture) fill(agent string) map[string]string {
	f.t.Helper()
	if err := f.store.FillTemp(context.Background(), agent); err != nil {
		f.t.Fatalf("FillTemp(%s): %v", agent, err)
	}
	return tree(f.t, f.store.TempDir(agent))
}

// tree describes every entry under dir: "d 0755" for directories, "l -> target" for symlinks,
// "f 0644 content" for files.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			out[rel] = "d"
		case info.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			out[rel] = "l -> " + tg
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("f %v %s", info.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func sub(m map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if r, ok := strings.CutPrefix(k, prefix+"/"); ok {
			out[r] = v
		}
	}
	return out
}

func assertTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if got[k] != v {
			diffs = append(diffs, fmt.Sprintf("  %s: got %q, want %q", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("  %s: unexpected %q", k, v))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Errorf("%s differs:\n%s", what, strings.Join(diffs, "\n"))
	}
}

func TestLifecycle(t *testing.T) {
	f := newFixture(t, "alpha", "beta")
	s := f.store
	f.write("alpha", "index.html", "<h1>v1</h1>")
	f.write("alpha", "css/site.css", "body{}")

	if !f.save("alpha", "answer") {
		t.Fatal("first save reported nothing saved")
	}
	want := tree(t, f.ws["alpha"])
	assertTree(t, "snapshot after answer", tree(t, s.SnapshotDir("alpha")), want)

	// After the answer the workspace is cleared (spec: Workspace Lifecycle).
	if err := ClearWorkspace(f.ws["alpha"]); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, f.ws["alpha"]); len(got) != 0 {
		t.Fatalf("workspace not empty after ClearWorkspace: %v", got)
	}
	if fi, err := os.Stat(f.ws["alpha"]); err != nil || !fi.IsDir() {
		t.Fatalf("ClearWorkspace removed the workspace itself: %v", err)
	}

	// beta sees alpha's answer under the anonymous id, nothing of its own.
	got := f.fill("beta")
	assertTree(t, "beta's temp", got, prefixed("agent1", want))

	// alpha's next execution: its own temp holds its own answer only (beta has no snapshot yet).
	assertTree(t, "alpha's temp", f.fill("alpha"), prefixed("agent1", want))

	// alpha works again and answers with a change, a new file and a deletion.
	f.write("alpha", "index.html", "<h1>v2</h1>")
	f.write("alpha", "js/app.js", "run()")
	f.save("alpha", "answer")
	want2 := tree(t, f.ws["alpha"])
	assertTree(t, "snapshot after second answer", tree(t, s.SnapshotDir("alpha")), want2)
	assertTree(t, "beta's temp after refill", f.fill("beta"), prefixed("agent1", want2))

	// Log copies: one per save, timestamped, with the reason.
	logs, err := os.ReadDir(filepath.Join(f.base, "logs", "snapshots", "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 2 || !strings.HasSuffix(logs[0].Name(), "_answer") {
		t.Fatalf("log copies: %v", logs)
	}
	assertTree(t, "first log copy", tree(t, filepath.Join(f.base, "logs", "snapshots", "alpha", logs[0].Name())), want)

	// An unchanged save (a vote) keeps the snapshot and logs a link to the previous copy.
	f.save("alpha", "vote")
	logs, _ = os.ReadDir(filepath.Join(f.base, "logs", "snapshots", "alpha"))
	if len(logs) != 3 || !strings.HasSuffix(logs[2].Name(), "_vote") {
		t.Fatalf("log copies after vote: %v", logs)
	}
	assertTree(t, "vote log copy", tree(t, filepath.Join(f.base, "logs", "snapshots", "alpha", logs[2].Name())+"/"), want2)
}

func prefixed(p string, m map[string]string) map[string]string {
	out := map[string]string{p: "d"}
	for k, v := range m {
		out[p+"/"+k] = v
	}
	return out
}

func TestEmptyWorkspaceNeverReplacesSnapshot(t *testing.T) {
	f := newFixture(t, "a", "b")
	// Nothing yet: an empty workspace makes no snapshot at all.
	if f.save("a", "vote") {
		t.Fatal("empty workspace reported as saved")
	}
	if f.store.HasSnapshot("a") {
		t.Fatal("snapshot made from an empty workspace")
	}
	if got := f.fill("b"); len(got) != 0 {
		t.Fatalf("temp shows an agent without snapshot: %v", got)
	}
	// A missing workspace is the same as an empty one.
	if ok, err := f.store.Save(context.Background(), "a", filepath.Join(f.base, "nope"), "vote"); ok || err != nil {
		t.Fatalf("missing workspace: saved=%v err=%v", ok, err)
	}

	f.write("a", "answer.md", "the answer")
	f.save("a", "answer")
	want := tree(t, f.ws["a"])
	if err := ClearWorkspace(f.ws["a"]); err != nil {
		t.Fatal(err)
	}
	// The agent only votes afterwards: its answer's files stay.
	if f.save("a", "vote") {
		t.Fatal("save of the cleared workspace reported as saved")
	}
	assertTree(t, "snapshot after vote with empty workspace", tree(t, f.store.SnapshotDir("a")), want)
	assertTree(t, "b's temp", f.fill("b"), prefixed("agent1", want))

	// An empty directory is content (the agent made it): it does replace the snapshot.
	if err := os.Mkdir(filepath.Join(f.ws["a"], "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !f.save("a", "answer") {
		t.Fatal("workspace with a directory not saved")
	}
	assertTree(t, "snapshot of a directory-only workspace", tree(t, f.store.SnapshotDir("a")), map[string]string{"empty": "d"})
}

func TestAnonymity(t *testing.T) {
	// Real ids that could be confused with anonymous ones, in an order that differs from theirs.
	agents := []string{"gpt5_reviewer", "agent3", "claude-coder", "agent1"}
	f := newFixture(t, agents...)
	for i, a := range agents {
		f.write(a, "notes/work.txt", fmt.Sprintf("work of agent #%d", i))
		f.save(a, "answer")
	}
	for i, a := range agents {
		if got, want := f.store.AnonID(a), fmt.Sprintf("agent%d", i+1); got != want {
			t.Errorf("AnonID(%s) = %q, want %q", a, got, want)
		}
	}
	for _, viewer := range agents {
		got := f.fill(viewer)
		var anon []string
		for rel := range got {
			top := strings.Split(rel, string(filepath.Separator))[0]
			if !slices.Contains(anon, top) {
				anon = append(anon, top)
			}
			for _, real := range agents {
				if real != f.store.AnonID(real) && strings.Contains(rel, real) && !strings.HasPrefix(real, "agent") {
					t.Errorf("%s's temp path %q reveals the real id %q", viewer, rel, real)
				}
			}
		}
		slices.Sort(anon)
		want := []string{"agent1", "agent2", "agent3", "agent4"} // its own work included
		if !slices.Equal(anon, want) {
			t.Errorf("%s sees %v, want %v", viewer, anon, want)
		}
		// Each anonymous folder holds the right agent's work.
		for j, src := range agents {
			if c := got[filepath.Join(f.store.AnonID(src), "notes/work.txt")]; !strings.HasSuffix(c, fmt.Sprintf("work of agent #%d", j)) {
				t.Errorf("%s: %s's folder holds %q", viewer, f.store.AnonID(src), c)
			}
		}
	}
	// The mapping is fixed for the run (same store, later calls).
	if f.store.AnonID("claude-coder") != "agent3" || f.store.AnonID("nobody") != "" {
		t.Error("anonymous ids not stable")
	}
}

// Every agent sees every snapshot, its own included (as in MassGen): a restarted agent finds its
// partial work, the winner its earlier work; agents without a snapshot have no folder, and an
// agent's folder follows its latest snapshot.
func TestTempHoldsEveryAgentsSnapshotOwnIncluded(t *testing.T) {
	f := newFixture(t, "a", "b", "c")
	for _, a := range []string{"a", "b"} {
		f.write(a, "out.txt", "by "+a)
		f.save(a, "answer")
	}
	got := f.fill("b")
	if got["agent1/out.txt"] != "f -rw-r--r-- by a" || got["agent2/out.txt"] != "f -rw-r--r-- by b" || got["agent3"] != "" {
		t.Fatalf("b's temp: %v", got)
	}
	f.write("b", "out.txt", "by b, again")
	f.save("b", "restart")
	if got := f.fill("b"); got["agent2/out.txt"] != "f -rw-r--r-- by b, again" {
		t.Fatalf("b's own folder after its next snapshot: %v", got)
	}
}

func TestSnapshotsNeverWrittenInPlace(t *testing.T) {
	f := newFixture(t, "a", "b")
	f.write("a", "data.txt", "version 1")
	f.save("a", "answer")
	f.fill("b")
	tempFile := filepath.Join(f.store.TempDir("b"), "agent1", "data.txt")

	// The agent rewrites its file in place (same inode): the snapshot must not change, so the
	// snapshot cannot share the workspace's inode.
	if err := os.WriteFile(filepath.Join(f.ws["a"], "data.txt"), []byte("version 2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.store.SnapshotDir("a"), "data.txt")); string(b) != "version 1" {
		t.Fatalf("snapshot follows the workspace: %q", b)
	}
	// The next save replaces the snapshot file; the temp workspace filled before keeps the old
	// content until it is refilled (the old inode is never written).
	f.save("a", "answer")
	if b, _ := os.ReadFile(tempFile); string(b) != "version 1" {
		t.Fatalf("temp file written through the snapshot: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.store.SnapshotDir("a"), "data.txt")); string(b) != "version 2" {
		t.Fatalf("snapshot not updated: %q", b)
	}
	if got := f.fill("b"); got["agent1/data.txt"] != "f -rw-r--r-- version 2" {
		t.Fatalf("temp after refill: %v", got)
	}
}

func TestChangeDetection(t *testing.T) {
	f := newFixture(t, "a", "b")
	ws := f.ws["a"]
	f.write("a", "same-size.txt", "AAAA")
	f.write("a", "dir-to-file/x", "x")
	f.write("a", "file-to-dir", "f")
	f.write("a", "gone/deep/file", "g")
	f.write("a", "mode.sh", "#!/bin/sh")
	f.write("a", "target1", "t1")
	f.write("a", "target2", "t2")
	if err := os.Symlink("target1", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	f.save("a", "answer")
	f.fill("b")

	// Same size and an mtime put back: only ctime tells.
	p := filepath.Join(ws, "same-size.txt")
	fi, _ := os.Stat(p)
	if err := os.WriteFile(p, []byte("BBBB"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	must(t, os.RemoveAll(filepath.Join(ws, "dir-to-file")))
	f.write("a", "dir-to-file", "now a file")
	must(t, os.Remove(filepath.Join(ws, "file-to-dir")))
	f.write("a", "file-to-dir/inner", "now a dir")
	must(t, os.RemoveAll(filepath.Join(ws, "gone")))
	must(t, os.Chmod(filepath.Join(ws, "mode.sh"), 0o755))
	must(t, os.Remove(filepath.Join(ws, "link")))
	must(t, os.Symlink("target2", filepath.Join(ws, "link")))
	f.save("a", "answer")

	want := tree(t, ws)
	assertTree(t, "snapshot", tree(t, f.store.SnapshotDir("a")), want)
	assertTree(t, "temp (incremental refill)", f.fill("b"), prefixed("agent1", want))
	if want["same-size.txt"] != "f -rw-r--r-- BBBB" || want["mode.sh"] != "f -rwxr-xr-x #!/bin/sh" {
		t.Fatalf("fixture did not change as intended: %v", want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSymlinks(t *testing.T) {
	f := newFixture(t, "a", "b")
	ws := f.ws["a"]
	outside := filepath.Join(f.base, "secret.txt")
	writeFile(t, outside, "secret")
	f.write("a", "real/file.txt", "inside")
	links := []struct {
		name, target string
		kept         bool
	}{
		{"to-file", "real/file.txt", true},
		{"to-dir", "real", true},
		{"real/up-and-back", "../real/file.txt", true},
		{"dot", ".", true},
		{"absolute-outside", outside, false},
		{"absolute-inside", filepath.Join(ws, "real/file.txt"), false}, // would lead to the live workspace
		{"escape", "../secret.txt", false},
		{"deep-escape", "real/../../secret.txt", false},
		{"dangling", "nothing-here", false},
		// Lexically inside, but "dot/.." is the parent of the workspace once "dot" is followed.
		{"through-link", "dot/../secret.txt", false},
		{"chain-out", "escape", false},
		{"chain-in", "to-file", true},
	}
	for _, l := range links {
		must(t, os.Symlink(l.target, filepath.Join(ws, l.name)))
	}
	f.save("a", "answer")
	snap := tree(t, f.store.SnapshotDir("a"))
	for _, l := range links {
		got, ok := snap[l.name]
		if ok != l.kept {
			t.Errorf("symlink %s -> %s: kept=%v, want %v", l.name, l.target, ok, l.kept)
		}
		if ok && got != "l -> "+l.target {
			t.Errorf("symlink %s copied as %q, want it verbatim", l.name, got)
		}
	}
	// And the kept ones still resolve inside the temp workspace.
	f.fill("b")
	root, err := os.OpenRoot(filepath.Join(f.store.TempDir("b"), "agent1"))
	must(t, err)
	defer root.Close()
	for _, l := range links {
		if l.kept {
			if _, err := root.Stat(l.name); err != nil {
				t.Errorf("kept symlink %s does not resolve inside the temp copy: %v", l.name, err)
			}
		}
	}
}

func TestRestartPartialWork(t *testing.T) {
	// Spec, "Example Coordination Flow": A answers, B is interrupted and its partial work is
	// saved before its workspace is cleared; in round 2 each sees the other's work.
	f := newFixture(t, "agentA", "agentB")
	f.write("agentA", "game.py", "complete game")
	f.write("agentB", "draft/game.py", "half a game")

	f.save("agentA", "answer")
	must(t, ClearWorkspace(f.ws["agentA"]))
	// B gets restart_pending: partial work saved, then its workspace cleared.
	if !f.save("agentB", "restart") {
		t.Fatal("partial work not saved")
	}
	must(t, ClearWorkspace(f.ws["agentB"]))

	// Round 2: each sees the other's work, and its own (B continues from its draft).
	a := f.fill("agentA")
	if a["agent2/draft/game.py"] != "f -rw-r--r-- half a game" || a["agent1/game.py"] != "f -rw-r--r-- complete game" {
		t.Fatalf("agentA's temp: %v", a)
	}
	b := f.fill("agentB")
	if b["agent1/game.py"] != "f -rw-r--r-- complete game" || b["agent2/draft/game.py"] != "f -rw-r--r-- half a game" {
		t.Fatalf("agentB's temp: %v", b)
	}
	if got := tree(t, f.ws["agentB"]); len(got) != 0 {
		t.Fatalf("agentB's workspace not cleared: %v", got)
	}
	logs, _ := filepath.Glob(filepath.Join(f.base, "logs", "snapshots", "agentB", "*_restart"))
	if len(logs) != 1 {
		t.Fatalf("restart log copy: %v", logs)
	}
}

func TestNewStartsClean(t *testing.T) {
	base := t.TempDir()
	o := Options{SnapshotRoot: filepath.Join(base, "snap"), TempRoot: filepath.Join(base, "temp"), Agents: []string{"x", "y"}}
	writeFile(t, filepath.Join(o.TempRoot, "x", "agent2", "stale.txt"), "old run")
	writeFile(t, filepath.Join(o.SnapshotRoot, "y", "stale.txt"), "old run")
	writeFile(t, filepath.Join(o.SnapshotRoot, ".staging", "y-123", "half"), "killed run")
	s, err := New(o)
	must(t, err)
	if got := tree(t, o.TempRoot); len(got) != 0 {
		t.Errorf("stale temp data left: %v", got)
	}
	if got := tree(t, o.SnapshotRoot); len(got) != 0 {
		t.Errorf("stale snapshots left: %v", got)
	}
	if s.HasSnapshot("y") {
		t.Error("stale snapshot counted")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"relative", Options{SnapshotRoot: "snap", TempRoot: filepath.Join(base, "t"), Agents: []string{"a"}}, "not an absolute path"},
		{"nested", Options{SnapshotRoot: base, TempRoot: filepath.Join(base, "t"), Agents: []string{"a"}}, "must not contain"},
		{"no agents", Options{SnapshotRoot: filepath.Join(base, "s"), TempRoot: filepath.Join(base, "t")}, "no agents"},
		{"slash id", Options{SnapshotRoot: filepath.Join(base, "s"), TempRoot: filepath.Join(base, "t"), Agents: []string{"../evil"}}, `"../evil"`},
		{"dup id", Options{SnapshotRoot: filepath.Join(base, "s"), TempRoot: filepath.Join(base, "t"), Agents: []string{"a", "a"}}, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want error containing %q", err, tt.want)
			}
		})
	}
	s, err := New(Options{SnapshotRoot: filepath.Join(base, "s"), TempRoot: filepath.Join(base, "t"), Agents: []string{"a"}})
	must(t, err)
	if _, err := s.Save(context.Background(), "zed", base, "answer"); err == nil || !strings.Contains(err.Error(), `unknown agent "zed"`) {
		t.Fatalf("Save of unknown agent: %v", err)
	}
}

func TestClearWorkspaceDoesNotFollowSymlinks(t *testing.T) {
	base := t.TempDir()
	mg := filepath.Join(base, ".massgen")
	ws := filepath.Join(mg, "workspaces", "ws")
	keep := filepath.Join(base, "keep")
	_, err := wsowner.Claim(ws, mg, false)
	must(t, err)
	writeFile(t, filepath.Join(keep, "precious.txt"), "keep me")
	writeFile(t, filepath.Join(ws, "a", "b.txt"), "x")
	must(t, os.Symlink(keep, filepath.Join(ws, "link-to-keep")))
	must(t, ClearWorkspace(ws))
	if got := tree(t, ws); len(got) != 0 {
		t.Fatalf("not cleared: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(keep, "precious.txt")); err != nil || string(b) != "keep me" {
		t.Fatalf("ClearWorkspace followed a symlink: %q %v", b, err)
	}
	if err := ClearWorkspace("/"); err == nil {
		t.Fatal("ClearWorkspace(/) accepted")
	}
	must(t, ClearWorkspace(filepath.Join(mg, "workspaces", "new")))
	if fi, err := os.Stat(filepath.Join(mg, "workspaces", "new")); err != nil || !fi.IsDir() {
		t.Fatal("ClearWorkspace did not create a missing directory")
	}
}

// ClearWorkspace leaves whole every folder massgen did not create: a user folder, the project
// holding .massgen itself, a workspace swapped for a symlink to a user folder. A folder the
// config gives massgen (cwd_owned) is cleared only with a trash, into it.
func TestClearWorkspaceOnlyWhatMassgenMade(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, project, mg, user string) string
	}{
		{"a user folder", func(t *testing.T, _, _, user string) string { return user }},
		{"the project folder", func(t *testing.T, project, _, _ string) string { return project }},
		{"a workspace swapped for a symlink", func(t *testing.T, _, mg, user string) string {
			ws := filepath.Join(mg, "workspaces", "w1")
			_, err := wsowner.Claim(ws, mg, false)
			must(t, err)
			must(t, os.Remove(ws))
			must(t, os.Symlink(user, ws))
			return ws
		}},
		{"cwd_owned without a trash", func(t *testing.T, _, mg, user string) string {
			_, err := wsowner.Claim(user, mg, true)
			must(t, err)
			return user
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			project := filepath.Join(t.TempDir(), "project")
			mg, user := filepath.Join(project, ".massgen"), filepath.Join(t.TempDir(), "user")
			writeFile(t, filepath.Join(user, "precious.txt"), "mine")
			writeFile(t, filepath.Join(project, "main.go"), "package main")
			writeFile(t, filepath.Join(mg, "logs", "run.log"), "log")
			before := map[string]map[string]string{"user": tree(t, user), "project": tree(t, project)}
			ws := tt.setup(t, project, mg, user)
			for _, err := range []error{ClearWorkspace(ws), Clear(ws, ClearOptions{MassgenDir: mg})} {
				var no *wsowner.NotOwnedError
				if !errors.As(err, &no) || !strings.Contains(err.Error(), "not cleared") {
					t.Errorf("clearing %s = %v, want a NotOwnedError", ws, err)
				}
			}
			assertTree(t, "user folder", tree(t, user), before["user"])
			if tt.name != "a workspace swapped for a symlink" && tt.name != "cwd_owned without a trash" {
				assertTree(t, "project", tree(t, project), before["project"])
			}
		})
	}
	t.Run("cwd_owned with a trash", func(t *testing.T) {
		mg, user := filepath.Join(t.TempDir(), ".massgen"), filepath.Join(t.TempDir(), "user")
		writeFile(t, filepath.Join(user, "precious.txt"), "mine")
		writeFile(t, filepath.Join(user, "sub", "deep.txt"), "deep")
		_, err := wsowner.Claim(user, mg, true)
		must(t, err)
		var trashed []string
		trash := func(dir, name string) error {
			trashed = append(trashed, name)
			return os.Rename(filepath.Join(dir, name), filepath.Join(mg, name))
		}
		must(t, Clear(user, ClearOptions{MassgenDir: mg, Trash: trash}))
		slices.Sort(trashed)
		if strings.Join(trashed, ",") != "precious.txt,sub" || len(tree(t, user)) != 0 {
			t.Errorf("trashed %v, left %v", trashed, tree(t, user))
		}
	})
}

// TestConcurrentSaveAndFillTemp runs every agent's goroutine at once: each rewrites its whole
// workspace to version N, saves, and refills its temp workspace, where every other agent's
// folder must hold one version throughout (old or new, never half).
func TestConcurrentSaveAndFillTemp(t *testing.T) {
	agents := []string{"a", "b", "c"}
	f := newFixture(t, agents...)
	const rounds, files = 15, 20
	var wg sync.WaitGroup
	errs := make(chan error, len(agents)*rounds)
	for _, id := range agents {
		wg.Go(func() {
			ctx := context.Background()
			for n := range rounds {
				for i := range files {
					p := filepath.Join(f.ws[id], fmt.Sprintf("d%d/f%d.txt", i%3, i))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						errs <- err
						return
					}
					if err := os.WriteFile(p, fmt.Appendf(nil, "%s version %d", id, n), 0o644); err != nil {
						errs <- err
						return
					}
				}
				if n%4 == 3 {
					if err := ClearWorkspace(f.ws[id]); err != nil {
						errs <- err
						return
					}
				}
				if _, err := f.store.Save(ctx, id, f.ws[id], "answer"); err != nil {
					errs <- err
					return
				}
				if err := f.store.FillTemp(ctx, id); err != nil {
					errs <- err
					return
				}
				got := tree(t, f.store.TempDir(id))
				versions := map[string]map[string]bool{}
				for rel, v := range got {
					if !strings.HasPrefix(v, "f ") {
						continue
					}
					anon := strings.Split(rel, "/")[0]
					if versions[anon] == nil {
						versions[anon] = map[string]bool{}
					}
					versions[anon][v[strings.Index(v, "version"):]] = true
				}
				for anon, vs := range versions {
					if len(vs) != 1 {
						errs <- fmt.Errorf("%s's temp: %s mixes versions %v", id, anon, vs)
					}
					if n := len(sub(got, anon)); n != files+3 {
						errs <- fmt.Errorf("%s's temp: %s has %d entries, want %d", id, anon, n, files+3)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSaveCancelled(t *testing.T) {
	f := newFixture(t, "a")
	f.write("a", "x.txt", "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ok, err := f.store.Save(ctx, "a", f.ws["a"], "answer"); ok || err == nil {
		t.Fatalf("cancelled save: saved=%v err=%v", ok, err)
	}
	// Nothing half-made, and the next save works.
	if f.store.HasSnapshot("a") {
		t.Fatal("snapshot from a cancelled save")
	}
	f.save("a", "answer")
	assertTree(t, "snapshot", tree(t, f.store.SnapshotDir("a")), tree(t, f.ws["a"]))
	_ = time.Now
}

func TestTempRebuiltWhenMissingOrSnapshotRebuilt(t *testing.T) {
	f := newFixture(t, "a", "b")
	f.write("a", "x.txt", "1")
	f.save("a", "answer")
	f.fill("b")

	// Someone removed the temp folder: the next fill rebuilds it even though nothing changed.
	must(t, os.RemoveAll(filepath.Join(f.store.TempDir("b"), "agent1")))
	if got := f.fill("b"); got["agent1/x.txt"] != "f -rw-r--r-- 1" {
		t.Fatalf("temp not rebuilt: %v", got)
	}
	// The snapshot vanished: the next save rebuilds it in full and temp folders follow.
	must(t, os.RemoveAll(f.store.SnapshotDir("a")))
	f.write("a", "y.txt", "2")
	f.save("a", "answer")
	assertTree(t, "snapshot", tree(t, f.store.SnapshotDir("a")), tree(t, f.ws["a"]))
	assertTree(t, "temp", f.fill("b"), prefixed("agent1", tree(t, f.ws["a"])))
	// Junk in a temp workspace goes.
	writeFile(t, filepath.Join(f.store.TempDir("b"), "junk.txt"), "x")
	if got := f.fill("b"); got["junk.txt"] != "" {
		t.Fatal("junk kept in temp workspace")
	}
}

func TestCopyTree(t *testing.T) {
	base := t.TempDir()
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
	writeFile(t, filepath.Join(src, "a", "b.txt"), "b")
	writeFile(t, filepath.Join(base, "outside.txt"), "o")
	must(t, os.Symlink("../outside.txt", filepath.Join(src, "out")))
	must(t, os.Symlink("a/b.txt", filepath.Join(src, "in")))
	must(t, CopyTree(context.Background(), src, dst, nil))
	want := tree(t, src)
	delete(want, "out")
	assertTree(t, "copy", tree(t, dst), want)
	// A missing source gives an empty destination.
	must(t, CopyTree(context.Background(), filepath.Join(base, "none"), filepath.Join(base, "d2"), nil))
	if fi, err := os.Stat(filepath.Join(base, "d2")); err != nil || !fi.IsDir() {
		t.Fatal("no destination folder for a missing source")
	}
}
