package filesystem

// Red-team tests (H8): a malicious or confused model attacking the permission layer through
// every tool. Each attack asserts the denial AND that the file on disk is unchanged; each
// group has a control proving the legitimate variant works (so a test cannot pass merely
// because everything fails).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions"
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
