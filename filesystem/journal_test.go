package filesystem

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/permissions"
)

// withJournal gives the toolset a change journal under <.massgen>/trash/journal.
func withJournal(j **changes.Journal) envOpt {
	return func(_ *permissions.Spec, o *ToolsetOptions) {
		jr, err := changes.NewJournal(filepath.Join(filepath.Dir(o.TrashDir), changes.JournalPrefix+"run1_turn1"), nil)
		if err == nil {
			err = jr.SetMeta(map[string]int{"turn": 1})
		}
		if err != nil {
			panic(err)
		}
		*j = jr
		o.Journal = jr
	}
}

// snapshotTree maps every file and link below root (relative slash path) to its content (a
// link: "-> target"); directories map to "/".
func treeState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case fi.IsDir():
			out[rel] = "/" + fi.Mode().Perm().String()
		default:
			b, _ := os.ReadFile(p)
			out[rel] = string(b) + " " + fi.Mode().Perm().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

type wantChange struct {
	rel  string
	op   changes.ChangeOp
	plus int
	mins int
}

// journalScenario is one turn of tool calls and what the journal must record of it.
type journalScenario struct {
	name  string
	setup map[string]string // files in the context path before the turn
	run   func(e *env)
	want  []wantChange
}

// journalScenarios are turns covering every tool that changes a context path: the journal
// records them (TestJournalRecordsAndUndoes), and a recovery of a run killed after them finds
// the same (TestRecoverJournalAfterAKill).
var journalScenarios = []journalScenario{
	{"write_file overwrite and create", nil, func(e *env) {
		e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "index.html"), "content": "<h1>new</h1>\n<p>two</p>\n"})
		e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "sub", "deep", "page.html"), "content": "a\nb\nc\n"})
		e.ok("write_file", map[string]any{"path": filepath.Join(e.ws, "draft.txt"), "content": "workspace"})
	}, []wantChange{{"index.html", changes.Modified, 2, 1}, {"sub/deep/page.html", changes.Created, 3, 0}}},
	{"edit_file twice keeps the first original", nil, func(e *env) {
		e.ok("edit_file", map[string]any{"path": filepath.Join(e.proj, "styles.css"), "edits": []any{map[string]any{"oldText": "red", "newText": "blue"}}})
		e.ok("edit_file", map[string]any{"path": filepath.Join(e.proj, "styles.css"), "edits": []any{map[string]any{"oldText": "blue", "newText": "green"}}})
	}, []wantChange{{"styles.css", changes.Modified, 1, 1}}},
	{"delete_file and a directory", map[string]string{"old/a.txt": "1\n2\n"}, func(e *env) {
		e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "index.html")})
		e.ok("delete_file", map[string]any{"path": filepath.Join(e.proj, "index.html")})
		e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "old", "a.txt")})
		e.ok("delete_file", map[string]any{"path": filepath.Join(e.proj, "old"), "recursive": true})
	}, []wantChange{{"index.html", changes.Deleted, 0, 1}, {"old/a.txt", changes.Deleted, 0, 2}}},
	{"modify then delete the parent", map[string]string{"d/x.txt": "original\n"}, func(e *env) {
		e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "d", "x.txt"), "content": "changed\n"})
		e.ok("delete_file", map[string]any{"path": filepath.Join(e.proj, "d"), "recursive": true})
	}, []wantChange{{"d/x.txt", changes.Deleted, 0, 1}}},
	{"move_file in a context path", nil, func(e *env) {
		e.ok("move_file", map[string]any{"source": filepath.Join(e.proj, "styles.css"), "destination": filepath.Join(e.proj, "css", "main.css")})
	}, []wantChange{{"css/main.css", changes.Created, 1, 0}, {"styles.css", changes.Deleted, 0, 1}}},
	{"copy_file over an existing file and a tree", nil, func(e *env) {
		write(e.t, filepath.Join(e.ws, "site", "index.html"), "<h1>copied</h1>\n")
		write(e.t, filepath.Join(e.ws, "site", "js", "app.js"), "x\n")
		e.ok("copy_file", map[string]any{"source_path": filepath.Join(e.ws, "site"), "destination_path": e.proj, "overwrite": true})
	}, []wantChange{{"index.html", changes.Modified, 1, 1}, {"js/app.js", changes.Created, 1, 0}}},
	{"copy_files_batch", nil, func(e *env) {
		write(e.t, filepath.Join(e.ws, "out", "a.txt"), "a\n")
		write(e.t, filepath.Join(e.ws, "out", "b.txt"), "b\n")
		e.ok("copy_files_batch", map[string]any{"source_base_path": filepath.Join(e.ws, "out"), "destination_base_path": filepath.Join(e.proj, "out")})
	}, []wantChange{{"out/a.txt", changes.Created, 1, 0}, {"out/b.txt", changes.Created, 1, 0}}},
	// In app/: Landlock keeps the directories holding protected paths (the project root)
	// read-only for entries, which is the sandbox's business, not the journal's.
	{"a command creates, changes and removes", map[string]string{"app/main.c": "int main;\n", "app/old.c": "old\n"}, func(e *env) {
		e.ok("execute_command", map[string]any{"work_dir": filepath.Join(e.proj, "app"),
			"command": "printf 'x\\ny\\n' >> main.c && rm old.c && mkdir -p gen && echo built > gen/out.txt && echo ws > " + filepath.Join(e.ws, "w.txt")})
	}, []wantChange{{"app/gen/out.txt", changes.Created, 1, 0}, {"app/main.c", changes.Modified, 2, 0}, {"app/old.c", changes.Deleted, 0, 1}}},
	{"a command that changes nothing", nil, func(e *env) {
		e.ok("execute_command", map[string]any{"work_dir": e.proj, "command": "cat index.html > /dev/null"})
	}, nil},
}

// TestJournalRecordsAndUndoes: every tool that changes a context path (and a command) is
// journaled with its line counts; undo puts the context path back exactly as it was, and
// workspace changes are neither journaled nor touched.
func TestJournalRecordsAndUndoes(t *testing.T) {
	modes := sandboxModes(t)
	tests := journalScenarios
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var j *changes.Journal
			e := newEnv(t, permissions.Final, withJournal(&j), withSandbox(modes[0]))
			for rel, content := range tt.setup {
				write(t, filepath.Join(e.proj, rel), content)
			}
			before := treeState(t, e.proj)
			wsBefore := treeState(t, e.ws)
			tt.run(e)
			cs, err := j.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got []wantChange
			for _, r := range cs.Files() {
				rel, _ := filepath.Rel(e.proj, r.Path)
				got = append(got, wantChange{filepath.ToSlash(rel), r.Op(), r.Added, r.Removed})
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("changes = %+v, want %+v", got, tt.want)
			}
			if cs.Incomplete != "" {
				t.Errorf("incomplete: %s", cs.Incomplete)
			}
			if len(tt.want) > 0 {
				loaded, err := changes.LoadChangeSet(filepath.Join(j.Dir(), "changes.json"))
				if err != nil {
					t.Fatal(err)
				}
				cs = loaded
			}
			wsAfter := treeState(t, e.ws)
			rep, err := cs.Undo(context.Background(), changes.UndoOptions{TrashDir: filepath.Join(e.massgen, "trash", "undo")})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Skipped) > 0 {
				t.Errorf("undo skipped %+v", rep.Skipped)
			}
			if after := treeState(t, e.proj); !equalTrees(before, after) {
				t.Errorf("after undo the context path differs:\nbefore %v\nafter  %v", before, after)
			}
			if ws := treeState(t, e.ws); !equalTrees(ws, wsAfter) {
				t.Errorf("undo touched the workspace: %v -> %v (was %v before the turn)", wsAfter, ws, wsBefore)
			}
		})
	}
}

// TestUndoRefusesChangedSince: a file changed after the turn is reported and left alone; the
// others are put back; --force puts it back too, keeping the newer version in the trash.
func TestUndoRefusesChangedSince(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	idx, css, page := filepath.Join(e.proj, "index.html"), filepath.Join(e.proj, "styles.css"), filepath.Join(e.proj, "page.html")
	e.ok("write_file", map[string]any{"path": idx, "content": "turn\n"})
	e.ok("write_file", map[string]any{"path": css, "content": "turn css\n"})
	e.ok("write_file", map[string]any{"path": page, "content": "new page\n"})
	cs, err := j.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	write(t, idx, "the user's later edit\n")
	write(t, page, "the user kept working on it\n")
	trash := filepath.Join(e.massgen, "trash", "undo1")
	rep, err := cs.Undo(context.Background(), changes.UndoOptions{TrashDir: trash})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, idx); got != "the user's later edit\n" {
		t.Errorf("a file changed since was touched: %q", got)
	}
	if got := read(t, page); got != "the user kept working on it\n" {
		t.Errorf("a created file changed since was removed: %q", got)
	}
	if got := read(t, css); got != "body { color: red; }\n" {
		t.Errorf("styles.css not restored: %q", got)
	}
	var skipped []string
	for _, s := range rep.Skipped {
		skipped = append(skipped, s.Path)
		if !strings.Contains(s.Reason, "changed since the turn") {
			t.Errorf("reason %q", s.Reason)
		}
	}
	slices.Sort(skipped)
	if !slices.Equal(skipped, []string{idx, page}) || !slices.Equal(rep.Restored, []string{css}) {
		t.Fatalf("report = %+v", rep)
	}
	rep, err = cs.Undo(context.Background(), changes.UndoOptions{TrashDir: filepath.Join(e.massgen, "trash", "undo2"), Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, idx); got != "<h1>hi</h1>\n" || exists(page) {
		t.Errorf("--force: index.html = %q, page.html exists: %v (report %+v)", got, exists(page), rep)
	}
	// Nothing is lost: the user's later versions (and the turn's styles.css) are in the trash.
	entries, err := changes.ListTrash(e.massgen)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, en := range entries {
		if en.Agent == "massgen undo" {
			kept = append(kept, read(t, filepath.Join(e.massgen, "trash", en.ID, "data")))
		}
	}
	slices.Sort(kept)
	if !slices.Equal(kept, []string{"the user kept working on it\n", "the user's later edit\n", "turn css\n"}) {
		t.Errorf("trash holds %q", kept)
	}
}

// TestJournalKeepsTheOriginalAgainstSwaps: while the final agent overwrites a context-path
// file again and again, a goroutine keeps swapping it with a link to a file outside. The
// original kept is always the file the walk judged, never the outside file, and the outside
// file is never written.
func TestJournalKeepsTheOriginalAgainstSwaps(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	secret := filepath.Join(e.out, "secret.txt")
	target := filepath.Join(e.proj, "swap.txt")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var swaps atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := filepath.Join(e.proj, ".swap-link")
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Remove(tmp)
			if os.Symlink(secret, tmp) == nil && os.Rename(tmp, target) == nil {
				swaps.Add(1)
			}
			_ = os.WriteFile(tmp, []byte("plain\n"), 0o644)
			_ = os.Rename(tmp, target)
		}
	}()
	for i := 0; i < 2000; i++ {
		e.call("write_file", map[string]any{"path": target, "content": "agent\n"})
	}
	close(stop)
	wg.Wait()
	if swaps.Load() == 0 {
		t.Fatal("the swapper never swapped")
	}
	if got := read(t, secret); got != "outside secret\n" {
		t.Fatalf("the outside file was written: %q", got)
	}
	cs, err := j.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cs.Records {
		if r.Before.Kept == "" {
			continue
		}
		b, err := os.ReadFile(r.Before.Kept)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("outside secret")) {
			t.Fatalf("the journal kept the outside file as the original of %s", r.Path)
		}
	}
}

// TestUndoNeverFollowsLinks: while undo puts files back, a goroutine keeps replacing the
// directory that holds them with a link to a folder outside. Nothing is ever written outside.
func TestUndoNeverFollowsLinks(t *testing.T) {
	lane.Long(t)
	for round := 0; round < 200; round++ {
		var j *changes.Journal
		e := newEnv(t, permissions.Final, withJournal(&j))
		dir := filepath.Join(e.proj, "d")
		write(t, filepath.Join(dir, "x.txt"), "original\n")
		e.ok("read_file", map[string]any{"path": filepath.Join(dir, "x.txt")})
		e.ok("delete_file", map[string]any{"path": dir, "recursive": true})
		cs, err := j.Finish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			tmp := filepath.Join(e.proj, ".link")
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = os.Remove(tmp)
				_ = os.Symlink(e.out, tmp)
				_ = os.Rename(tmp, dir)
			}
		}()
		_, _ = cs.Undo(context.Background(), changes.UndoOptions{TrashDir: filepath.Join(e.massgen, "trash", "undo"), Force: true})
		close(stop)
		wg.Wait()
		if exists(filepath.Join(e.out, "x.txt")) {
			t.Fatalf("round %d: undo wrote through a link into %s", round, e.out)
		}
	}
}

// TestCommandTooLargeRunsReadOnly: when the writable part of a context path is too large to
// keep, a command runs with it read-only and says so.
func TestCommandTooLargeRunsReadOnly(t *testing.T) {
	modes := sandboxModes(t)
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j), withSandbox(modes[0]))
	big := filepath.Join(e.proj, "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(changes.MaxKeepBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m, _ := e.call("execute_command", map[string]any{"work_dir": e.proj, "command": "echo pwned > index.html"})
	if got := read(t, filepath.Join(e.proj, "index.html")); got != "<h1>hi</h1>\n" {
		t.Fatalf("the command wrote a context path it could not keep: %q", got)
	}
	if stderr, _ := m["stderr"].(string); !strings.Contains(stderr, "were read-only for this command") {
		t.Errorf("stderr = %q", stderr)
	}
	cs, err := j.Finish(context.Background())
	if err != nil || len(cs.Records) != 0 {
		t.Fatalf("records %+v, %v", cs.Records, err)
	}
}

// TestChangeSummaryAndDiff: the summary names each file with its line counts, the diff is a
// unified diff per file, coloured only when asked.
func TestChangeSummaryAndDiff(t *testing.T) {
	var j *changes.Journal
	e := newEnv(t, permissions.Final, withJournal(&j))
	e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "index.html"), "content": "<h1>hello</h1>\n"})
	e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "new.txt"), "content": "one\ntwo\n"})
	cs, err := j.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := cs.Summary()
	for _, want := range []string{"1 added, 1 modified, 0 deleted", "modified  " + filepath.Join(e.proj, "index.html") + "  +1 -1", "added     " + filepath.Join(e.proj, "new.txt") + "  +2"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	var plain, color bytes.Buffer
	if err := cs.WriteDiff(&plain, false); err != nil {
		t.Fatal(err)
	}
	if err := cs.WriteDiff(&color, true); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(e.proj, "index.html")
	want := "massgen diff " + idx + " (modified)\n--- " + idx + "\n+++ " + idx + "\n@@ -1 +1 @@\n-<h1>hi</h1>\n+<h1>hello</h1>\n" +
		"massgen diff " + filepath.Join(e.proj, "new.txt") + " (added)\n--- /dev/null\n+++ " + filepath.Join(e.proj, "new.txt") + "\n@@ -0,0 +1,2 @@\n+one\n+two\n"
	if plain.String() != want {
		t.Errorf("diff =\n%s\nwant\n%s", plain.String(), want)
	}
	if strings.Contains(plain.String(), "\x1b[") || !strings.Contains(color.String(), "\x1b[31m-<h1>hi</h1>\x1b[0m") {
		t.Errorf("colour: plain has escapes or coloured lacks them:\n%q", color.String())
	}
}

// TestNilJournalRecordsNothing: a Toolset given a nil *changes.Journal (a caller's "no journal"
// that reaches the Recorder interface typed) changes context paths like one given none.
func TestNilJournalRecordsNothing(t *testing.T) {
	type step struct {
		tool string
		path string // below the context path
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"write", []step{{"write_file", "index.html"}}},
		{"mkdir", []step{{"create_directory", "new/dir"}}},
		{"delete", []step{{"read_file", "index.html"}, {"delete_file", "index.html"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, permissions.Final, func(_ *permissions.Spec, o *ToolsetOptions) {
				o.Journal = (*changes.Journal)(nil)
			})
			for _, s := range tt.steps {
				args := map[string]any{"path": filepath.Join(e.proj, filepath.FromSlash(s.path))}
				if s.tool == "write_file" {
					args["content"] = "x\n"
				}
				e.ok(s.tool, args)
			}
		})
	}
}
