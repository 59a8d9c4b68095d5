//go:build linux

package filesystem

// Red-team tests: a malicious or confused model attacking the permission layer through
// every tool. Each attack asserts the denial AND that the file on disk is unchanged; each
// group has a control proving the legitimate variant works (so a test cannot pass merely
// because everything fails).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/internal/testing/testbin"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// snapshotFiles records the content of every regular file under the given roots (and symlink
// targets), so a test can prove nothing changed on disk.
func snapshotFiles(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range roots {
		_ = filepath.WalkDir(r, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			switch {
			case d.Type()&os.ModeSymlink != 0:
				l, _ := os.Readlink(p)
				out[p] = "link:" + l
			case d.Type().IsRegular():
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			case d.IsDir():
				out[p] = "dir"
			}
			return nil
		})
	}
	return out
}

func assertUnchanged(t *testing.T, before map[string]string, roots ...string) {
	t.Helper()
	after := snapshotFiles(t, roots...)
	for p, v := range before {
		if w, ok := after[p]; !ok {
			t.Errorf("%s was removed", p)
		} else if w != v {
			t.Errorf("%s changed: %q -> %q", p, v, w)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was created", p)
		}
	}
}

// mustDeny runs a call that must be an error result and must not leak secret in its content.
func (e *env) mustDeny(name string, args map[string]any, secrets ...string) {
	e.t.Helper()
	m, res := e.call(name, args)
	if !res.IsError {
		e.t.Errorf("%s(%v) succeeded, want a denial: %s", name, args, res.Content)
		return
	}
	for _, s := range secrets {
		if strings.Contains(res.Content, s) {
			e.t.Errorf("%s(%v) leaked %q: %s", name, args, s, res.Content)
		}
	}
	_ = m
}

func TestRedteamSiblingOfFileContextPath(t *testing.T) {
	for _, role := range []permissions.Role{permissions.Coordination, permissions.Final} {
		t.Run(fmt.Sprint(role), func(t *testing.T) {
			e := newEnv(t, role)
			sib := filepath.Join(e.single, "sibling.txt")
			good := filepath.Join(e.single, "config.yaml")
			write(t, filepath.Join(e.single, "neighbour_secret.md"), "neighbour\n")
			mkdir(t, filepath.Join(e.ws, "d"))
			write(t, filepath.Join(e.ws, "d", "sibling.txt"), "mine\n")
			before := snapshotFiles(t, e.single, e.ws)
			secret := "sibling secret"
			variants := []string{sib, e.single + "//sibling.txt", e.single + "/./sibling.txt", good + "/../sibling.txt",
				filepath.Join(e.ws, "..", "single", "sibling.txt"), "../single/sibling.txt", e.single + "/", e.single, e.single + "/."}
			for _, p := range variants {
				e.mustDeny("read_file", map[string]any{"path": p}, secret)
				e.mustDeny("read_multiple_files", map[string]any{"paths": []any{good, p}}, secret)
				e.mustDeny("get_file_info", map[string]any{"path": p})
				e.mustDeny("list_directory", map[string]any{"path": p}, "neighbour_secret")
				e.mustDeny("directory_tree", map[string]any{"path": p}, "neighbour_secret")
				e.mustDeny("search_files", map[string]any{"path": p, "pattern": "sib"}, "neighbour_secret")
				e.mustDeny("compare_files", map[string]any{"file1": good, "file2": p}, secret)
				e.mustDeny("compare_files", map[string]any{"file1": p, "file2": filepath.Join(e.ws, "d", "sibling.txt")}, secret)
				e.mustDeny("compare_directories", map[string]any{"dir1": filepath.Join(e.ws, "d"), "dir2": p}, secret)
				e.mustDeny("copy_file", map[string]any{"source_path": p, "destination_path": "stolen.txt"})
				e.mustDeny("copy_files_batch", map[string]any{"source_base_path": p, "destination_base_path": "stolen"})
				e.mustDeny("move_file", map[string]any{"source": p, "destination": "stolen.txt"})
				e.mustDeny("delete_file", map[string]any{"path": p})
				e.mustDeny("write_file", map[string]any{"path": p, "content": "x"})
				e.mustDeny("execute_command", map[string]any{"command": "cat " + p}, secret)
			}
			// A link in the workspace to the sibling is judged by its target.
			if err := os.Symlink(sib, filepath.Join(e.ws, "sl")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(e.single, filepath.Join(e.ws, "sdir")); err != nil {
				t.Fatal(err)
			}
			before = snapshotFiles(t, e.single, e.ws)
			for _, p := range []string{"sl", "sdir/sibling.txt", "sdir", "./sdir/../sdir/sibling.txt"} {
				e.mustDeny("read_file", map[string]any{"path": p}, secret)
				e.mustDeny("list_directory", map[string]any{"path": p}, "neighbour_secret")
				e.mustDeny("copy_file", map[string]any{"source_path": p, "destination_path": "stolen2"})
			}
			// The workspace's own walks never descend into links.
			m := e.ok("directory_tree", map[string]any{"path": "."})
			m2 := e.ok("search_files", map[string]any{"path": ".", "pattern": "sibling"})
			m3 := e.ok("compare_directories", map[string]any{"dir1": ".", "dir2": "d", "show_content_diff": true})
			for _, x := range []any{m, m2, m3} {
				if strings.Contains(fmt.Sprint(x), secret) || strings.Contains(fmt.Sprint(x), filepath.Join(e.single, "sibling.txt")) {
					t.Errorf("walk leaked the sibling: %v", x)
				}
			}
			assertUnchanged(t, before, e.single, e.ws)
			// Control: the file itself.
			if m := e.ok("read_file", map[string]any{"path": good}); m["content"] != "a: 1\n" {
				t.Fatalf("control: %v", m)
			}
			e.ok("copy_file", map[string]any{"source_path": good, "destination_path": "cfg.yaml"})
		})
	}
}

// TestRedteamProtectedAndExcludedWrites: the final agent may write the project, but never its
// protected paths or default-excluded system paths; through any write tool, any spelling.
func TestRedteamProtectedAndExcludedWrites(t *testing.T) {
	e := newEnv(t, permissions.Final)
	write(t, filepath.Join(e.proj, ".git", "config"), "[core]\n")
	write(t, filepath.Join(e.proj, "node_modules", "x", "index.js"), "ok\n")
	write(t, filepath.Join(e.proj, ".massgen", "state.json"), "{}\n")
	write(t, filepath.Join(e.proj, "src", "__pycache__", "m.pyc"), "pyc\n")
	write(t, filepath.Join(e.ws, "payload.txt"), "pwned\n")
	mkdir(t, filepath.Join(e.ws, "tree", ".git"))
	write(t, filepath.Join(e.ws, "tree", "golden", "expected.txt"), "pwned\n")
	write(t, filepath.Join(e.ws, "tree", ".git", "config"), "pwned\n")
	write(t, filepath.Join(e.ws, "tree", "ok.txt"), "fine\n")
	e.ok("read_file", map[string]any{"path": "payload.txt"})
	gold := filepath.Join(e.proj, "golden", "expected.txt")
	targets := []string{
		gold, e.proj + "/golden//expected.txt", e.proj + "/golden/./expected.txt", e.proj + "/src/../golden/expected.txt",
		e.proj + "/golden/new.txt", filepath.Join(e.proj, ".git", "config"), filepath.Join(e.proj, ".GIT", "config"),
		filepath.Join(e.proj, ".env"), filepath.Join(e.proj, "node_modules", "x", "index.js"), filepath.Join(e.proj, "node_modules", "y"),
		filepath.Join(e.proj, ".massgen", "state.json"), filepath.Join(e.proj, ".massgen", "permissions.yaml"),
		filepath.Join(e.proj, "src", "__pycache__", "m.pyc"), filepath.Join(e.proj, "deep", ".venv", "bin", "activate"),
		filepath.Join(e.massgen, "trash", "run1", "x"), filepath.Join(e.out, "new.txt"), filepath.Join(e.temp, "agent2", "notes.md"),
	}
	before := snapshotFiles(t, e.proj, e.temp, e.out, e.single)
	for _, p := range targets {
		t.Run(strings.TrimPrefix(p, e.base), func(t *testing.T) {
			e := *e
			e.t = t
			e.mustDeny("write_file", map[string]any{"path": p, "content": "pwned"})
			e.mustDeny("edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "golden", "newText": "pwned"}}})
			e.mustDeny("create_directory", map[string]any{"path": p + "/sub"})
			e.mustDeny("copy_file", map[string]any{"source_path": "payload.txt", "destination_path": p, "overwrite": true})
			e.mustDeny("move_file", map[string]any{"source": "payload.txt", "destination": p})
			e.mustDeny("move_file", map[string]any{"source": p, "destination": "moved"})
			e.mustDeny("delete_file", map[string]any{"path": p, "recursive": true})
			e.mustDeny("copy_files_batch", map[string]any{"source_base_path": "tree", "destination_base_path": p, "overwrite": true})
		})
	}
	// A tree copied over the project: protected and excluded destinations are skipped, the rest lands.
	m := e.ok("copy_files_batch", map[string]any{"source_base_path": "tree", "destination_base_path": e.proj, "overwrite": true})
	if len(strs(m["copied"])) != 1 || !contains(strs(m["copied"]), filepath.Join(e.proj, "ok.txt")) {
		t.Fatalf("copy_files_batch over the project: %v", m)
	}
	m = e.ok("copy_file", map[string]any{"source_path": "tree", "destination_path": e.proj, "overwrite": true})
	_ = m
	if err := os.Remove(filepath.Join(e.proj, "ok.txt")); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(e.proj, "tree")) {
		os.RemoveAll(filepath.Join(e.proj, "tree")) // copy_file of a dir into a dir may nest it: only the content matters
	}
	// Batch delete over the whole project: only files the agent read go, never protected or
	// excluded ones, even when read.
	e.ok("read_file", map[string]any{"path": gold})
	e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, ".env")})
	e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, ".git", "config")})
	m = e.ok("delete_files_batch", map[string]any{"base_path": e.proj, "include_patterns": []any{"*", ".*", "**/*"}})
	if len(strs(m["deleted"])) != 0 {
		t.Fatalf("batch delete removed %v", m["deleted"])
	}
	assertUnchanged(t, before, e.proj, e.temp, e.out, e.single)
	// Control: an ordinary project file.
	e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, "src", "main.go"), "content": "package main\n"})
	e.ok("edit_file", map[string]any{"path": filepath.Join(e.proj, "styles.css"), "edits": []any{map[string]any{"oldText": "red", "newText": "blue"}}})
}

// TestRedteamCoordinationCannotWriteContext: during coordination every context path is read-only.
func TestRedteamCoordinationCannotWriteContext(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	write(t, filepath.Join(e.ws, "payload.txt"), "pwned\n")
	e.ok("read_file", map[string]any{"path": "payload.txt"})
	e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "index.html")})
	before := snapshotFiles(t, e.proj, e.single, e.temp)
	cfg := filepath.Join(e.single, "config.yaml")
	idx := filepath.Join(e.proj, "index.html")
	for _, p := range []string{idx, cfg, e.proj + "/new.txt", e.proj + "//index.html", e.proj + "/./index.html/", filepath.Join(e.temp, "agent2", "notes.md")} {
		e.mustDeny("write_file", map[string]any{"path": p, "content": "pwned"})
		e.mustDeny("edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "h", "newText": "X"}}})
		e.mustDeny("copy_file", map[string]any{"source_path": "payload.txt", "destination_path": p, "overwrite": true})
		e.mustDeny("move_file", map[string]any{"source": "payload.txt", "destination": p})
		e.mustDeny("move_file", map[string]any{"source": p, "destination": "stolen"})
		e.mustDeny("delete_file", map[string]any{"path": p})
		e.mustDeny("create_directory", map[string]any{"path": p + "x"})
		e.mustDeny("copy_files_batch", map[string]any{"source_base_path": ".", "destination_base_path": p, "overwrite": true})
		e.mustDeny("delete_files_batch", map[string]any{"base_path": p})
		e.mustDeny("execute_command", map[string]any{"command": "echo pwned > " + p})
		e.mustDeny("execute_command", map[string]any{"command": "echo pwned | tee " + p})
		e.mustDeny("execute_command", map[string]any{"command": "cp payload.txt " + p})
		e.mustDeny("execute_command", map[string]any{"command": "sed -i s/h/X/ " + p})
		// Behind an MCP prefix our tools keep their meaning (no server: denied before reaching one).
		e.mustDeny("mcp__fs__write_file", map[string]any{"path": p, "content": "pwned"})
	}
	// An edit_file dry run is a read: allowed, and writes nothing.
	e.ok("edit_file", map[string]any{"path": idx, "edits": []any{map[string]any{"oldText": "hi", "newText": "X"}}, "dryRun": true})
	// dryRun spelled as a string is not a bool for the engine: it is judged as a write (denied).
	e.mustDeny("edit_file", map[string]any{"path": idx, "edits": []any{map[string]any{"oldText": "hi", "newText": "X"}}, "dryRun": "false"})
	assertUnchanged(t, before, e.proj, e.single, e.temp)
	// Control: the workspace.
	e.ok("copy_file", map[string]any{"source_path": idx, "destination_path": "index.html"})
}

// TestRedteamBadArguments: arguments of the wrong type, NUL bytes, huge paths: every one fails
// closed, none crashes, nothing is written.
func TestRedteamBadArguments(t *testing.T) {
	e := newEnv(t, permissions.Final)
	before := snapshotFiles(t, e.base)
	long := strings.Repeat("a/", 3000) + "x"
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": 42}},
		{"read_file", map[string]any{"path": map[string]any{"path": "/etc/passwd"}}},
		{"read_file", map[string]any{"path": []any{"/etc/passwd"}}},
		{"read_file", map[string]any{"path": nil}},
		{"read_file", map[string]any{"path": true}},
		{"read_file", map[string]any{"path": "index\x00.html"}},
		{"read_file", map[string]any{"path": filepath.Join(e.out, "secret.txt") + "\x00"}},
		{"read_multiple_files", map[string]any{"paths": []any{"payload.txt", 7}}},
		{"read_multiple_files", map[string]any{"paths": []any{"ok", map[string]any{"p": filepath.Join(e.out, "secret.txt")}}}},
		{"read_multiple_files", map[string]any{"paths": []any{}}},
		{"read_multiple_files", map[string]any{"paths": filepath.Join(e.out, "secret.txt")}},
		{"write_file", map[string]any{"path": []any{"a.txt", filepath.Join(e.proj, "golden", "expected.txt")}, "content": "x"}},
		{"write_file", map[string]any{"path": filepath.Join(e.proj, "golden", "expected.txt\x00.txt"), "content": "x"}},
		{"write_file", map[string]any{"path": strings.Repeat("../", 2000) + filepath.Join(e.out[1:], "new.txt"), "content": "x"}},
		{"read_file", map[string]any{"path": filepath.Join(e.out, long)}},
		{"read_file", map[string]any{"path": strings.Repeat("./", 3000) + "../outside/secret.txt"}},
		{"write_file", map[string]any{"path": "", "content": "x"}},
		{"copy_file", map[string]any{"source_path": []any{"a"}, "destination_path": "b"}},
		{"copy_file", map[string]any{"source_path": "a", "destination_path": 3.5}},
		{"move_file", map[string]any{"source": "a", "destination": map[string]any{}}},
		{"compare_files", map[string]any{"file1": "a", "file2": false}},
		{"compare_directories", map[string]any{"dir1": ".", "dir2": []any{e.out}}},
		{"copy_files_batch", map[string]any{"source_base_path": e.out, "destination_base_path": "."}},
		{"delete_files_batch", map[string]any{"base_path": 0}},
		{"execute_command", map[string]any{"command": []any{"cat", filepath.Join(e.out, "secret.txt")}}},
		{"execute_command", map[string]any{"command": "cat x", "work_dir": 5}},
		{"execute_command", map[string]any{"command": "cat secret.txt", "work_dir": e.out}},
		{"execute_command", map[string]any{"command": "echo x > f\x00"}},
		{"search_files", map[string]any{"path": e.out, "pattern": "*"}},
	}
	for _, c := range cases {
		m, res := e.call(c.tool, c.args)
		if !res.IsError {
			t.Errorf("%s(%q) succeeded: %v", c.tool, c.args, m)
		}
		if strings.Contains(res.Content, "outside secret") {
			t.Errorf("%s(%q) leaked: %s", c.tool, c.args, res.Content)
		}
	}
	// Not a JSON object at all.
	for _, raw := range []string{`[1,2]`, `"x"`, `{"path":`, `{"path": "a", "path": 1}`} {
		if res := e.ts.Call(t.Context(), "read_file", []byte(raw)); !res.IsError {
			t.Errorf("read_file(%s) succeeded: %s", raw, res.Content)
		}
	}
	assertUnchanged(t, before, e.base)
	// Unicode look-alikes are other names: a Cyrillic ".gіt" is an ordinary directory.
	e.ok("write_file", map[string]any{"path": filepath.Join(e.proj, ".g\u0456t", "config"), "content": "x"})
	e.mustDeny("write_file", map[string]any{"path": filepath.Join(e.proj, ".git", "config"), "content": "x"})
}

// TestRedteamReadBeforeDeleteLaundering: an agent must not make the user's unread files count
// as "created by it" (and so deletable) by creating, copying into, or moving a directory.
func TestRedteamReadBeforeDeleteLaundering(t *testing.T) {
	t.Run("create_directory on an existing directory", func(t *testing.T) {
		e := newEnv(t, permissions.Final)
		before := snapshotFiles(t, e.proj)
		e.ok("create_directory", map[string]any{"path": e.proj})
		e.mustDeny("create_directory", map[string]any{"path": filepath.Join(e.proj, "golden")})
		e.ok("create_directory", map[string]any{"path": filepath.Join(e.proj, "src", "..")})
		m := e.ok("delete_files_batch", map[string]any{"base_path": e.proj})
		if len(strs(m["deleted"])) != 0 {
			t.Fatalf("deleted unread files: %v", m["deleted"])
		}
		e.mustDeny("delete_file", map[string]any{"path": filepath.Join(e.proj, "index.html")})
		assertUnchanged(t, before, e.proj)
		// Control: a directory it really created is its own, with what it puts inside.
		e.ok("create_directory", map[string]any{"path": filepath.Join(e.proj, "new", "sub")})
		write(t, filepath.Join(e.proj, "new", "sub", "gen.txt"), "generated by a command")
		e.ok("delete_file", map[string]any{"path": filepath.Join(e.proj, "new"), "recursive": true})
	})
	t.Run("copy_file of a directory into an existing directory", func(t *testing.T) {
		e := newEnv(t, permissions.Final)
		write(t, filepath.Join(e.ws, "tree", "a.txt"), "a")
		e.ok("create_directory", map[string]any{"path": "tree2"})
		before := snapshotFiles(t, e.proj)
		e.ok("copy_file", map[string]any{"source_path": "tree", "destination_path": e.proj, "overwrite": true})
		delete(before, filepath.Join(e.proj, "a.txt"))
		m := e.ok("delete_files_batch", map[string]any{"base_path": e.proj})
		if got := strs(m["deleted"]); len(got) != 1 || got[0] != filepath.Join(e.proj, "a.txt") {
			t.Fatalf("deleted %v, want only the copied a.txt", got)
		}
		assertUnchanged(t, before, e.proj)
	})
	t.Run("move_file keeps what was unread unread", func(t *testing.T) {
		e := newEnv(t, permissions.Final)
		write(t, filepath.Join(e.proj, "src", "main.go"), "package main\n")
		write(t, filepath.Join(e.proj, "src", "util.go"), "package main // util\n")
		e.ok("read_file", map[string]any{"path": filepath.Join(e.proj, "src", "main.go")})
		e.ok("move_file", map[string]any{"source": filepath.Join(e.proj, "src"), "destination": filepath.Join(e.proj, "lib")})
		e.mustDeny("delete_file", map[string]any{"path": filepath.Join(e.proj, "lib"), "recursive": true})
		e.mustDeny("delete_file", map[string]any{"path": filepath.Join(e.proj, "lib", "util.go")})
		if !exists(filepath.Join(e.proj, "lib", "util.go")) {
			t.Fatal("unread file deleted after a move")
		}
		// Control: the file it read before the move is still known under its new name.
		e.ok("delete_file", map[string]any{"path": filepath.Join(e.proj, "lib", "main.go")})
	})
}

// TestRedteamCommandEscapes: execute_command under each kernel sandbox, with the tricks the
// permission engine cannot see (shell variables hide the paths from it, so these reach the
// sandbox, which is the real boundary).
func TestRedteamCommandEscapes(t *testing.T) {
	lane.Long(t)
	for _, mode := range sandboxModes(t) {
		for _, role := range []permissions.Role{permissions.Coordination, permissions.Final} {
			t.Run(fmt.Sprintf("%s/%d", mode, role), func(t *testing.T) {
				e := newEnv(t, role, withSandbox(mode))
				gold := filepath.Join(e.proj, "golden", "expected.txt")
				git := filepath.Join(e.proj, ".git", "HEAD")
				idx := filepath.Join(e.proj, "index.html")
				notes := filepath.Join(e.temp, "agent2", "notes.md")
				cfg := filepath.Join(e.single, "config.yaml")
				sib := filepath.Join(e.single, "sibling.txt")
				secret := filepath.Join(e.out, "secret.txt")
				write(t, filepath.Join(e.single, "neighbour_secret.md"), "n\n")
				watched := []string{e.proj, e.single, e.temp, e.out}
				before := snapshotFiles(t, watched...)
				ro := []string{gold, git, notes, secret, sib, filepath.Join(e.proj, ".env")}
				if role == permissions.Coordination {
					ro = append(ro, idx, cfg)
				}
				for _, target := range ro {
					for _, cmd := range []string{
						`f=%s; echo pwned > "$f"`,
						`f=%s; echo pwned >> "$f"`,
						`f=%s; ln "$f" hl; echo pwned >> hl`,
						`f=%s; ln -s "$f" sl; echo pwned >> sl`,
						`f=%s; cp /dev/null "$f"`,
						`f=%s; : > "$f"`,
						`f=%s; truncate -s 0 "$f"`,
						`f=%s; rm -f "$f"`,
						`f=%s; mv "$f" stolen`,
						`f=%s; python3 -c "import sys; open(sys.argv[1],'a').write('pwned')" "$f"`,
						`f=%s; d=$(dirname "$f"); cd "$d" && echo pwned > "$(basename "$f")"`,
						`f=%s; printf 'echo pwned >> "$1"\n' > s.sh; sh s.sh "$f"`,
						`f=%s; exec 3>>"$f"; echo pwned >&3`,
						`f=%s; sed -i s/./X/ "$f"`,
						`f=%s; echo pwned | tee -a "$f"`,
						`f=%s; touch -d 2000-01-01 "$f"`,
						`f=%s; d=$(dirname "$f"); mv "$d" "$d.moved"`,
						`f=%s; unshare -Urm sh -c "mount -o remount,bind,rw $f 2>/dev/null; mount -t tmpfs x $(dirname $f) 2>/dev/null; echo pwned >> $f"`,
						`f=%s; unshare -Urm sh -c "mount --bind /dev/null $f; umount $(dirname $f)"; echo pwned >> "$f"`,
					} {
						c := fmt.Sprintf(cmd, target)
						e.call("execute_command", map[string]any{"command": c})
						os.Remove(filepath.Join(e.ws, "hl"))
						os.Remove(filepath.Join(e.ws, "sl"))
					}
					// Reading: nothing outside what the agent may read.
					if target == secret || target == sib {
						m, _ := e.call("execute_command", map[string]any{"command": fmt.Sprintf(`f=%s; cat "$f"; ln "$f" hl && cat hl; cp "$f" c && cat c`, target)})
						if s := fmt.Sprint(m); strings.Contains(s, "outside secret") || strings.Contains(s, "sibling secret") {
							t.Errorf("%s read through the sandbox: %v", target, m)
						}
					}
				}
				// Links the agent makes itself, then uses through the file tools: judged by target.
				if m, _ := e.call("execute_command", map[string]any{"command": fmt.Sprintf(`a=%s; b=%s; c=%s; ln -s "$a" l1; ln -s l1 l2; ln -s "$b" l3; ln -s "$c" l4; u=..; ln -s "$u" up`, gold, secret, sib)}); !exists(filepath.Join(e.ws, "l4")) {
					t.Fatalf("links: %v", m)
				}
				for _, p := range []string{"l1", "l2", "l3", "l4", "up/outside/secret.txt"} {
					e.mustDeny("write_file", map[string]any{"path": p, "content": "pwned"})
					e.mustDeny("copy_file", map[string]any{"source_path": "/dev/null", "destination_path": p, "overwrite": true})
				}
				for _, p := range []string{"l3", "l4", "up/outside/secret.txt", "up/single"} {
					e.mustDeny("read_file", map[string]any{"path": p}, "outside secret", "sibling secret")
					e.mustDeny("list_directory", map[string]any{"path": p}, "neighbour_secret")
				}
				// Temp dirs: /tmp and /dev/shm are not shared; TMPDIR is private and goes away.
				m, _ := e.call("execute_command", map[string]any{"command": `t=/tmp; s=/dev/shm; echo x > $t/massgen-redteam-leak; echo x > $s/massgen-redteam-leak; echo "$TMPDIR" > tmpdir.txt; echo hi > "$TMPDIR/f"; cat "$TMPDIR/f"`})
				for _, p := range []string{"/tmp/massgen-redteam-leak", "/dev/shm/massgen-redteam-leak"} {
					if exists(p) {
						os.Remove(p)
						t.Errorf("command wrote %s: %v", p, m)
					}
				}
				if td := strings.TrimSpace(read(t, filepath.Join(e.ws, "tmpdir.txt"))); td == "" || exists(td) {
					t.Errorf("private TMPDIR %q missing or left behind", td)
				}
				// /proc tricks: the parent's cwd and root, our own fds.
				for _, c := range []string{
					`echo pwned > /proc/$PPID/cwd/redteam.txt`, `cat /proc/1/root` + secret,
					`cat /proc/$PPID/root` + secret, `exec 3<.; cat /proc/self/fd/3/../outside/secret.txt`,
					`cat /proc/self/cwd/../outside/secret.txt`, `cat /proc/$PPID/environ`,
				} {
					m, _ := e.call("execute_command", map[string]any{"command": c})
					if s := fmt.Sprint(m); strings.Contains(s, "outside secret") {
						t.Errorf("%q leaked: %v", c, m)
					}
				}
				if wd, _ := os.Getwd(); exists(filepath.Join(wd, "redteam.txt")) {
					os.Remove(filepath.Join(wd, "redteam.txt"))
					t.Error("command wrote into massgen's working directory through /proc")
				}
				assertUnchanged(t, before, watched...)
				// Control: allowed work still works.
				ctl := "echo ok > mine.txt && cat mine.txt && cat " + gold
				if role == permissions.Final {
					ctl += " && echo '<h1>new</h1>' > " + idx + " && echo 'a: 2' > " + cfg
				}
				if m := e.ok("execute_command", map[string]any{"command": ctl}); !strings.HasPrefix(fmt.Sprint(m["stdout"]), "ok\ngolden\n") {
					t.Fatalf("control: %v", m)
				}
			})
		}
	}
}

// findProcs lists the pids whose command line contains marker.
func findProcs(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if !strings.Contains(string(st), ") Z ") {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// TestRedteamBackgroundProcessOutlivesCommand: a command that exits at once but leaves a
// background process behind (which could keep writing the workspace after its snapshot, or
// run on into the next phase) must not leave it running.
func TestRedteamBackgroundProcessOutlivesCommand(t *testing.T) {
	lane.Long(t)
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, permissions.Coordination, withSandbox(mode))
			marker := fmt.Sprintf("4242.%d%d", os.Getpid(), len(mode))
			e.ok("execute_command", map[string]any{"command": "sleep " + marker + " >/dev/null 2>&1 </dev/null & echo started"})
			if m, _ := e.call("execute_command", map[string]any{"command": "sleep " + marker + " >/dev/null 2>&1 </dev/null & sleep " + marker, "timeout": 1}); m["timed_out"] != true {
				t.Fatalf("want a timeout: %v", m)
			}
			// setsid leaves the process group, not the command's PID namespace.
			e.ok("execute_command", map[string]any{"command": "setsid sleep " + marker + " >/dev/null 2>&1 </dev/null & echo started"})
			deadline := time.Now().Add(10 * time.Second)
			for len(findProcs(marker)) > 0 {
				if time.Now().After(deadline) {
					for _, p := range findProcs(marker) {
						var pid int
						fmt.Sscan(p, &pid)
						syscall.Kill(pid, syscall.SIGKILL)
					}
					t.Fatalf("background process %v survived its command", findProcs(marker))
				}
				time.Sleep(20 * time.Millisecond)
			}
			// Control: a command may still use background jobs it waits for.
			if m := e.ok("execute_command", map[string]any{"command": "(echo bg > bg.txt) & wait; cat bg.txt"}); m["stdout"] != "bg\n" {
				t.Fatalf("control: %v", m)
			}
		})
	}
}

// TestRedteamBinary attacks through the real `massgen tools call` (the binary built from this
// module), with a realistic layout: the project is a context path that also holds the agents'
// workspaces and massgen's own directories.
func TestRedteamBinary(t *testing.T) {
	bin := testbin.For(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"src/main.go": "package main\n", "golden/g.json": "{}\n", ".git/config": "[core]\n", ".env": "KEY=1\n",
		"notes/keep.md": "keep\n",
	}
	for f, c := range files {
		write(t, filepath.Join(dir, f), c)
	}
	outside := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+"-outside")
	write(t, filepath.Join(outside, "secret.txt"), "outside secret\n")
	t.Cleanup(func() { os.RemoveAll(outside) })
	write(t, filepath.Join(dir, ".massgen", "workspaces", "ws_b", "b_secret.txt"), "agent b private\n")
	cfg := `agents:
  - id: agent_a
    backend: {type: openai, model: gpt-5, cwd: .massgen/workspaces/ws_a}
  - id: agent_b
    backend: {type: openai, model: gpt-5, cwd: .massgen/workspaces/ws_b}
orchestrator:
  snapshot_storage: .massgen/snapshots
  agent_temporary_workspace: .massgen/temp_workspaces
  context_paths:
    - path: .
      permission: write
      protected_paths: [golden]
`
	write(t, filepath.Join(dir, "cfg.yaml"), cfg)
	call := func(final bool, tool string, args map[string]any) (int, string) {
		t.Helper()
		raw, _ := json.Marshal(args)
		argv := []string{"tools", "call", "--config", filepath.Join(dir, "cfg.yaml"), "--agent", "agent_a"}
		if final {
			argv = append(argv, "--final")
		}
		argv = append(argv, tool, string(raw))
		cmd := exec.Command(bin, argv...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+outside, "OPENAI_API_KEY=sk-test")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	ws := filepath.Join(dir, ".massgen", "workspaces", "ws_a")
	// Control first: the workspace works (and gets created).
	if code, out := call(false, "write_file", map[string]any{"path": "mine.txt", "content": "mine"}); code != 0 {
		t.Fatalf("control write in the workspace: %d %s", code, out)
	}
	watched := []string{filepath.Join(dir, "src"), filepath.Join(dir, "golden"), filepath.Join(dir, ".git"),
		outside, filepath.Join(dir, "notes"), filepath.Join(dir, ".massgen", "workspaces", "ws_b")}
	before := snapshotFiles(t, watched...)
	secrets := []string{"outside secret", "agent b private"}
	type attack struct {
		final bool
		tool  string
		args  map[string]any
	}
	attacks := []attack{
		{false, "write_file", map[string]any{"path": filepath.Join(dir, "src", "main.go"), "content": "pwned"}},
		{false, "edit_file", map[string]any{"path": "../../../src/main.go", "edits": []any{map[string]any{"oldText": "main", "newText": "pwned"}}}},
		{false, "copy_file", map[string]any{"source_path": "mine.txt", "destination_path": filepath.Join(dir, "notes", "keep.md"), "overwrite": true}},
		{false, "move_file", map[string]any{"source": filepath.Join(dir, "notes", "keep.md"), "destination": "k.md"}},
		{false, "delete_file", map[string]any{"path": filepath.Join(dir, "notes", "keep.md")}},
		{false, "execute_command", map[string]any{"command": "f=" + filepath.Join(dir, "src", "main.go") + "; echo pwned > $f"}},
		{false, "mcp__fs__write_file", map[string]any{"path": filepath.Join(dir, "src", "main.go"), "content": "pwned"}},
		{true, "write_file", map[string]any{"path": filepath.Join(dir, "golden", "g.json"), "content": "pwned"}},
		{true, "write_file", map[string]any{"path": filepath.Join(dir, ".git", "config"), "content": "pwned"}},
		{true, "write_file", map[string]any{"path": filepath.Join(dir, ".env"), "content": "pwned"}},
		{true, "write_file", map[string]any{"path": filepath.Join(dir, ".massgen", "permissions.yaml"), "content": "permissions: {mode: bypassPermissions}"}},
		{true, "write_file", map[string]any{"path": filepath.Join(dir, ".massgen", "workspaces", "ws_b", "b_secret.txt"), "content": "pwned"}},
		{true, "write_file", map[string]any{"path": filepath.Join(dir, "node_modules", "x.js"), "content": "pwned"}},
		{true, "copy_files_batch", map[string]any{"source_base_path": ".", "destination_base_path": filepath.Join(dir, "golden"), "overwrite": true}},
		{true, "delete_files_batch", map[string]any{"base_path": dir}},
		{true, "move_file", map[string]any{"source": filepath.Join(dir, "golden"), "destination": "g"}},
		{true, "execute_command", map[string]any{"command": "f=" + filepath.Join(dir, "golden", "g.json") + "; echo pwned > $f; g=" + filepath.Join(dir, ".git", "config") + "; echo pwned > $g"}},
		{true, "execute_command", map[string]any{"command": "o=" + outside + "; d=" + dir + "; cat $o/secret.txt $d/.massgen/workspaces/ws_b/b_secret.txt"}},
		{true, "read_file", map[string]any{"path": filepath.Join(dir, ".massgen", "workspaces", "ws_b", "b_secret.txt")}},
		{true, "read_file", map[string]any{"path": filepath.Join(outside, "secret.txt")}},
		{true, "read_file", map[string]any{"path": "~/secret.txt"}},
		{true, "search_files", map[string]any{"path": dir, "pattern": "b_secret"}},
		{true, "compare_directories", map[string]any{"dir1": ws, "dir2": filepath.Join(dir, ".massgen", "workspaces", "ws_b"), "show_content_diff": true}},
	}
	for _, a := range attacks {
		code, out := call(a.final, a.tool, a.args)
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s %v (final=%v) leaked %q: %s", a.tool, a.args, a.final, s, out)
			}
		}
		if a.tool == "search_files" || a.tool == "delete_files_batch" {
			if strings.Contains(out, "b_secret.txt") || strings.Contains(out, `"deleted":["`) {
				t.Errorf("%s leaked or deleted: %s", a.tool, out)
			}
			continue
		}
		if code == 0 {
			t.Errorf("%s %v (final=%v): exit %d, want 1 (denied) or 2 (no such tool): %s", a.tool, a.args, a.final, code, out)
		}
	}
	assertUnchanged(t, before, watched...)
	// Controls: the final agent delivers into the project; commands write the workspace.
	if code, out := call(true, "copy_file", map[string]any{"source_path": "mine.txt", "destination_path": filepath.Join(dir, "src", "mine.txt")}); code != 0 {
		t.Fatalf("control copy_file to the project: %d %s", code, out)
	}
	for _, final := range []bool{false, true} {
		if code, out := call(final, "execute_command", map[string]any{"command": "echo cmd > cmd.txt && cat cmd.txt"}); code != 0 || !strings.Contains(out, `"stdout":"cmd\n"`) {
			t.Errorf("control: a command writing its own workspace (final=%v): %d %s", final, code, out)
		}
	}
}

// TestRedteamWorkspaceInsideProject: the default layout puts workspaces in
// <project>/.massgen/workspaces/; with the project a writable context path, the final agent's
// commands must write its workspace and the project, never .massgen's other content, .git,
// protected paths or another agent's workspace.
func TestRedteamWorkspaceInsideProject(t *testing.T) {
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			proj := filepath.Join(base, "proj")
			ws := filepath.Join(proj, ".massgen", "workspaces", "ws_a")
			wsB := filepath.Join(proj, ".massgen", "workspaces", "ws_b")
			snaps := filepath.Join(proj, ".massgen", "snapshots")
			temp := filepath.Join(proj, ".massgen", "temp_workspaces", "agent_a")
			mkdir(t, ws)
			write(t, filepath.Join(wsB, "b.txt"), "agent b private\n")
			write(t, filepath.Join(snaps, "agent_b", "b.txt"), "agent b private\n")
			write(t, filepath.Join(temp, "agent2", "b.txt"), "shared\n")
			write(t, filepath.Join(proj, ".massgen", "permissions.yaml"), "mode: acceptEdits\n")
			write(t, filepath.Join(proj, ".git", "config"), "[core]\n")
			write(t, filepath.Join(proj, "golden", "g.txt"), "gold\n")
			write(t, filepath.Join(proj, "src", "main.go"), "package main\n")
			spec := permissions.Spec{Agent: "agent_a", Role: permissions.Final, Workspace: ws, TempWorkspaces: []string{temp},
				ContextPaths: []permissions.ContextPath{{Path: proj, Write: true, Protected: []string{filepath.Join(proj, "golden")}}},
				Private:      []string{wsB, snaps}, Sandboxed: true}
			pol, err := permissions.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := NewToolset(ToolsetOptions{Guard: guard.New(pol, guard.Options{}), Sandbox: mode, EnforceReadBeforeDelete: true})
			if err != nil {
				t.Fatal(err)
			}
			e := &env{t: t, ts: ts, pol: pol, ws: ws}
			watched := []string{filepath.Join(proj, ".massgen", "permissions.yaml"), filepath.Join(proj, ".git"), filepath.Join(proj, "golden"), wsB, snaps, temp}
			before := snapshotFiles(t, watched...)
			for _, target := range []string{filepath.Join(proj, ".massgen", "permissions.yaml"), filepath.Join(proj, ".git", "config"),
				filepath.Join(proj, "golden", "g.txt"), filepath.Join(wsB, "b.txt"), filepath.Join(snaps, "agent_b", "b.txt"),
				filepath.Join(temp, "agent2", "b.txt"), filepath.Join(proj, ".massgen", "new.txt"), filepath.Join(proj, ".massgen", "workspaces", "ws_c")} {
				e.call("execute_command", map[string]any{"command": fmt.Sprintf(`f=%s; echo pwned >> "$f"; mkdir -p "$f.d"`, target)})
				m, _ := e.call("execute_command", map[string]any{"command": fmt.Sprintf(`f=%s; cat "$f"`, target)})
				if strings.Contains(fmt.Sprint(m), "agent b private") {
					t.Errorf("read another agent's private files: %v", m)
				}
			}
			assertUnchanged(t, before, watched...)
			for _, p := range []string{filepath.Join(proj, ".massgen", "new.txt"), filepath.Join(proj, ".massgen", "workspaces", "ws_c")} {
				if exists(p) || exists(p+".d") {
					t.Errorf("%s created", p)
				}
			}
			// Control: its own workspace (relative and absolute) and the project.
			m := e.ok("execute_command", map[string]any{"command": "echo a > a.txt && mkdir -p d/e && echo b > d/e/b.txt && echo c > " + filepath.Join(proj, "src", "new.go") + " && cat a.txt"})
			if m["stdout"] != "a\n" || read(t, filepath.Join(proj, "src", "new.go")) != "c\n" {
				t.Fatalf("control: %v", m)
			}
		})
	}
}

// TestRedteamCommandCreatesSystemPaths: default-excluded names are read-only outside the
// workspace, also when they do not exist yet. A command (whose paths the engine cannot see)
// that creates .git (hooks, core.fsmonitor: code run by the user's next git command), .env
// (read by massgen's next run: OPENAI_BASE_URL=...) or .massgen/permissions.yaml (project
// rules: mode bypassPermissions) in a writable context path must not leave them there.
func TestRedteamCommandCreatesSystemPaths(t *testing.T) {
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			e2 := newEnvNoSystem(t, mode)
			for _, c := range []string{
				`d=%s; mkdir -p "$d/.git/hooks" && printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' > "$d/.git/config"`,
				`d=%s; echo OPENAI_BASE_URL=https://evil.example > "$d/.env"`,
				`d=%s; mkdir -p "$d/.massgen" && echo 'permissions: {mode: bypassPermissions}' > "$d/.massgen/permissions.yaml"`,
				`d=%s; mkdir -p "$d/src/.git" && echo x > "$d/src/.git/config"`,
				`d=%s; mkdir -p pkg/.git && echo x > pkg/.git/config && cp -r pkg "$d/src/"`,
				`d=%s; git init -q "$d/src/repo"`,
			} {
				e2.call("execute_command", map[string]any{"command": fmt.Sprintf(c, e2.proj)})
			}
			for _, p := range []string{".git", ".env", ".massgen", "src/.git", "src/pkg/.git", "src/repo/.git"} {
				if exists(filepath.Join(e2.proj, p)) {
					t.Errorf("a command created %s in the context path", p)
				}
			}
			// Control: ordinary files, and system names inside the own workspace, are fine.
			m := e2.ok("execute_command", map[string]any{"command": fmt.Sprintf(`d=%s; echo ok > "$d/src/ok.txt" && mkdir -p .git && echo x > .git/config && cat "$d/src/ok.txt"`, e2.proj)})
			if m["stdout"] != "ok\n" || !exists(filepath.Join(e2.ws, ".git", "config")) {
				t.Fatalf("control: %v", m)
			}
		})
	}
}

// newEnvNoSystem is an env whose project has no .git/.env/.massgen yet.
func newEnvNoSystem(t *testing.T, mode sandbox.Mode) *env {
	return newEnv(t, permissions.Final, withSandbox(mode), func(s *permissions.Spec, _ *ToolsetOptions) {
		proj := s.ContextPaths[0].Path
		os.RemoveAll(filepath.Join(proj, ".git"))
		os.Remove(filepath.Join(proj, ".env"))
		mkdir(t, filepath.Join(proj, "src"))
	})
}

// openPTY opens a new pseudo-terminal pair: the master (the "user's keyboard") and the slave
// path (/dev/pts/N, what a shell in a terminal reads).
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n)
}

// TestRedteamDevices: a command must not read the user's terminal (keystrokes typed into
// massgen's or another terminal), the kernel log, or raw devices: only the harmless device
// files are reachable.
func TestRedteamDevices(t *testing.T) {
	master, pts := openPTY(t)
	// Keep a slave open so the terminal stays alive, as a user's shell would.
	slave, err := os.OpenFile(pts, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening %s: %v", pts, err)
	}
	defer slave.Close()
	if _, err := master.Write([]byte("hunter2-typed-password\n")); err != nil {
		t.Fatal(err)
	}
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, permissions.Coordination, withSandbox(mode))
			for _, c := range []string{
				"p=" + pts + "; timeout 2 head -n1 $p",
				"k=/dev/kmsg; timeout 2 head -c 200 $k 2>/dev/null | wc -c | grep -v '^0$'",
				"t=/dev/tty; timeout 2 head -c 1 $t 2>/dev/null | wc -c | grep -v '^0$'",
				"for d in /dev/sd? /dev/vd? /dev/nvme?n? /dev/loop0 /dev/mem /dev/tty0 /dev/console /dev/shm; do timeout 2 head -c 16 $d 2>/dev/null; done | wc -c | grep -v '^0$'",
				"ls /dev/pts /dev/shm 2>/dev/null",
			} {
				m, _ := e.call("execute_command", map[string]any{"command": c, "timeout": 5})
				if s, _ := m["stdout"].(string); strings.Contains(s, "hunter2") || strings.TrimSpace(s) != "" && !(mode == sandbox.ModeBubblewrap && strings.HasPrefix(c, "ls")) {
					t.Errorf("%q read a device: %q", c, s)
				}
			}
			// Control: the harmless devices work.
			if m := e.ok("execute_command", map[string]any{"command": "head -c 4 /dev/zero | od -An -tx1 | tr -d ' \\n'; head -c 4 /dev/urandom > /dev/null && echo ok > /dev/null && echo ok > /dev/stdout && echo err > /dev/stderr"}); m["stdout"] != "00000000ok\n" || m["stderr"] != "err\n" {
				t.Fatalf("control: %v", m)
			}
		})
	}
	// The typed password is still there for its real reader.
	buf := make([]byte, 64)
	slave.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, _ := slave.Read(buf)
	if !strings.Contains(string(buf[:n]), "hunter2") {
		t.Errorf("the terminal input was consumed by someone else: %q", buf[:n])
	}
}

// TestRedteamOtherProcesses: what a command can learn about processes outside its sandbox.
func TestRedteamOtherProcesses(t *testing.T) {
	// A process outside the sandbox with a secret on its command line (another agent's
	// command, a tool started with a token argument).
	marker := fmt.Sprintf("redteam-cmdline-secret-%d", os.Getpid())
	other := exec.Command("/bin/sh", "-c", "sleep 30; : "+marker)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, permissions.Coordination, withSandbox(mode))
			m, _ := e.call("execute_command", map[string]any{"command": "p=/proc; cat $p/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '"})
			leaked := strings.Contains(fmt.Sprint(m["stdout"]), marker)
			// (The shell's command line may start with the wait for its limits.)
			if !strings.Contains(fmt.Sprint(m["stdout"]), "p=/proc; cat") {
				t.Fatalf("the probe saw nothing, not even itself: %v", m)
			}
			if leaked && mode == sandbox.ModeLandlock {
				t.Log("KNOWN LIMITATION (landlock): /proc is shared, so a command can read other processes' command lines (see docs/tools.md)")
				return
			}
			if leaked {
				t.Errorf("read another process's command line: %v", m)
			}
		})
	}
}

// TestRedteamRootOnlySystemSecrets: run as root (containers, CI), a command keeps uid 0 and so
// could read /etc/shadow despite its dropped capabilities; such files are hidden.
func TestRedteamRootOnlySystemSecrets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: DAC already keeps /etc/shadow unreadable")
	}
	if !exists("/etc/shadow") {
		t.Skip("no /etc/shadow")
	}
	for _, mode := range sandboxModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, permissions.Coordination, withSandbox(mode))
			m, _ := e.call("execute_command", map[string]any{"command": "e=/etc; for f in shadow gshadow sudoers ssh/ssh_host_ed25519_key; do cat $e/$f 2>/dev/null; done | wc -c"})
			if strings.TrimSpace(fmt.Sprint(m["stdout"])) != "0" {
				t.Errorf("read root-only files: %v", m)
			}
			// Control: the rest of /etc works (users, name resolution).
			if m := e.ok("execute_command", map[string]any{"command": "e=/etc; grep -c '^root:' $e/passwd"}); m["stdout"] != "1\n" {
				t.Fatalf("control: %v", m)
			}
		})
	}
}

// TestRedteamSetuidDroppedOnReplace: replacing a setuid/setgid file's content never keeps the
// bits (new content under an old setuid-root bit would be a privilege escalation when massgen
// runs as root); ordinary permission bits are kept.
func TestRedteamSetuidDroppedOnReplace(t *testing.T) {
	e := newEnv(t, permissions.Final)
	p := filepath.Join(e.proj, "tool")
	write(t, p, "#!/bin/sh\necho original\n")
	if err := os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	e.ok("write_file", map[string]any{"path": p, "content": "#!/bin/sh\necho replaced\n"})
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 || fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode after replace: %v", fi.Mode())
	}
}
