package filesystem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions"
)

// The integration scenarios of spec 001 ("Integration Tests"), run as an agent would.

// TestScenarioWorkspaceCleanup: the agent creates old_index.html and new_website/index.html,
// deletes the old file, and the workspace is clean.
func TestScenarioWorkspaceCleanup(t *testing.T) {
	e := newEnv(t, permissions.Coordination)
	e.ok("write_file", map[string]any{"path": "old_index.html", "content": "<h1>old</h1>"})
	e.ok("write_file", map[string]any{"path": "new_website/index.html", "content": "<h1>Jimi Hendrix</h1>"})
	e.ok("delete_file", map[string]any{"path": "old_index.html"})
	m := e.ok("directory_tree", map[string]any{"path": "."})
	tree := m["tree"].([]any)
	if len(tree) != 1 || tree[0].(map[string]any)["name"] != "new_website" {
		t.Fatalf("workspace not clean: %v", tree)
	}
	if read(t, filepath.Join(e.ws, "new_website", "index.html")) != "<h1>Jimi Hendrix</h1>" {
		t.Fatal("kept file changed")
	}
	// A messy directory copied in from a context path: the agent must read before deleting.
	write(t, filepath.Join(e.proj, "beatles.html"), "beatles")
	e.ok("copy_file", map[string]any{"source_path": filepath.Join(e.proj, "beatles.html"), "destination_path": "beatles.html"})
	e.ok("delete_file", map[string]any{"path": "beatles.html"}) // created (copied) by the agent
	write(t, filepath.Join(e.ws, "dylan.html"), "dylan")        // put there by something else
	e.fail("delete_file", map[string]any{"path": "dylan.html"}, "not read or created")
}

// TestScenarioFileContextPath: a single config.yaml is shared; its siblings and parent are not.
func TestScenarioFileContextPath(t *testing.T) {
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			e := newEnv(t, r.role)
			cfg := filepath.Join(e.single, "config.yaml")
			if e.ok("read_file", map[string]any{"path": cfg})["content"] != "a: 1\n" {
				t.Fatal("config.yaml not readable")
			}
			m := e.fail("read_file", map[string]any{"path": filepath.Join(e.single, "sibling.txt")}, "")
			if !strings.Contains(m["error"].(string), "not an explicitly allowed file") {
				t.Errorf("sibling message = %q", m["error"])
			}
			e.fail("list_directory", map[string]any{"path": e.single}, "")
			e.fail("search_files", map[string]any{"path": e.single, "pattern": "*"}, "")
			e.fail("get_file_info", map[string]any{"path": filepath.Join(e.single, "sibling.txt")}, "")
			e.fail("copy_file", map[string]any{"source_path": filepath.Join(e.single, "sibling.txt"), "destination_path": "s.txt"}, "")
			_, res := e.call("write_file", map[string]any{"path": cfg, "content": "a: 2\n"})
			if r.role == permissions.Final {
				if res.IsError || read(t, cfg) != "a: 2\n" {
					t.Fatalf("final agent could not write the shared file: %s", res.Content)
				}
			} else if !res.IsError || read(t, cfg) != "a: 1\n" {
				t.Fatalf("coordination agent wrote the shared file: %s", res.Content)
			}
			e.fail("write_file", map[string]any{"path": filepath.Join(e.single, "new.txt"), "content": "x"}, "")
		})
	}
}

// TestScenarioDiffWorkflow: compare the workspace before and after changes, find the modified
// files and their diffs, with no side effects.
func TestScenarioDiffWorkflow(t *testing.T) {
	e := newEnv(t, permissions.Final)
	// Snapshot of the project in the workspace, then changes there.
	e.ok("copy_file", map[string]any{"source_path": e.proj, "destination_path": "before"})
	e.ok("copy_file", map[string]any{"source_path": "before", "destination_path": "after"})
	e.ok("edit_file", map[string]any{"path": "after/styles.css", "edits": []any{map[string]any{"oldText": "red", "newText": "blue"}}})
	e.ok("write_file", map[string]any{"path": "after/app.js", "content": "console.log(1)\n"})
	e.ok("delete_file", map[string]any{"path": "after/index.html"})
	before := snapshotTree(t, e.ws)
	m := e.ok("compare_directories", map[string]any{"dir1": "before", "dir2": "after", "show_content_diff": true})
	if got := strs(m["different"]); len(got) != 1 || got[0] != "styles.css" {
		t.Errorf("different = %v", got)
	}
	if got := strs(m["only_in_dir1"]); !contains(got, "index.html") {
		t.Errorf("only_in_dir1 = %v", got)
	}
	if got := strs(m["only_in_dir2"]); len(got) != 1 || got[0] != "app.js" {
		t.Errorf("only_in_dir2 = %v", got)
	}
	diff := m["content_diff"].(map[string]any)["styles.css"].(string)
	if !strings.Contains(diff, "-body { color: red; }") || !strings.Contains(diff, "+body { color: blue; }") {
		t.Errorf("diff = %q", diff)
	}
	f := e.ok("compare_files", map[string]any{"file1": "before/styles.css", "file2": filepath.Join(e.proj, "styles.css")})
	if f["identical"] != true {
		t.Errorf("copy differs from its source: %v", f)
	}
	if after := snapshotTree(t, e.ws); after != before {
		t.Fatal("comparing changed the workspace")
	}
	// The copy excluded nothing it should not have: protected and system files were copied
	// into the workspace (reading is allowed), and the originals are untouched.
	if read(t, filepath.Join(e.ws, "before", "golden", "expected.txt")) != "golden\n" {
		t.Error("protected file not copied for reading")
	}
}

// snapshotTree is a cheap fingerprint of every file (path, size, mtime) under dir.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		sb.WriteString(p + " " + fi.ModTime().String() + " " + fi.Mode().String() + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}
