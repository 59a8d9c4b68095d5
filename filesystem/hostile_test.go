//go:build linux

package filesystem

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/massgen-go/massgen/permissions"
)

// swapDir replaces dir with a symlink to target (the attack between check and use).
func swapDir(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+".orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

// TestSymlinkSwappedBetweenCheckAndUse: the permission check sees a plain path; before the
// operation uses it, a component is replaced with a symlink (to outside, or to a protected
// file inside the same root). The operation acts on what was checked (the walk's descriptors:
// the original directory, now renamed) or refuses; it never reaches the swapped-in target.
func TestSymlinkSwappedBetweenCheckAndUse(t *testing.T) {
	type tc struct {
		name  string
		tool  string
		args  func(e *env) map[string]any
		setup func(e *env)
		swap  func(t *testing.T, e *env)
		check func(t *testing.T, e *env, res Result)
	}
	outsideUnchanged := func(t *testing.T, e *env, res Result) {
		if strings.Contains(res.Content, "outside secret") {
			t.Fatalf("outside content leaked: %s", res.Content)
		}
		if got := read(t, filepath.Join(e.out, "secret.txt")); got != "outside secret\n" {
			t.Fatalf("outside file modified: %q", got)
		}
		if exists(filepath.Join(e.out, "new.txt")) {
			t.Fatal("file created outside")
		}
	}
	protectedUnchanged := func(t *testing.T, e *env, res Result) {
		if got := read(t, filepath.Join(e.proj, "golden", "expected.txt")); got != "golden\n" {
			t.Fatalf("protected file modified: %q", got)
		}
	}
	wsDirToOutside := func(t *testing.T, e *env) { swapDir(t, filepath.Join(e.ws, "d"), e.out) }
	tests := []tc{
		{name: "read through swapped dir", tool: "read_file",
			args:  func(e *env) map[string]any { return map[string]any{"path": "d/secret.txt"} },
			setup: func(e *env) { write(e.t, filepath.Join(e.ws, "d", "secret.txt"), "mine\n") },
			swap:  wsDirToOutside, check: outsideUnchanged},
		{name: "write through swapped dir", tool: "write_file",
			args:  func(e *env) map[string]any { return map[string]any{"path": "d/secret.txt", "content": "pwned"} },
			setup: func(e *env) { write(e.t, filepath.Join(e.ws, "d", "secret.txt"), "mine\n") },
			swap:  wsDirToOutside, check: outsideUnchanged},
		{name: "create through swapped dir", tool: "write_file",
			args:  func(e *env) map[string]any { return map[string]any{"path": "d/new.txt", "content": "pwned"} },
			setup: func(e *env) { mkdir(e.t, filepath.Join(e.ws, "d")) },
			swap:  wsDirToOutside, check: outsideUnchanged},
		{name: "edit through swapped dir", tool: "edit_file",
			args: func(e *env) map[string]any {
				return map[string]any{"path": "d/secret.txt", "edits": []any{map[string]any{"oldText": "outside", "newText": "pwned"}}}
			},
			setup: func(e *env) { write(e.t, filepath.Join(e.ws, "d", "secret.txt"), "outside mine\n") },
			swap:  wsDirToOutside, check: outsideUnchanged},
		{name: "delete through swapped dir", tool: "delete_file",
			args: func(e *env) map[string]any { return map[string]any{"path": "d/secret.txt"} },
			setup: func(e *env) {
				write(e.t, filepath.Join(e.ws, "d", "secret.txt"), "mine\n")
				e.ts.Tracker().Mark(filepath.Join(e.ws, "d", "secret.txt"))
			},
			swap: wsDirToOutside, check: outsideUnchanged},
		{name: "list through swapped dir", tool: "list_directory",
			args:  func(e *env) map[string]any { return map[string]any{"path": "d"} },
			setup: func(e *env) { mkdir(e.t, filepath.Join(e.ws, "d")) },
			swap:  wsDirToOutside,
			check: func(t *testing.T, e *env, res Result) {
				if strings.Contains(res.Content, "secret.txt") {
					t.Fatalf("outside listing leaked: %s", res.Content)
				}
			}},
		{name: "copy source swapped to outside", tool: "copy_file",
			args: func(e *env) map[string]any {
				return map[string]any{"source_path": "d/secret.txt", "destination_path": "copy.txt"}
			},
			setup: func(e *env) { write(e.t, filepath.Join(e.ws, "d", "secret.txt"), "mine\n") },
			swap:  wsDirToOutside,
			check: func(t *testing.T, e *env, res Result) {
				if exists(filepath.Join(e.ws, "copy.txt")) && read(t, filepath.Join(e.ws, "copy.txt")) == "outside secret\n" {
					t.Fatal("outside content copied in")
				}
			}},
		{name: "context file swapped for link to protected file", tool: "write_file",
			args: func(e *env) map[string]any {
				return map[string]any{"path": filepath.Join(e.proj, "styles.css"), "content": "pwned"}
			},
			setup: func(e *env) {},
			swap: func(t *testing.T, e *env) {
				p := filepath.Join(e.proj, "styles.css")
				os.Remove(p)
				if err := os.Symlink(filepath.Join(e.proj, "golden", "expected.txt"), p); err != nil {
					t.Fatal(err)
				}
			},
			check: protectedUnchanged},
		{name: "context dir swapped for link to protected dir", tool: "write_file",
			args: func(e *env) map[string]any {
				return map[string]any{"path": filepath.Join(e.proj, "css", "expected.txt"), "content": "pwned"}
			},
			setup: func(e *env) { write(e.t, filepath.Join(e.proj, "css", "expected.txt"), "css") },
			swap:  func(t *testing.T, e *env) { swapDir(t, filepath.Join(e.proj, "css"), filepath.Join(e.proj, "golden")) },
			check: protectedUnchanged},
		{name: "single-file context path swapped for link to sibling", tool: "read_file",
			args:  func(e *env) map[string]any { return map[string]any{"path": filepath.Join(e.single, "config.yaml")} },
			setup: func(e *env) {},
			swap: func(t *testing.T, e *env) {
				p := filepath.Join(e.single, "config.yaml")
				os.Rename(p, p+".orig")
				if err := os.Symlink("sibling.txt", p); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, e *env, res Result) {
				if strings.Contains(res.Content, "sibling secret") {
					t.Fatalf("sibling leaked: %s", res.Content)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, permissions.Final)
			tt.setup(e)
			swapped := false
			e.ts.beforeUse = func() {
				if !swapped {
					swapped = true
					tt.swap(t, e)
				}
			}
			raw, _ := json.Marshal(tt.args(e))
			res := e.ts.Call(context.Background(), tt.tool, raw)
			if !swapped {
				t.Fatalf("the swap hook never ran (the call was refused before use: %s)", res.Content)
			}
			if res.IsError && !strings.Contains(res.Content, "changed during the operation") {
				t.Errorf("refused for another reason than the swap: %s", res.Content)
			}
			tt.check(t, e, res)
		})
	}
}

// TestLinksPlacedByTheAgent: links that already exist at check time are resolved by the
// permission layer, so a link to a protected or outside file is judged by its target.
func TestLinksPlacedByTheAgent(t *testing.T) {
	e := newEnv(t, permissions.Final)
	if err := os.Symlink(filepath.Join(e.proj, "golden", "expected.txt"), filepath.Join(e.ws, "gold")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.out, filepath.Join(e.ws, "out")); err != nil {
		t.Fatal(err)
	}
	e.ok("read_file", map[string]any{"path": "gold"}) // protected files are readable
	e.fail("write_file", map[string]any{"path": "gold", "content": "pwned"}, "protected")
	e.fail("edit_file", map[string]any{"path": "gold", "edits": []any{map[string]any{"oldText": "golden", "newText": "x"}}}, "protected")
	e.fail("read_file", map[string]any{"path": "out/secret.txt"}, "")
	e.fail("write_file", map[string]any{"path": "out/new.txt", "content": "x"}, "")
	e.fail("copy_file", map[string]any{"source_path": "out/secret.txt", "destination_path": "s.txt"}, "")
	if read(t, filepath.Join(e.proj, "golden", "expected.txt")) != "golden\n" || exists(filepath.Join(e.out, "new.txt")) {
		t.Fatal("link followed to a forbidden place")
	}
	// Deleting a link removes the link, never its target, and needs the target to be allowed.
	write(t, filepath.Join(e.ws, "real.txt"), "real")
	if err := os.Symlink("real.txt", filepath.Join(e.ws, "alias")); err != nil {
		t.Fatal(err)
	}
	e.ok("read_file", map[string]any{"path": "alias"})
	e.ok("delete_file", map[string]any{"path": "alias"})
	if exists(filepath.Join(e.ws, "alias")) || !exists(filepath.Join(e.ws, "real.txt")) {
		t.Fatal("delete of a link removed the target")
	}
	// The link itself is what goes (judged as the entry it is, in the workspace); the protected
	// file it points to stays. Its target was read through it, which counts for the link.
	e.ok("delete_file", map[string]any{"path": "gold"})
	if exists(filepath.Join(e.ws, "gold")) || read(t, filepath.Join(e.proj, "golden", "expected.txt")) != "golden\n" {
		t.Fatal("deleting a link to a protected file changed it")
	}
	e.fail("delete_file", map[string]any{"path": "out"}, "not read")
	e.fail("delete_file", map[string]any{"path": "out/secret.txt"}, "outside")
	if !exists(filepath.Join(e.out, "secret.txt")) {
		t.Fatal("outside file deleted")
	}
}

// TestDotDotEscapes: ".." in arguments and in links.
func TestDotDotEscapes(t *testing.T) {
	e := newEnv(t, permissions.Final)
	mkdir(t, filepath.Join(e.ws, "a"))
	if err := os.Symlink("../../outside", filepath.Join(e.ws, "a", "up")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../outside/secret.txt", "a/../../outside/secret.txt", "a/up/secret.txt", filepath.Join(e.ws, "..", "outside", "secret.txt")} {
		e.fail("read_file", map[string]any{"path": p}, "")
		e.fail("write_file", map[string]any{"path": p, "content": "x"}, "")
	}
	if read(t, filepath.Join(e.out, "secret.txt")) != "outside secret\n" {
		t.Fatal("outside modified")
	}
}

// FuzzReadFilePath: whatever path a model sends, read_file never returns a file outside the
// agent's roots and never panics.
func FuzzReadFilePath(f *testing.F) {
	for _, s := range []string{"a.txt", "../outside/secret.txt", "/", ".", "..", "a/../../outside/secret.txt", "~/x", "\x00", "d/../../../etc/passwd", "//outside", "a/up/secret.txt"} {
		f.Add(s)
	}
	e := newEnv(f, permissions.Final)
	write(f, filepath.Join(e.ws, "a.txt"), "fine")
	os.Symlink("../outside", filepath.Join(e.ws, "up"))
	f.Fuzz(func(t *testing.T, p string) {
		raw, _ := json.Marshal(map[string]any{"path": p})
		res := e.ts.Call(context.Background(), "read_file", raw)
		if strings.Contains(res.Content, "outside secret") || strings.Contains(res.Content, "sibling secret") {
			t.Fatalf("read_file(%q) leaked: %s", p, res.Content)
		}
		res = e.ts.Call(context.Background(), "write_file", append(raw[:len(raw)-1], []byte(`,"content":"pwned"}`)...))
		if b, _ := os.ReadFile(filepath.Join(e.out, "secret.txt")); string(b) != "outside secret\n" {
			t.Fatalf("write_file(%q) modified the outside file: %s", p, res.Content)
		}
	})
}

// TestPrivatePathsInsideAContextPath: another agent's live workspace inside the project is left
// out of listings, searches, copies and comparisons, and commands cannot read it.
func TestPrivatePathsInsideAContextPath(t *testing.T) {
	var other string
	e := newEnv(t, permissions.Final, func(s *permissions.Spec, _ *ToolsetOptions) {
		other = filepath.Join(s.ContextPaths[0].Path, "agents", "other_ws")
		s.Private = []string{other}
	})
	write(t, filepath.Join(other, "draft.txt"), "other agent draft")
	e.fail("read_file", map[string]any{"path": filepath.Join(other, "draft.txt")}, "")
	check := func(tool string, args map[string]any) {
		t.Helper()
		m := e.ok(tool, args)
		b, _ := json.Marshal(m)
		if strings.Contains(string(b), "draft") || strings.Contains(string(b), "other_ws") {
			t.Errorf("%s shows the private workspace: %s", tool, b)
		}
	}
	check("list_directory", map[string]any{"path": filepath.Join(e.proj, "agents")})
	check("directory_tree", map[string]any{"path": e.proj})
	check("search_files", map[string]any{"path": e.proj, "pattern": "**/*.txt"})
	check("compare_directories", map[string]any{"dir1": e.proj, "dir2": e.ws})
	check("copy_file", map[string]any{"source_path": e.proj, "destination_path": "copy"})
	if exists(filepath.Join(e.ws, "copy", "agents", "other_ws")) {
		t.Fatal("private workspace copied")
	}
	if len(sandboxModes(t)) > 0 {
		m, _ := e.call("execute_command", map[string]any{"command": "cat agents/other_ws/draft.txt; grep -r draft . ; true", "work_dir": e.proj})
		if strings.Contains(fmt.Sprint(m["stdout"]), "other agent draft") {
			t.Fatalf("command read the private workspace: %v", m)
		}
	}
}

// TestSpecialFiles: a FIFO or socket in the workspace does not hang or crash a read.
func TestSpecialFiles(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	if err := syscall.Mkfifo(filepath.Join(e.ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.fail("read_file", map[string]any{"path": "fifo"}, "not a regular file")
	e.fail("compare_files", map[string]any{"file1": "fifo", "file2": "fifo"}, "not a regular file")
	e.fail("copy_file", map[string]any{"source_path": "fifo", "destination_path": "f2"}, "not a regular file")
	m := e.ok("get_file_info", map[string]any{"path": "fifo"})
	if m["type"] != "other" {
		t.Errorf("type = %v", m["type"])
	}
}
