//go:build windows

package filesystem

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/winpath"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// newWinEnv is newEnv's layout in a directory removed by safefs (t.TempDir's os.RemoveAll fails
// under Wine 8, whose NtSetInformationFile lacks the deletion flags Go uses).
func newWinEnv(t *testing.T, role permissions.Role, opts ...envOpt) *env {
	t.Helper()
	d, err := os.MkdirTemp("", "fs-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w, err := safefs.Resolve(d, true)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer w.Close()
		if err := w.Dir.RemoveAll(w.Name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	long, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	base, err := winpath.Clean(long)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, base: base, role: role,
		ws: filepath.Join(base, "ws"), temp: filepath.Join(base, "temp"), proj: filepath.Join(base, "project"),
		single: filepath.Join(base, "single"), out: filepath.Join(base, "outside"), massgen: filepath.Join(base, ".massgen")}
	e.trash = filepath.Join(e.massgen, "trash", "run1")
	mkdir(t, e.ws)
	write(t, filepath.Join(e.temp, "agent2", "notes.md"), "agent2 notes\n")
	write(t, filepath.Join(e.proj, "index.html"), "<h1>hi</h1>\n")
	write(t, filepath.Join(e.proj, "styles.css"), "body { color: red; }\n")
	write(t, filepath.Join(e.proj, "golden", "expected.txt"), "golden\n")
	write(t, filepath.Join(e.proj, ".git", "HEAD"), "ref: main\n")
	write(t, filepath.Join(e.out, "secret.txt"), "outside secret\n")
	spec := permissions.Spec{
		Agent: "agent_a", Role: role, Workspace: e.ws, TempWorkspaces: []string{e.temp},
		ContextPaths: []permissions.ContextPath{
			{Path: e.proj, Write: true, Protected: []string{filepath.Join(e.proj, "golden")}},
		},
	}
	to := ToolsetOptions{TrashDir: e.trash, EnforceReadBeforeDelete: true}
	for _, o := range opts {
		o(&spec, &to)
	}
	pol, err := permissions.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	e.pol = pol
	to.Guard = guard.New(pol, guard.Options{})
	e.ts, err = NewToolset(to)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestWindowsToolsEndToEnd drives the file tools with C:\ paths through Toolset.Call.
func TestWindowsToolsEndToEnd(t *testing.T) {
	e := newWinEnv(t, permissions.Final)
	steps := []struct {
		tool string
		args map[string]any
		fail string // "" : must succeed; otherwise a word the error contains ("-": any error)
		then func(m map[string]any) error
	}{
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.ws, "sub", "dir", "new.txt"), "content": "hello"},
			then: func(m map[string]any) error {
				if m["created"] != true || read(t, filepath.Join(e.ws, "sub", "dir", "new.txt")) != "hello" {
					return fmt.Errorf("write = %v", m)
				}
				return nil
			}},
		{tool: "write_file", args: map[string]any{"path": `sub\rel.txt`, "content": "relative"},
			then: func(map[string]any) error {
				if read(t, filepath.Join(e.ws, "sub", "rel.txt")) != "relative" {
					return fmt.Errorf("relative write went elsewhere")
				}
				return nil
			}},
		{tool: "write_file", args: map[string]any{"path": "sub/slash.txt", "content": "slash"}},
		{tool: "read_file", args: map[string]any{"path": strings.ToUpper(filepath.Join(e.ws, "sub", "dir", "new.txt"))},
			then: func(m map[string]any) error {
				if m["content"] != "hello" {
					return fmt.Errorf("read = %v", m)
				}
				return nil
			}},
		{tool: "list_directory", args: map[string]any{"path": filepath.Join(e.ws, "sub")},
			then: func(m map[string]any) error {
				s := fmt.Sprint(m)
				for _, n := range []string{"dir", "rel.txt", "slash.txt"} {
					if !strings.Contains(s, n) {
						return fmt.Errorf("listing lacks %s: %v", n, m)
					}
				}
				if strings.Contains(s, "massgen-tmp") {
					return fmt.Errorf("a temp file was left: %v", m)
				}
				return nil
			}},
		{tool: "directory_tree", args: map[string]any{"path": e.ws},
			then: func(m map[string]any) error {
				if !strings.Contains(fmt.Sprint(m), "new.txt") {
					return fmt.Errorf("tree = %v", m)
				}
				return nil
			}},
		{tool: "search_files", args: map[string]any{"path": e.ws, "pattern": "new"},
			then: func(m map[string]any) error {
				if !strings.Contains(fmt.Sprint(m), filepath.Join(e.ws, "sub", "dir", "new.txt")) {
					return fmt.Errorf("search = %v", m)
				}
				return nil
			}},
		{tool: "move_file", args: map[string]any{"source": `sub\rel.txt`, "destination": `sub\dir\new.txt`}, fail: "-"},
		{tool: "move_file", args: map[string]any{"source": `sub\rel.txt`, "destination": `moved\rel.txt`},
			then: func(map[string]any) error {
				if exists(filepath.Join(e.ws, "sub", "rel.txt")) || read(t, filepath.Join(e.ws, "moved", "rel.txt")) != "relative" {
					return fmt.Errorf("move did not happen")
				}
				return nil
			}},
		{tool: "read_file", args: map[string]any{"path": `moved\rel.txt`}},
		{tool: "delete_file", args: map[string]any{"path": `moved\rel.txt`},
			then: func(map[string]any) error {
				if exists(filepath.Join(e.ws, "moved", "rel.txt")) {
					return fmt.Errorf("not deleted")
				}
				return nil
			}},
		// The final agent writes a context path; deleting there goes to the trash.
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.proj, "index.html"), "content": "<h1>new</h1>\n"}},
		{tool: "read_file", args: map[string]any{"path": filepath.Join(e.proj, "styles.css")}},
		{tool: "delete_file", args: map[string]any{"path": filepath.Join(e.proj, "styles.css")},
			then: func(map[string]any) error {
				if exists(filepath.Join(e.proj, "styles.css")) {
					return fmt.Errorf("not deleted")
				}
				return nil
			}},
		{tool: "copy_file", args: map[string]any{"source_path": "sub", "destination_path": "copied"},
			then: func(map[string]any) error {
				if read(t, filepath.Join(e.ws, "copied", "dir", "new.txt")) != "hello" {
					return fmt.Errorf("tree not copied")
				}
				return nil
			}},
		{tool: "get_file_info", args: map[string]any{"path": `copied\dir\new.txt`}},
		{tool: "compare_directories", args: map[string]any{"dir1": "sub", "dir2": "copied", "show_content_diff": true}},
		// Directories: moved, then deleted with what they hold (in the workspace: final; in a
		// context path: to the trash).
		{tool: "create_directory", args: map[string]any{"path": `tree\a\b`}},
		{tool: "write_file", args: map[string]any{"path": `tree\a\b\x.txt`, "content": "x"}},
		{tool: "move_file", args: map[string]any{"source": "tree", "destination": "tree2"},
			then: func(map[string]any) error {
				if exists(filepath.Join(e.ws, "tree")) || read(t, filepath.Join(e.ws, "tree2", "a", "b", "x.txt")) != "x" {
					return fmt.Errorf("directory not moved")
				}
				return nil
			}},
		{tool: "read_file", args: map[string]any{"path": `tree2\a\b\x.txt`}},
		{tool: "delete_file", args: map[string]any{"path": "tree2", "recursive": true},
			then: func(map[string]any) error {
				if exists(filepath.Join(e.ws, "tree2")) {
					return fmt.Errorf("directory not deleted")
				}
				return nil
			}},
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.proj, "old", "a.txt"), "content": "old"}},
		{tool: "read_file", args: map[string]any{"path": filepath.Join(e.proj, "old", "a.txt")}},
		{tool: "delete_file", args: map[string]any{"path": filepath.Join(e.proj, "old"), "recursive": true},
			then: func(map[string]any) error {
				if exists(filepath.Join(e.proj, "old")) {
					return fmt.Errorf("context directory not deleted")
				}
				return nil
			}},
		// Into itself, named in another case: the same directory on Windows.
		{tool: "copy_file", args: map[string]any{"source_path": "sub", "destination_path": `SUB\inner`}, fail: "itself"},
		{tool: "move_file", args: map[string]any{"source": "sub", "destination": `SUB\inner`}, fail: "itself"},
		// Refusals.
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.proj, "golden", "expected.txt"), "content": "x"}, fail: "protected"},
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.proj, ".git", "HEAD"), "content": "x"}, fail: "-"},
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.out, "x.txt"), "content": "x"}, fail: "outside"},
		{tool: "read_file", args: map[string]any{"path": filepath.Join(e.out, "secret.txt")}, fail: "outside"},
		{tool: "read_file", args: map[string]any{"path": filepath.Join(e.ws, "..", "outside", "secret.txt")}, fail: "outside"},
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.ws, "con"), "content": "x"}, fail: "reserved"},
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.ws, "aux.txt"), "content": "x"}, fail: "reserved"},
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.ws, "sub", "slash.txt:evil"), "content": "x"}, fail: "stream"},
		{tool: "write_file", args: map[string]any{"path": filepath.Join(e.ws, "sub", "slash.txt."), "content": "x"}, fail: "dot"},
		{tool: "write_file", args: map[string]any{"path": `\no-drive.txt`, "content": "x"}, fail: "-"},
		{tool: "write_file", args: map[string]any{"path": `C:no-root.txt`, "content": "x"}, fail: "-"},
	}
	for i, s := range steps {
		m, res := e.call(s.tool, s.args)
		switch {
		case s.fail == "" && res.IsError:
			t.Fatalf("step %d %s(%v) failed: %s", i, s.tool, s.args, res.Content)
		case s.fail != "" && !res.IsError:
			t.Fatalf("step %d %s(%v) succeeded, want a refusal: %s", i, s.tool, s.args, res.Content)
		case s.fail != "" && s.fail != "-":
			if msg, _ := m["error"].(string); !strings.Contains(strings.ToLower(msg), s.fail) {
				t.Fatalf("step %d %s(%v): error %q does not mention %q", i, s.tool, s.args, msg, s.fail)
			}
		}
		if s.then != nil {
			if err := s.then(m); err != nil {
				t.Fatalf("step %d %s(%v): %v", i, s.tool, s.args, err)
			}
		}
	}
	if read(t, filepath.Join(e.proj, "golden", "expected.txt")) != "golden\n" || read(t, filepath.Join(e.out, "secret.txt")) != "outside secret\n" {
		t.Fatal("a refused write changed a file")
	}
	if exists(filepath.Join(e.ws, "sub", "slash.txt:evil")) {
		t.Fatal("a stream was written")
	}
	// What was deleted in the context path is in the trash.
	var trashed []string
	_ = filepath.WalkDir(e.trash, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(p) != "meta.json" {
			trashed = append(trashed, p)
		}
		return nil
	})
	if len(trashed) != 2 {
		t.Fatalf("trash holds %q, want styles.css and old\\a.txt", trashed)
	}
}

// TestWindowsExecuteCommand: the working directory is the walked one (work_dir with a C:\ path).
func TestWindowsExecuteCommand(t *testing.T) {
	e := newWinEnv(t, permissions.Final, func(s *permissions.Spec, o *ToolsetOptions) {
		s.Allow = []string{"execute_command(hostname*)"}
		o.Sandbox = "none"
	})
	mkdir(t, filepath.Join(e.ws, "wd"))
	m := e.ok("execute_command", map[string]any{"command": "hostname", "work_dir": filepath.Join(e.ws, "wd")})
	if m["success"] != true || m["work_dir"] != filepath.Join(e.ws, "wd") {
		t.Fatalf("execute_command = %v", m)
	}
	e.fail("execute_command", map[string]any{"command": "hostname", "work_dir": e.out}, "outside")
}
