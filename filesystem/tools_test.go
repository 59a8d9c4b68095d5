package filesystem

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

var roles = []struct {
	name string
	role permissions.Role
}{{"coordination", permissions.Coordination}, {"final", permissions.Final}}

func TestReadFile(t *testing.T) {
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			e := newEnv(t, r.role)
			write(t, filepath.Join(e.ws, "a.txt"), "one\ntwo\nthree\n")
			if got := e.ok("read_file", map[string]any{"path": "a.txt"})["content"]; got != "one\ntwo\nthree\n" {
				t.Errorf("relative read = %q", got)
			}
			if got := e.ok("read_file", map[string]any{"path": filepath.Join(e.ws, "a.txt"), "head": 1})["content"]; got != "one\n" {
				t.Errorf("head = %q", got)
			}
			if got := e.ok("read_file", map[string]any{"path": "a.txt", "tail": 2})["content"]; got != "two\nthree\n" {
				t.Errorf("tail = %q", got)
			}
			if got := e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "index.html")})["content"]; got != "<h1>hi</h1>\n" {
				t.Errorf("context read = %q", got)
			}
			e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "golden", "expected.txt")}) // protected is readable
			e.ok("read_file", map[string]any{"path": filepath.Join(e.temp, "agent2", "notes.md")})
			e.ok("read_file", map[string]any{"path": filepath.Join(e.single, "config.yaml")})
			e.fail("read_file", map[string]any{"path": filepath.Join(e.single, "sibling.txt")}, "")
			e.fail("read_file", map[string]any{"path": filepath.Join(e.out, "secret.txt")}, "")
			e.fail("read_file", map[string]any{"path": "../outside/secret.txt"}, "")
			e.fail("read_file", map[string]any{"path": "missing.txt"}, "does not exist")
			e.fail("read_file", map[string]any{"path": e.ws}, "directory")
			e.fail("read_file", map[string]any{}, "path")
		})
	}
}

func TestBinaryFilesRefused(t *testing.T) {
	e := newEnv(t, permissions.Final)
	write(t, filepath.Join(e.ws, "pic.png"), "not really a png")
	write(t, filepath.Join(e.ws, "blob.txt"), "abc\x00def")
	write(t, filepath.Join(e.ws, "report.pdf"), "%PDF")
	m := e.fail("read_file", map[string]any{"path": "pic.png"}, "binary file (image)")
	if msg := m["error"].(string); !strings.Contains(msg, "understand_image") || !strings.Contains(msg, "read_file") {
		t.Errorf("message does not say what to use instead: %q", msg)
	}
	e.fail("read_file", map[string]any{"path": "blob.txt"}, "binary file")
	e.fail("read_file", map[string]any{"path": "report.pdf"}, "pdftotext")
	e.fail("edit_file", map[string]any{"path": "blob.txt", "edits": []any{map[string]any{"oldText": "abc", "newText": "x"}}}, "binary")
	_, res := e.call("read_multiple_files", map[string]any{"paths": []any{"pic.png"}})
	if !res.IsError {
		t.Error("read_multiple_files of only binary files should be an error result")
	}
	// Binary files can still be copied and inspected.
	e.ok("get_file_info", map[string]any{"path": "pic.png"})
	e.ok("copy_file", map[string]any{"source_path": "pic.png", "destination_path": "pic2.png"})
}

func TestReadMultipleFiles(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	write(t, filepath.Join(e.ws, "a.txt"), "A")
	m := e.ok("read_multiple_files", map[string]any{"paths": []any{"a.txt", filepath.Join(e.proj, "styles.css"), "nope.txt"}})
	files := m["files"].([]any)
	if len(files) != 3 || files[0].(map[string]any)["content"] != "A" || files[2].(map[string]any)["error"] == nil {
		t.Fatalf("files = %v", files)
	}
	// A path outside makes the whole call denied by the permission layer.
	e.fail("read_multiple_files", map[string]any{"paths": []any{"a.txt", filepath.Join(e.out, "secret.txt")}}, "")
}

func TestWriteFile(t *testing.T) {
	t.Run("coordination", func(t *testing.T) {
		e := newEnv(t, permissions.Coordination)
		m := e.ok("write_file", map[string]any{"path": "sub/dir/new.txt", "content": "hello"})
		if m["created"] != true || read(t, filepath.Join(e.ws, "sub", "dir", "new.txt")) != "hello" {
			t.Fatalf("write = %v", m)
		}
		// Context paths are read-only for coordination agents, temp workspaces always.
		e.fail("write_file", map[string]any{"path": filepath.Join(e.proj, "index.html"), "content": "x"}, "")
		e.fail("write_file", map[string]any{"path": filepath.Join(e.temp, "agent2", "notes.md"), "content": "x"}, "")
		e.fail("write_file", map[string]any{"path": filepath.Join(e.out, "x.txt"), "content": "x"}, "")
		if read(t, filepath.Join(e.proj, "index.html")) != "<h1>hi</h1>\n" {
			t.Fatal("context file changed")
		}
	})
	t.Run("final", func(t *testing.T) {
		e := newEnv(t, permissions.Final)
		target := filepath.Join(e.proj, "styles.css")
		if err := os.Chmod(target, 0o751); err != nil {
			t.Fatal(err)
		}
		m := e.ok("write_file", map[string]any{"path": target, "content": "body{}"})
		if m["created"] != false || read(t, target) != "body{}" {
			t.Fatalf("write = %v", m)
		}
		if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o751 {
			t.Errorf("mode not kept: %v", fi.Mode())
		}
		// No temp file left behind.
		ents, _ := os.ReadDir(e.proj)
		for _, en := range ents {
			if strings.Contains(en.Name(), "massgen-tmp") {
				t.Errorf("leftover temp file %s", en.Name())
			}
		}
		e.ok("write_file", map[string]any{"path": filepath.Join(e.single, "config.yaml"), "content": "a: 2\n"})
		for _, p := range []string{filepath.Join(e.proj, "golden", "expected.txt"), filepath.Join(e.proj, "golden", "new.txt"),
			filepath.Join(e.proj, ".git", "HEAD"), filepath.Join(e.proj, ".env"), filepath.Join(e.single, "sibling.txt"),
			filepath.Join(e.single, "new.txt"), filepath.Join(e.temp, "agent2", "notes.md")} {
			e.fail("write_file", map[string]any{"path": p, "content": "x"}, "")
		}
		if read(t, filepath.Join(e.proj, "golden", "expected.txt")) != "golden\n" || exists(filepath.Join(e.single, "new.txt")) {
			t.Fatal("protected or sibling path modified")
		}
	})
}

func TestEditFile(t *testing.T) {
	e := newEnv(t, permissions.Final)
	p := filepath.Join(e.proj, "app.py")
	write(t, p, "def f():\n    return 1\n\nprint(f())\n")
	m := e.ok("edit_file", map[string]any{"path": p, "dryRun": true, "edits": []any{map[string]any{"oldText": "return 1", "newText": "return 2"}}})
	if !strings.Contains(m["diff"].(string), "-    return 1\n+    return 2\n") || read(t, p) != "def f():\n    return 1\n\nprint(f())\n" {
		t.Fatalf("dry run: %v / file %q", m["diff"], read(t, p))
	}
	// Whitespace-insensitive line match keeps the file's indentation.
	m = e.ok("edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "return 1", "newText": "return 2"},
		map[string]any{"oldText": "def f():\n  return 2", "newText": "def g():\n    return 3"}}})
	if got := read(t, p); got != "def g():\n    return 3\n\nprint(f())\n" {
		t.Fatalf("edited = %q", got)
	}
	if m["added"].(float64) != 2 || m["removed"].(float64) != 2 {
		t.Errorf("counts = %v %v", m["added"], m["removed"])
	}
	e.fail("edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "nothere", "newText": "x"}}}, "could not find")
	e.fail("edit_file", map[string]any{"path": filepath.Join(e.proj, "golden", "expected.txt"), "edits": []any{map[string]any{"oldText": "golden", "newText": "x"}}}, "")
	// Coordination agents may preview (dry run reads) but not write context files.
	c := newEnv(t, permissions.Coordination)
	c.ok("edit_file", map[string]any{"path": filepath.Join(c.proj, "index.html"), "dryRun": true, "edits": []any{map[string]any{"oldText": "hi", "newText": "ho"}}})
	c.fail("edit_file", map[string]any{"path": filepath.Join(c.proj, "index.html"), "edits": []any{map[string]any{"oldText": "hi", "newText": "ho"}}}, "")
}

func TestDirectoriesAndSearch(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	m := e.ok("create_directory", map[string]any{"path": "a/b/c"})
	if m["created"] != true || !exists(filepath.Join(e.ws, "a", "b", "c")) {
		t.Fatalf("create_directory = %v", m)
	}
	e.ok("create_directory", map[string]any{"path": "a/b/c"}) // idempotent
	write(t, filepath.Join(e.ws, "a", "x.go"), "package a")
	write(t, filepath.Join(e.ws, "a", "b", "y.go"), "package b")
	write(t, filepath.Join(e.ws, "README.md"), "readme")
	m = e.ok("list_directory", map[string]any{"path": "."})
	if l := m["listing"].(string); !strings.Contains(l, "[DIR] a") || !strings.Contains(l, "[FILE] README.md") {
		t.Errorf("listing = %q", l)
	}
	m = e.ok("directory_tree", map[string]any{"path": e.ws})
	if tree := m["tree"].([]any); len(tree) != 2 {
		t.Errorf("tree = %v", tree)
	}
	m = e.ok("search_files", map[string]any{"path": ".", "pattern": "**/*.go"})
	if got := strs(m["matches"]); len(got) != 2 {
		t.Errorf("glob matches = %v", got)
	}
	m = e.ok("search_files", map[string]any{"path": ".", "pattern": "readme"})
	if got := strs(m["matches"]); len(got) != 1 || got[0] != filepath.Join(e.ws, "README.md") {
		t.Errorf("substring matches = %v", got)
	}
	m = e.ok("search_files", map[string]any{"path": ".", "pattern": "*.go", "excludePatterns": []any{"a/b"}})
	if got := strs(m["matches"]); len(got) != 1 {
		t.Errorf("excluded matches = %v", got)
	}
	m = e.ok("get_file_info", map[string]any{"path": "README.md"})
	if m["size"].(float64) != 6 || m["isFile"] != true {
		t.Errorf("info = %v", m)
	}
	m = e.ok("list_allowed_directories", map[string]any{})
	if w := strs(m["writable"]); len(w) != 1 || w[0] != e.ws {
		t.Errorf("writable = %v", w)
	}
	// The parent of a single-file context path is not listable; outside is not either.
	e.fail("list_directory", map[string]any{"path": e.single}, "")
	e.fail("list_directory", map[string]any{"path": e.out}, "")
	e.fail("create_directory", map[string]any{"path": filepath.Join(e.proj, "new")}, "")
}

func TestMoveFile(t *testing.T) {
	e := newEnv(t, permissions.Final)
	write(t, filepath.Join(e.ws, "a.txt"), "A")
	write(t, filepath.Join(e.ws, "b.txt"), "B")
	e.fail("move_file", map[string]any{"source": "a.txt", "destination": "b.txt"}, "exists")
	e.ok("move_file", map[string]any{"source": "a.txt", "destination": "d/c.txt"})
	if exists(filepath.Join(e.ws, "a.txt")) || read(t, filepath.Join(e.ws, "d", "c.txt")) != "A" {
		t.Fatal("move within workspace failed")
	}
	// Deliver from the workspace into the context path (final agent).
	e.ok("move_file", map[string]any{"source": "b.txt", "destination": filepath.Join(e.proj, "b.txt")})
	if read(t, filepath.Join(e.proj, "b.txt")) != "B" {
		t.Fatal("move to context path failed")
	}
	e.fail("move_file", map[string]any{"source": e.ws, "destination": filepath.Join(e.proj, "ws")}, "")
	e.fail("move_file", map[string]any{"source": filepath.Join(e.proj, "golden"), "destination": filepath.Join(e.proj, "g2")}, "")
	e.fail("move_file", map[string]any{"source": filepath.Join(e.proj, ".git"), "destination": filepath.Join(e.proj, "git")}, "")
	e.fail("move_file", map[string]any{"source": "d", "destination": "d/inner"}, "itself")
}

func TestCopyFile(t *testing.T) {
	t.Run("final delivers", func(t *testing.T) {
		e := newEnv(t, permissions.Final)
		write(t, filepath.Join(e.ws, "site", "index.html"), "<h1>new</h1>")
		write(t, filepath.Join(e.ws, "site", "golden", "expected.txt"), "overwritten?")
		write(t, filepath.Join(e.ws, "site", "css", "main.css"), "css")
		e.ok("copy_file", map[string]any{"source_path": "site/css/main.css", "destination_path": filepath.Join(e.proj, "main.css")})
		e.fail("copy_file", map[string]any{"source_path": "site/css/main.css", "destination_path": filepath.Join(e.proj, "main.css")}, "overwrite")
		e.ok("copy_file", map[string]any{"source_path": "site/css/main.css", "destination_path": filepath.Join(e.proj, "main.css"), "overwrite": true})
		m := e.ok("copy_file", map[string]any{"source_path": "site", "destination_path": e.proj, "overwrite": true})
		if read(t, filepath.Join(e.proj, "index.html")) != "<h1>new</h1>" || read(t, filepath.Join(e.proj, "css", "main.css")) != "css" {
			t.Fatal("directory copy failed")
		}
		if read(t, filepath.Join(e.proj, "golden", "expected.txt")) != "golden\n" {
			t.Fatal("protected file overwritten by a directory copy")
		}
		if sk := m["skipped"].([]any); len(sk) != 1 {
			t.Errorf("skipped = %v", sk)
		}
		// A file copied onto a directory lands inside it.
		e.ok("copy_file", map[string]any{"source_path": "site/index.html", "destination_path": filepath.Join(e.proj, "css")})
		if read(t, filepath.Join(e.proj, "css", "index.html")) != "<h1>new</h1>" {
			t.Fatal("copy into directory failed")
		}
		e.fail("copy_file", map[string]any{"source_path": "site/index.html", "destination_path": filepath.Join(e.proj, "golden")}, "protected")
		// Copy from another agent's snapshot.
		e.ok("copy_file", map[string]any{"source_path": filepath.Join(e.temp, "agent2", "notes.md"), "destination_path": "notes.md"})
		e.fail("copy_file", map[string]any{"source_path": filepath.Join(e.out, "secret.txt"), "destination_path": "s.txt"}, "")
		e.fail("copy_file", map[string]any{"source_path": "site", "destination_path": "site/sub"}, "itself")
	})
	t.Run("coordination cannot deliver", func(t *testing.T) {
		e := newEnv(t, permissions.Coordination)
		write(t, filepath.Join(e.ws, "x.txt"), "x")
		e.fail("copy_file", map[string]any{"source_path": "x.txt", "destination_path": filepath.Join(e.proj, "x.txt")}, "")
		e.ok("copy_file", map[string]any{"source_path": filepath.Join(e.proj, "index.html"), "destination_path": "index.html"})
	})
}

func TestCopyFilesBatch(t *testing.T) {
	e := newEnv(t, permissions.Final)
	write(t, filepath.Join(e.ws, "out", "a.py"), "a")
	write(t, filepath.Join(e.ws, "out", "lib", "b.py"), "b")
	write(t, filepath.Join(e.ws, "out", "lib", "c.txt"), "c")
	write(t, filepath.Join(e.ws, "out", "golden", "expected.txt"), "x")
	write(t, filepath.Join(e.ws, "out", "tests", "t.py"), "t")
	m := e.ok("copy_files_batch", map[string]any{"source_base_path": "out", "destination_base_path": e.proj,
		"include_patterns": []any{"*.py", "golden/*"}, "exclude_patterns": []any{"tests/**"}})
	copied := strs(m["copied"])
	if len(copied) != 2 || !contains(copied, filepath.Join(e.proj, "lib", "b.py")) {
		t.Fatalf("copied = %v (%v)", copied, m)
	}
	if sk := m["skipped"].([]any); len(sk) != 1 || !strings.Contains(sk[0].(map[string]any)["path"].(string), "golden") {
		t.Fatalf("skipped = %v", sk)
	}
	if exists(filepath.Join(e.proj, "tests")) || exists(filepath.Join(e.proj, "lib", "c.txt")) {
		t.Fatal("excluded or unmatched files copied")
	}
	m = e.ok("copy_files_batch", map[string]any{"source_base_path": "out", "destination_base_path": e.proj, "include_patterns": []any{"a.py"}})
	if sk := m["skipped"].([]any); len(sk) != 1 || !strings.Contains(sk[0].(map[string]any)["reason"].(string), "exists") {
		t.Fatalf("existing file not skipped: %v", m)
	}
}

func TestDeleteFile(t *testing.T) {
	e := newEnv(t, permissions.Final)
	write(t, filepath.Join(e.ws, "old.html"), "old")
	m := e.fail("delete_file", map[string]any{"path": "old.html"}, "not read or created")
	if len(strs(m["unread"])) != 1 {
		t.Errorf("unread = %v", m["unread"])
	}
	e.ok("read_file", map[string]any{"path": "old.html"})
	e.ok("delete_file", map[string]any{"path": "old.html"})
	if exists(filepath.Join(e.ws, "old.html")) {
		t.Fatal("not deleted")
	}
	// Files the agent created are deletable without reading.
	e.ok("write_file", map[string]any{"path": "tmp/new.txt", "content": "n"})
	e.fail("delete_file", map[string]any{"path": "tmp"}, "recursive")
	e.ok("delete_file", map[string]any{"path": "tmp", "recursive": true})
	// A directory with unread files is refused, listing them.
	write(t, filepath.Join(e.ws, "d", "x.txt"), "x")
	write(t, filepath.Join(e.ws, "d", "y.txt"), "y")
	e.ok("read_file", map[string]any{"path": "d/x.txt"})
	m = e.fail("delete_file", map[string]any{"path": "d", "recursive": true}, "not read or created")
	if u := strs(m["unread"]); len(u) != 1 || u[0] != filepath.Join(e.ws, "d", "y.txt") {
		t.Errorf("unread = %v", u)
	}
	// Roots are never deleted.
	for _, p := range []string{e.ws, ".", e.proj, filepath.Join(e.single, "config.yaml"), e.base} {
		e.fail("delete_file", map[string]any{"path": p, "recursive": true}, "")
	}
	if !exists(e.ws) || !exists(e.proj) || !exists(filepath.Join(e.single, "config.yaml")) {
		t.Fatal("a root was deleted")
	}
	// System paths and protected paths are never deleted.
	write(t, filepath.Join(e.ws, ".git", "config"), "c")
	e.ok("read_file", map[string]any{"path": ".git/config"})
	e.fail("delete_file", map[string]any{"path": ".git", "recursive": true}, "system path")
	e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, ".env")})
	e.fail("delete_file", map[string]any{"path": filepath.Join(e.proj, ".env")}, "")
	e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "golden", "expected.txt")})
	e.fail("delete_file", map[string]any{"path": filepath.Join(e.proj, "golden", "expected.txt")}, "")
	e.fail("delete_file", map[string]any{"path": "nope.txt"}, "does not exist")
}

func TestDeleteFromContextPathGoesToTrash(t *testing.T) {
	e := newEnv(t, permissions.Final)
	target := filepath.Join(e.proj, "styles.css")
	e.ok("read_file", map[string]any{"path": target})
	m := e.ok("delete_file", map[string]any{"path": target})
	id, _ := m["trash_id"].(string)
	if id == "" || exists(target) {
		t.Fatalf("delete = %v", m)
	}
	entries, err := changes.ListTrash(e.massgen)
	if err != nil || len(entries) != 1 || entries[0].OriginalPath != target || entries[0].ID != id || entries[0].Agent != "agent_a" {
		t.Fatalf("ListTrash = %+v, %v", entries, err)
	}
	if err := changes.RestoreTrash(e.massgen, id); err != nil {
		t.Fatal(err)
	}
	if read(t, target) != "body { color: red; }\n" {
		t.Fatal("restored content differs")
	}
	if entries, _ := changes.ListTrash(e.massgen); len(entries) != 0 {
		t.Fatalf("entry still listed after restore: %v", entries)
	}
	// A directory too; restoring over an existing path is refused.
	write(t, filepath.Join(e.proj, "old", "a.txt"), "a")
	e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "old", "a.txt")})
	m = e.ok("delete_file", map[string]any{"path": filepath.Join(e.proj, "old"), "recursive": true})
	id = m["trash_id"].(string)
	write(t, filepath.Join(e.proj, "old", "b.txt"), "new")
	if err := changes.RestoreTrash(e.massgen, id); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("restore over existing: %v", err)
	}
	os.RemoveAll(filepath.Join(e.proj, "old"))
	if err := changes.RestoreTrash(e.massgen, id); err != nil || read(t, filepath.Join(e.proj, "old", "a.txt")) != "a" {
		t.Fatalf("restore dir: %v", err)
	}
	for _, bad := range []string{"", "x", "../x/1", "run1/..", "run1/9999"} {
		if err := changes.RestoreTrash(e.massgen, bad); err == nil {
			t.Errorf("RestoreTrash(%q) succeeded", bad)
		}
	}
}

// noProtected drops the protected paths of the context path.
func noProtected(s *permissions.Spec, _ *ToolsetOptions) {
	for i := range s.ContextPaths {
		s.ContextPaths[i].Protected = nil
	}
}

func TestDeleteFilesBatch(t *testing.T) {
	e := newEnv(t, permissions.Final, noProtected)
	for _, f := range []string{"a.log", "b.log", "keep.log", "sub/c.log", "notes.txt"} {
		write(t, filepath.Join(e.proj, f), f)
	}
	write(t, filepath.Join(e.proj, ".git", "x.log"), "x")
	write(t, filepath.Join(e.proj, "node_modules", "m.log"), "m")
	write(t, filepath.Join(e.proj, ".env.log"), "e")
	for _, f := range []string{"a.log", "sub/c.log", "keep.log", ".env.log"} {
		e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, f)})
	}
	args := map[string]any{"base_path": e.proj, "include_patterns": []any{"*.log"}, "exclude_patterns": []any{"keep.log"}, "dry_run": true}
	m := e.ok("delete_files_batch", args)
	if w := strs(m["would_delete"]); len(w) != 3 || len(strs(m["deleted"])) != 0 || !exists(filepath.Join(e.proj, "a.log")) {
		t.Fatalf("dry run = %v", m)
	}
	args["dry_run"] = false
	m = e.ok("delete_files_batch", args)
	deleted := strs(m["deleted"])
	if len(deleted) != 3 || !contains(deleted, filepath.Join(e.proj, "a.log")) || !contains(deleted, filepath.Join(e.proj, "sub", "c.log")) {
		t.Fatalf("deleted = %v (%v)", deleted, m)
	}
	if u := strs(m["unread"]); len(u) != 1 || u[0] != filepath.Join(e.proj, "b.log") {
		t.Errorf("unread = %v", u)
	}
	reasons := map[string]string{}
	for _, s := range m["skipped"].([]any) {
		sm := s.(map[string]any)
		reasons[sm["path"].(string)] = sm["reason"].(string)
	}
	for _, p := range []string{filepath.Join(e.proj, ".git"), filepath.Join(e.proj, "node_modules"), filepath.Join(e.proj, "b.log")} {
		if reasons[p] == "" {
			t.Errorf("%s not reported as skipped (skipped: %v)", p, reasons)
		}
	}
	for _, p := range []string{".git/x.log", "node_modules/m.log", "b.log", "keep.log", "notes.txt"} {
		if !exists(filepath.Join(e.proj, p)) {
			t.Errorf("%s was deleted", p)
		}
	}
	if ids := strs(m["trash_ids"]); len(ids) != 3 { // a.log, sub/c.log, .env.log (not a system name)
		t.Errorf("trash ids = %v", ids)
	}
	// Workspace files are deleted for good (no trash).
	write(t, filepath.Join(e.ws, "build", "o1.tmp"), "1")
	e.ok("read_file", map[string]any{"path": "build/o1.tmp"})
	m = e.ok("delete_files_batch", map[string]any{"base_path": "build"})
	if len(strs(m["deleted"])) != 1 || len(strs(m["trash_ids"])) != 0 {
		t.Errorf("workspace batch = %v", m)
	}
	// Coordination agents cannot batch-delete in context paths at all.
	c := newEnv(t, permissions.Coordination)
	c.fail("delete_files_batch", map[string]any{"base_path": c.proj}, "")
}

// TestDeleteFilesBatchProtectedInside: protected files inside the base path are skipped with
// the reason, the rest is deleted.
func TestDeleteFilesBatchProtectedInside(t *testing.T) {
	e := newEnv(t, permissions.Final)
	write(t, filepath.Join(e.proj, "golden", "g.log"), "g")
	write(t, filepath.Join(e.proj, "a.log"), "a")
	e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "golden", "g.log")})
	e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "a.log")})
	m := e.ok("delete_files_batch", map[string]any{"base_path": e.proj, "include_patterns": []any{"*.log"}})
	if d := strs(m["deleted"]); len(d) != 1 || d[0] != filepath.Join(e.proj, "a.log") {
		t.Fatalf("deleted = %v", m)
	}
	reasons := map[string]string{}
	for _, s := range m["skipped"].([]any) {
		reasons[s.(map[string]any)["path"].(string)] = s.(map[string]any)["reason"].(string)
	}
	if !strings.Contains(reasons[filepath.Join(e.proj, "golden", "g.log")], "protected") {
		t.Fatalf("skipped = %v", reasons)
	}
	if !exists(filepath.Join(e.proj, "golden", "g.log")) {
		t.Fatal("protected file deleted")
	}
}

func TestCompareFiles(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	write(t, filepath.Join(e.ws, "a.txt"), "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	write(t, filepath.Join(e.ws, "b.txt"), "1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n11\n")
	m := e.ok("compare_files", map[string]any{"file1": "a.txt", "file2": "b.txt", "context_lines": 1})
	want := "--- " + filepath.Join(e.ws, "a.txt") + "\n+++ " + filepath.Join(e.ws, "b.txt") + "\n@@ -3,3 +3,3 @@\n 3\n-4\n+four\n 5\n@@ -10 +10,2 @@\n 10\n+11\n"
	if m["diff"] != want {
		t.Errorf("diff =\n%s\nwant\n%s", m["diff"], want)
	}
	st := m["stats"].(map[string]any)
	if st["added"].(float64) != 2 || st["removed"].(float64) != 1 || m["identical"] != false {
		t.Errorf("stats = %v", m)
	}
	m = e.ok("compare_files", map[string]any{"file1": "a.txt", "file2": "a.txt"})
	if m["identical"] != true || m["diff"] != "" {
		t.Errorf("identical = %v", m)
	}
	write(t, filepath.Join(e.ws, "x.bin"), "\x00\x01")
	write(t, filepath.Join(e.ws, "y.bin"), "\x00\x02")
	m = e.ok("compare_files", map[string]any{"file1": "x.bin", "file2": "y.bin"})
	if m["binary"] != true || m["identical"] != false || m["diff"] != "" {
		t.Errorf("binary = %v", m)
	}
	e.fail("compare_files", map[string]any{"file1": "a.txt", "file2": filepath.Join(e.out, "secret.txt")}, "")
}

func TestCompareDirectories(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	write(t, filepath.Join(e.ws, "v1", "same.txt"), "s")
	write(t, filepath.Join(e.ws, "v1", "diff.txt"), "a\n")
	write(t, filepath.Join(e.ws, "v1", "old.txt"), "o")
	write(t, filepath.Join(e.ws, "v2", "same.txt"), "s")
	write(t, filepath.Join(e.ws, "v2", "diff.txt"), "b\n")
	write(t, filepath.Join(e.ws, "v2", "sub", "new.txt"), "n")
	m := e.ok("compare_directories", map[string]any{"dir1": "v1", "dir2": "v2", "show_content_diff": true})
	if got := strs(m["only_in_dir1"]); len(got) != 1 || got[0] != "old.txt" {
		t.Errorf("only_in_dir1 = %v", got)
	}
	if got := strs(m["only_in_dir2"]); len(got) != 1 || got[0] != "sub/new.txt" {
		t.Errorf("only_in_dir2 = %v", got)
	}
	if got := strs(m["different"]); len(got) != 1 || got[0] != "diff.txt" {
		t.Errorf("different = %v", got)
	}
	if got := strs(m["identical"]); len(got) != 1 || got[0] != "same.txt" {
		t.Errorf("identical = %v", got)
	}
	if d := m["content_diff"].(map[string]any)["diff.txt"].(string); !strings.Contains(d, "-a\n+b\n") {
		t.Errorf("content diff = %q", d)
	}
	m = e.ok("compare_directories", map[string]any{"dir1": "v1", "dir2": filepath.Join(e.temp, "agent2")})
	if _, ok := m["content_diff"]; ok {
		t.Error("content_diff without show_content_diff")
	}
}

func TestToolsOffered(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	names := map[string]bool{}
	limits := strings.TrimSpace(e.pol.DescribeLimits())
	for _, tl := range e.ts.Tools() {
		names[tl.Name] = true
		if !strings.HasSuffix(tl.Description, limits) {
			t.Errorf("%s: description does not end with the limits", tl.Name)
		}
		if tl.Parameters["type"] != "object" {
			t.Errorf("%s: parameters are not an object schema", tl.Name)
		}
	}
	for _, n := range []string{"read_file", "read_multiple_files", "write_file", "edit_file", "create_directory", "list_directory",
		"directory_tree", "move_file", "search_files", "get_file_info", "list_allowed_directories", "copy_file",
		"copy_files_batch", "delete_file", "delete_files_batch", "compare_directories", "compare_files", "execute_command"} {
		if !names[n] {
			t.Errorf("tool %s not offered", n)
		}
	}
	// An agent that may write nowhere is not offered write tools.
	ro := newEnv(t, permissions.Coordination, func(s *permissions.Spec, _ *ToolsetOptions) { s.Workspace = "" })
	for _, tl := range ro.ts.Tools() {
		if tl.Write {
			t.Errorf("write tool %s offered to a read-only agent", tl.Name)
		}
	}
	ro.fail("write_file", map[string]any{"path": filepath.Join(ro.proj, "x"), "content": "x"}, "may not write")
}

// TestArgumentsBound: a call's arguments are bound into its tool's parameters before it acts:
// an argument the tool does not declare, or a value of the wrong type, is an error result naming
// it, and nothing is changed; values as models send them ("yes", "2", one path for a list) bind.
func TestArgumentsBound(t *testing.T) {
	e := newEnv(t, permissions.Final)
	write(t, filepath.Join(e.ws, "a.txt"), "one\ntwo\nthree\n")
	tests := []struct {
		tool string
		args map[string]any
		want string // error ("" for success)
	}{
		{"write_file", map[string]any{"path": "new.txt", "content": "x", "mode": "append"}, `unexpected argument(s) mode (valid: content, path)`},
		{"delete_file", map[string]any{"path": "a.txt", "force": true, "recursive": false}, `unexpected argument(s) force (valid: path, recursive)`},
		{"write_file", map[string]any{"path": "new.txt"}, `missing argument "content"`},
		{"write_file", map[string]any{"path": "new.txt", "content": 3}, `argument "content" must be a string, got float64`},
		{"read_file", map[string]any{"path": "a.txt", "head": 1.5}, `argument "head" must be an integer, got 1.5`},
		{"delete_file", map[string]any{"path": "a.txt", "recursive": "perhaps"}, `argument "recursive" must be a boolean, got perhaps`},
		{"search_files", map[string]any{"path": ".", "pattern": " "}, `argument "pattern" is empty`},
		{"read_file", map[string]any{"path": "a.txt", "head": "2"}, ""},
		{"delete_files_batch", map[string]any{"base_path": ".", "include_patterns": "*.txt", "dry_run": "true"}, ""},
		{"list_directory", map[string]any{"path": ""}, ""},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "1"}}, "dryRun": "yes"}, ""},
	}
	for _, tt := range tests {
		m, res := e.call(tt.tool, tt.args)
		msg, _ := m["error"].(string)
		switch {
		case tt.want == "" && res.IsError:
			t.Errorf("%s(%v): %s", tt.tool, tt.args, msg)
		case tt.want != "" && msg != tt.tool+": "+tt.want:
			t.Errorf("%s(%v) error %q, want %q", tt.tool, tt.args, msg, tt.tool+": "+tt.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(e.ws, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused write_file wrote: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("a.txt = %q after a dry run and refused calls", b)
	}
	if m := e.ok("read_file", map[string]any{"path": "a.txt", "tail": "1"}); m["content"] != "three\n" {
		t.Errorf("tail as a string: %v", m["content"])
	}
}

func TestCallNeverPanics(t *testing.T) {
	e := newEnv(t, permissions.Final)
	for _, raw := range []string{`{`, `[1,2]`, `"x"`, `{"path": 5}`, `{"paths": [1]}`, `null`} {
		for _, tl := range e.ts.Tools() {
			res := e.ts.Call(context.Background(), tl.Name, []byte(raw))
			if tl.Name == "list_allowed_directories" {
				continue
			}
			if !res.IsError {
				t.Errorf("%s(%s) = %s, want an error", tl.Name, raw, res.Content)
			}
		}
	}
	write(t, filepath.Join(e.ws, "a"), "a")
	e.fail("edit_file", map[string]any{"edits": "x", "path": "a"}, "edits")
	if res := e.ts.Call(context.Background(), "no_such_tool", nil); !res.IsError || !strings.Contains(res.Content, "unknown tool") {
		t.Errorf("unknown tool: %v", res)
	}
}

// TestToolTable: every built-in tool is declared once, in the table the permission engine
// gets; every schema property that names a path is a declared path argument (and no other is).
func TestToolTable(t *testing.T) {
	e := newEnv(t, permissions.Final)
	table := Table()
	if len(e.ts.builtin) != len(table) {
		t.Fatalf("offered %d built-in tools, the table has %d", len(e.ts.builtin), len(table))
	}
	for _, b := range Builtins() {
		name := b.Name()
		decl, ok := table[name]
		if _, builtin := Builtin(name); !ok || !builtin {
			t.Errorf("%s is offered but not in the table", name)
			continue
		}
		props, _ := b.Schema()["properties"].(map[string]any)
		declared := map[string]bool{}
		for _, a := range decl.Args {
			declared[a.Name] = true
			if _, ok := props[a.Name]; !ok {
				t.Errorf("%s: path argument %s is not in the schema", name, a.Name)
			}
		}
		for p := range props {
			if toolargs.IsPathKey(p) != declared[p] {
				t.Errorf("%s: schema property %q: looks like a path %v, declared %v", name, p, toolargs.IsPathKey(p), declared[p])
			}
		}
		if decl.Destructive() != b.Writes() {
			t.Errorf("%s: destructive flag differs", name)
		}
	}
	if _, ok := Builtin("mcp__x__read_file"); ok {
		t.Error("prefixed name is not ours")
	}
	// The Toolset refuses a Policy given another table: the run and permissions check would
	// then decide differently.
	bad := Table()
	bad["write_file"] = toolargs.Tool{Name: "write_file"}
	pol, err := permissions.New(permissions.Spec{Agent: "a", Workspace: t.TempDir(), Tools: bad})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewToolset(ToolsetOptions{Guard: guard.New(pol, guard.Options{})}); err == nil {
		t.Error("a Policy with another tool table was accepted")
	}
	// Cancellation: commands and external tools are cancelled, file tools finish.
	for name, want := range map[string]bool{"execute_command": true, "write_file": false, "delete_file": false, "mcp__x__y": true} {
		if got := e.ts.Cancellable(name); got != want {
			t.Errorf("Cancellable(%s) = %v", name, got)
		}
	}
}

// TestTableDecidesLikeToolset: a Policy given filesystem.Table() (as permissions check is)
// decides every built-in call as the Toolset's own decision does.
func TestTableDecidesLikeToolset(t *testing.T) {
	e := newEnv(t, permissions.Final, func(s *permissions.Spec, _ *ToolsetOptions) { s.Tools = Table() })
	write(t, filepath.Join(e.ws, "a.txt"), "a")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"move_file", map[string]any{"source": e.proj, "destination": "x"}},
		{"delete_file", map[string]any{"path": filepath.Join(e.proj, "golden")}},
		{"delete_files_batch", map[string]any{"base_path": e.proj}},
		{"copy_file", map[string]any{"source_path": "a.txt", "destination_path": filepath.Join(e.proj, "golden", "x")}},
		{"copy_file", map[string]any{"source_path": filepath.Join(e.single, "sibling.txt"), "destination_path": "s"}},
		{"edit_file", map[string]any{"path": filepath.Join(e.proj, "golden", "expected.txt"), "dryRun": true, "edits": []any{}}},
		{"execute_command", map[string]any{"command": "ls", "work_dir": e.out}},
	}
	for _, c := range calls {
		viaPolicy := e.pol.Decide(permissions.Request{Tool: c.tool, Args: c.args})
		m, res := e.call(c.tool, c.args)
		denied := res.Denied != nil
		if denied == viaPolicy.Allow {
			t.Errorf("%s %v: policy allow=%v (%s), toolset %v", c.tool, c.args, viaPolicy.Allow, viaPolicy.Reason, m)
		}
		if denied && res.Denied.Rule != viaPolicy.Rule {
			t.Errorf("%s: rule %s vs %s", c.tool, res.Denied.Rule, viaPolicy.Rule)
		}
	}
}

// TestEveryToolBothRoles: every tool on a context path with permission write: coordination
// agents may only read it, the final agent may also change it.
func TestEveryToolBothRoles(t *testing.T) {
	type tc struct {
		tool  string
		write bool // changes the context path
		args  func(e *env) map[string]any
	}
	in := func(e *env, p string) string { return filepath.Join(e.proj, p) }
	tests := []tc{
		{"read_file", false, func(e *env) map[string]any { return map[string]any{"path": in(e, "index.html")} }},
		{"read_multiple_files", false, func(e *env) map[string]any {
			return map[string]any{"paths": []any{in(e, "index.html"), in(e, "styles.css")}}
		}},
		{"list_directory", false, func(e *env) map[string]any { return map[string]any{"path": e.proj} }},
		{"directory_tree", false, func(e *env) map[string]any { return map[string]any{"path": e.proj} }},
		{"search_files", false, func(e *env) map[string]any { return map[string]any{"path": e.proj, "pattern": "*.css"} }},
		{"get_file_info", false, func(e *env) map[string]any { return map[string]any{"path": in(e, "styles.css")} }},
		{"list_allowed_directories", false, func(e *env) map[string]any { return map[string]any{} }},
		{"compare_files", false, func(e *env) map[string]any {
			return map[string]any{"file1": in(e, "index.html"), "file2": in(e, "styles.css")}
		}},
		{"compare_directories", false, func(e *env) map[string]any { return map[string]any{"dir1": e.proj, "dir2": e.ws} }},
		{"copy_file", false, func(e *env) map[string]any {
			return map[string]any{"source_path": in(e, "index.html"), "destination_path": "i.html"}
		}},
		{"copy_files_batch", false, func(e *env) map[string]any {
			return map[string]any{"source_base_path": e.proj, "destination_base_path": "copy", "include_patterns": []any{"*.css"}}
		}},
		{"execute_command", false, func(e *env) map[string]any { return map[string]any{"command": "cat index.html", "work_dir": e.proj} }},
		{"write_file", true, func(e *env) map[string]any { return map[string]any{"path": in(e, "new.txt"), "content": "x"} }},
		{"edit_file", true, func(e *env) map[string]any {
			return map[string]any{"path": in(e, "styles.css"), "edits": []any{map[string]any{"oldText": "red", "newText": "blue"}}}
		}},
		{"create_directory", true, func(e *env) map[string]any { return map[string]any{"path": in(e, "newdir")} }},
		{"move_file", true, func(e *env) map[string]any {
			return map[string]any{"source": in(e, "styles.css"), "destination": in(e, "main.css")}
		}},
		{"copy_file", true, func(e *env) map[string]any {
			return map[string]any{"source_path": in(e, "index.html"), "destination_path": in(e, "copy.html")}
		}},
		{"copy_files_batch", true, func(e *env) map[string]any {
			return map[string]any{"source_base_path": e.ws, "destination_base_path": in(e, "out")}
		}},
		{"delete_file", true, func(e *env) map[string]any { return map[string]any{"path": in(e, "index.html")} }},
		{"delete_files_batch", true, func(e *env) map[string]any {
			return map[string]any{"base_path": e.proj, "include_patterns": []any{"*.html"}}
		}},
	}
	for _, r := range roles {
		for _, tt := range tests {
			name := tt.tool
			if tt.write {
				name += "/write"
			}
			t.Run(r.name+"/"+name, func(t *testing.T) {
				if tt.tool == "execute_command" {
					sandboxModes(t)
				}
				e := newEnv(t, r.role)
				write(t, filepath.Join(e.ws, "w.txt"), "w")
				for _, f := range []string{"index.html", "styles.css"} {
					e.ts.Tracker().Mark(filepath.Join(e.proj, f)) // read earlier in the run
				}
				before := snapshotTree(t, e.proj)
				m, res := e.call(tt.tool, tt.args(e))
				allowed := !tt.write || r.role == permissions.Final
				if res.IsError == allowed {
					t.Fatalf("IsError=%v, want %v: %v", res.IsError, !allowed, m)
				}
				changed := snapshotTree(t, e.proj) != before
				if tt.write && allowed != changed {
					t.Errorf("context path changed=%v, want %v", changed, allowed)
				}
				if !tt.write && changed {
					t.Error("a read-only call changed the context path")
				}
			})
		}
	}
}

func TestNewToolsetRejectsUnknownSandbox(t *testing.T) {
	pol, err := permissions.New(permissions.Spec{Agent: "a", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(pol, guard.Options{})
	if _, err := NewToolset(ToolsetOptions{Guard: g, Sandbox: "firejail"}); err == nil || !strings.Contains(err.Error(), "firejail") {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewToolset(ToolsetOptions{}); err == nil {
		t.Fatal("nil Guard accepted")
	}
}

// TestTypedResults: every tool says in Result what it did, so callers never parse Content:
// Changes are the canonical paths written, created or deleted; Denied carries the decision;
// Message the one-line reason of any failure.
func TestTypedResults(t *testing.T) {
	e := newEnv(t, permissions.Final)
	write(t, filepath.Join(e.ws, "a.txt"), "alpha\n")
	write(t, filepath.Join(e.ws, "dir", "b.txt"), "beta\n")
	e.ts.Tracker().Mark(filepath.Join(e.proj, "index.html"))
	ws, proj := e.ws, e.proj
	tests := []struct {
		tool    string
		args    map[string]any
		changes []string // "op path"
	}{
		{"read_file", map[string]any{"path": "a.txt"}, nil},
		{"write_file", map[string]any{"path": "new/c.txt", "content": "c"}, []string{"created " + ws + "/new", "created " + ws + "/new/c.txt"}},
		{"write_file", map[string]any{"path": "a.txt", "content": "alpha2\n"}, []string{"modified " + ws + "/a.txt"}},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "alpha2", "newText": "alpha3"}}}, []string{"modified " + ws + "/a.txt"}},
		{"edit_file", map[string]any{"path": "a.txt", "dryRun": true, "edits": []any{map[string]any{"oldText": "alpha3", "newText": "x"}}}, nil},
		{"create_directory", map[string]any{"path": "d1/d2"}, []string{"created " + ws + "/d1"}},
		{"create_directory", map[string]any{"path": "d1/d2"}, nil},
		{"copy_file", map[string]any{"source_path": "a.txt", "destination_path": filepath.Join(proj, "a.txt")}, []string{"created " + proj + "/a.txt"}},
		{"copy_file", map[string]any{"source_path": "dir", "destination_path": "dir2"}, []string{"created " + ws + "/dir2", "created " + ws + "/dir2/b.txt"}},
		{"copy_files_batch", map[string]any{"source_base_path": "dir", "destination_base_path": filepath.Join(proj, "out")}, []string{"created " + proj + "/out", "created " + proj + "/out/b.txt"}},
		{"move_file", map[string]any{"source": "dir2", "destination": "dir3"}, []string{"deleted " + ws + "/dir2", "created " + ws + "/dir3"}},
		{"delete_file", map[string]any{"path": filepath.Join(proj, "index.html")}, []string{"deleted " + proj + "/index.html"}},
		{"delete_file", map[string]any{"path": "dir3", "recursive": true}, []string{"deleted " + ws + "/dir3"}},
		{"delete_files_batch", map[string]any{"base_path": "new"}, []string{"deleted " + ws + "/new/c.txt"}},
		{"list_directory", map[string]any{"path": "."}, nil},
		{"search_files", map[string]any{"path": ".", "pattern": "*.txt"}, nil},
		{"compare_files", map[string]any{"file1": "a.txt", "file2": "dir/b.txt"}, nil},
	}
	for _, tt := range tests {
		_, res := e.call(tt.tool, tt.args)
		if res.IsError || res.Denied != nil || res.Message != "" {
			t.Errorf("%s %v failed: %s", tt.tool, tt.args, res.Content)
			continue
		}
		var got []string
		for _, c := range res.Changes {
			got = append(got, string(c.Op)+" "+c.Path)
		}
		if strings.Join(got, "|") != strings.Join(tt.changes, "|") {
			t.Errorf("%s %v: Changes\n got  %v\n want %v", tt.tool, tt.args, got, tt.changes)
		}
	}
	// A denial carries the decision and its reason; nothing changed.
	_, res := e.call("write_file", map[string]any{"path": filepath.Join(proj, "golden", "expected.txt"), "content": "x"})
	if res.Denied == nil || res.Denied.Rule != permissions.RuleProtected || res.Message != res.Denied.Reason || len(res.Changes) != 0 {
		t.Errorf("denied write: %+v", res)
	}
	// A per-entry denial inside a tool too.
	_, res = e.call("delete_file", map[string]any{"path": filepath.Join(proj, "golden")})
	if res.Denied == nil || !res.IsError {
		t.Errorf("delete of a protected directory: %+v", res)
	}
	// A failure says why in Message.
	_, res = e.call("read_file", map[string]any{"path": "missing.txt"})
	if res.Denied != nil || !strings.Contains(res.Message, "does not exist") {
		t.Errorf("missing file: %+v", res)
	}
}
