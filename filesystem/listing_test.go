package filesystem

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/agentenv/permconfig"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/guard"
)

// runLayout is the tree a real run leaves in the project with `--context .` (the scripted
// two-agent demo: builder and reviewer, then listed with find), plus an earlier turn of a
// session, a trash entry and a read-only context path inside the project; next to the project,
// a read-only context path and a single-file context path with a sibling.
var runLayout = []string{
	"index.html",
	"hello.html",
	"docs/guide.md",
	"docs/img/logo.txt",
	"../shared/settings.yaml",
	"../shared/secrets.env.txt",
	"../refs/paper.md",
	".massgen/logs/log_20260101_000000/massgen.log",
	".massgen/logs/log_20260101_000000/permissions.jsonl",
	".massgen/logs/log_20260101_000000/snapshots/builder/20260101_000000.000001_answer/hello.html",
	".massgen/logs/log_20260101_000000/snapshots/reviewer/20260101_000000.000002_restart/notes.md",
	".massgen/snapshots/builder/hello.html",
	".massgen/snapshots/reviewer/notes.md",
	".massgen/temp_workspaces/builder/agent1/hello.html",
	".massgen/temp_workspaces/builder/agent2/notes.md",
	".massgen/temp_workspaces/reviewer/agent1/hello.html",
	".massgen/temp_workspaces/reviewer/agent1/sub/deeper.txt",
	".massgen/workspaces/workspace1/hello.html",
	".massgen/workspaces/workspace2/notes.md",
	".massgen/workspaces/workspace2/draft/part.md",
	".massgen/sessions/s1/turn_1/workspace/earlier.md",
	".massgen/sessions/s1/turn_1/metadata.json",
	".massgen/trash/log_20260101_000000/0001/meta.json",
	".massgen/trash/log_20260101_000000/0001/data",
}

// listingEnv builds the layout and reviewer's Toolset in a role, with the Spec a run makes.
func listingEnv(t *testing.T, role permissions.Role) (base string, ts *Toolset, pol *permissions.Policy) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base = filepath.Join(root, "project")
	for _, f := range runLayout {
		write(t, filepath.Join(base, f), "content of "+f+"\n")
	}
	ms := filepath.Join(base, ".massgen")
	// Links an agent may leave: to its own file (shown) and to the other agent's workspace
	// (hidden: what it leads to may not be read).
	if err := os.Symlink("notes.md", filepath.Join(ms, "workspaces", "workspace2", "alias.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ms, "workspaces", "workspace1"), filepath.Join(ms, "workspaces", "workspace2", "peek")); err != nil {
		t.Fatal(err)
	}
	cfg := &configs.Config{BaseDir: base}
	cfg.Orchestrator.SnapshotStorage = filepath.Join(ms, "snapshots")
	cfg.Orchestrator.AgentTemporaryWorkspace = filepath.Join(ms, "temp_workspaces")
	cfg.Orchestrator.ContextPaths = []configs.ContextPath{
		{Path: base, Permission: "write"},
		{Path: filepath.Join(base, "docs"), Permission: "read"},
		{Path: filepath.Join(root, "shared", "settings.yaml"), Permission: "write"},
		{Path: filepath.Join(root, "refs"), Permission: "read"},
	}
	cfg.Agents = []configs.Agent{
		{ID: "builder", Backend: configs.Backend{Type: "scripted", CWD: filepath.Join(ms, "workspaces", "workspace1")}},
		{ID: "reviewer", Backend: configs.Backend{Type: "scripted", CWD: filepath.Join(ms, "workspaces", "workspace2")}},
	}
	spec, err := permconfig.SpecFromConfig(cfg, "reviewer", role, permconfig.SpecOptions{
		TempWorkspaces: []string{filepath.Join(ms, "temp_workspaces", "reviewer")},
		ReadOnly:       []string{filepath.Join(ms, "sessions", "s1", "turn_1", "workspace")},
		Sandboxed:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	spec.Tools = Table()
	pol, err = permissions.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	ts, err = NewToolset(ToolsetOptions{Guard: guard.New(pol, guard.Options{}), TrashDir: filepath.Join(ms, "trash", "run2")})
	if err != nil {
		t.Fatal(err)
	}
	return base, ts, pol
}

func callTS(t *testing.T, ts *Toolset, tool string, args map[string]any) (map[string]any, Result) {
	t.Helper()
	raw, _ := json.Marshal(args)
	res := ts.Call(context.Background(), tool, raw)
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Content), &m); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return m, res
}

// opens is the oracle: read_file can open the file (a binary refusal is not a denial), or
// list_directory can open the directory.
func opens(t *testing.T, ts *Toolset, p string) bool {
	t.Helper()
	tool := "read_file"
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		tool = "list_directory"
	}
	_, res := callTS(t, ts, tool, map[string]any{"path": p})
	return res.Denied == nil
}

// visibleBelow is what a listing of root should show at any depth: every entry the oracle opens
// whose directories on the way (from root) it opens too. Slash paths relative to root.
func visibleBelow(t *testing.T, ts *Toolset, root string, filesOnly bool) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		if !opens(t, ts, p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !filesOnly || d.Type().IsRegular() {
			out = append(out, filepath.ToSlash(strings.TrimPrefix(p, root+"/")))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func treePaths(v any, prefix string, out *[]string) {
	list, _ := v.([]any)
	for _, x := range list {
		n, _ := x.(map[string]any)
		p := prefix + n["name"].(string)
		*out = append(*out, p)
		treePaths(n["children"], p+"/", out)
	}
}

func strSet(v any, trim string) []string {
	out := []string{}
	for _, s := range strs(v) {
		out = append(out, strings.TrimPrefix(s, trim+"/"))
	}
	slices.Sort(out)
	return out
}

// TestListingsShowWhatReadFileOpens (issue 16): over a real run's .massgen/ layout, for every
// kind of readable root (workspace, own temp workspace and each anonymous folder in it, context
// paths read and write, a file context path, an earlier turn's workspace) and the private paths
// next to them, every listing and walking tool shows exactly what read_file (list_directory
// for directories) can open there; empty results are [] and "", never null.
func TestListingsShowWhatReadFileOpens(t *testing.T) {
	for _, role := range roles {
		t.Run(role.name, func(t *testing.T) {
			base, ts, pol := listingEnv(t, role.role)
			ms := filepath.Join(base, ".massgen")
			dirs := []string{base, ms, filepath.Join(ms, "workspaces"), filepath.Join(ms, "workspaces", "workspace2"),
				filepath.Join(ms, "temp_workspaces", "reviewer"), filepath.Join(ms, "temp_workspaces", "reviewer", "agent1"),
				filepath.Join(base, "docs"), filepath.Join(ms, "sessions", "s1", "turn_1", "workspace"),
				filepath.Join(filepath.Dir(base), "refs"),
				// private, next to the roots: refused as a whole
				filepath.Join(ms, "temp_workspaces"), filepath.Join(ms, "snapshots"), filepath.Join(ms, "logs"),
				filepath.Join(ms, "workspaces", "workspace1"), filepath.Join(ms, "temp_workspaces", "builder"),
				filepath.Join(filepath.Dir(base), "shared")}
			for _, r := range pol.Roots() {
				if !r.File && !slices.Contains(dirs, r.Path) {
					t.Errorf("root %s (%s) not covered by the table", r.Path, r.Kind)
				}
			}
			for _, d := range dirs {
				if !opens(t, ts, d) {
					for _, tool := range []string{"list_directory", "directory_tree", "search_files", "compare_directories", "copy_files_batch"} {
						args := map[string]any{"path": d, "pattern": "*", "dir1": d, "dir2": d, "source_base_path": d, "destination_base_path": "c"}
						if m, res := callTS(t, ts, tool, args); res.Denied == nil {
							t.Errorf("%s of private %s not refused: %v", tool, d, m)
						}
					}
					continue
				}
				ents, _ := os.ReadDir(d)
				want := []string{}
				for _, e := range ents {
					if opens(t, ts, filepath.Join(d, e.Name())) {
						want = append(want, e.Name())
					}
				}
				m, _ := callTS(t, ts, "list_directory", map[string]any{"path": d})
				got := []string{}
				ge, ok := m["entries"].([]any)
				if !ok {
					t.Errorf("list_directory %s: entries = %#v (want a list, never null)", d, m["entries"])
				}
				for _, e := range ge {
					got = append(got, e.(map[string]any)["name"].(string))
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("list_directory %s\n got  %v\n want %v", d, got, want)
				}
				all := visibleBelow(t, ts, d, false)
				files := visibleBelow(t, ts, d, true)
				m, _ = callTS(t, ts, "directory_tree", map[string]any{"path": d})
				var tree []string
				treePaths(m["tree"], "", &tree)
				slices.Sort(tree)
				if tree == nil {
					tree = []string{}
				}
				if !slices.Equal(tree, all) {
					t.Errorf("directory_tree %s\n got  %v\n want %v", d, tree, all)
				}
				m, _ = callTS(t, ts, "search_files", map[string]any{"path": d, "pattern": "**"})
				if got := strSet(m["matches"], d); !slices.Equal(got, all) {
					t.Errorf("search_files %s\n got  %v\n want %v", d, got, all)
				}
				m, _ = callTS(t, ts, "compare_directories", map[string]any{"dir1": d, "dir2": d})
				if got := strSet(m["identical"], ""); !slices.Equal(got, regularOnly(d, files)) {
					t.Errorf("compare_directories %s\n got  %v\n want %v", d, got, files)
				}
				dest := filepath.Join(ms, "workspaces", "workspace2", "copies", filepath.Base(d))
				if !strings.HasPrefix(dest, d+"/") {
					m, _ = callTS(t, ts, "copy_files_batch", map[string]any{"source_base_path": d, "destination_base_path": dest})
					if got := strSet(m["copied"], dest); !slices.Equal(got, regularOnly(d, files)) {
						t.Errorf("copy_files_batch %s\n got  %v\n want %v", d, got, files)
					}
					os.RemoveAll(dest)
				}
				for _, p := range append(all, "missing") {
					_, res := callTS(t, ts, "get_file_info", map[string]any{"path": filepath.Join(d, p)})
					if p != "missing" && res.Denied != nil {
						t.Errorf("get_file_info %s/%s refused: %s", d, p, res.Message)
					}
				}
			}
			// A single-file context path: the file opens, its siblings do not.
			shared := filepath.Join(filepath.Dir(base), "shared")
			if !opens(t, ts, filepath.Join(shared, "settings.yaml")) || opens(t, ts, filepath.Join(shared, "secrets.env.txt")) {
				t.Error("file context path: the file must open, its sibling not")
			}
			// The private entries never show, even as names; the other agent's real id never.
			for _, tool := range []string{"directory_tree", "search_files"} {
				m, _ := callTS(t, ts, tool, map[string]any{"path": base, "pattern": "**"})
				b, _ := json.Marshal(m)
				for _, secret := range []string{"builder", "snapshots", "logs", "temp_workspaces", "workspace1", "secrets.env", "peek"} {
					if strings.Contains(string(b), secret) {
						t.Errorf("%s of the project shows %q: %s", tool, secret, b)
					}
				}
			}
			// An empty directory lists as [] and "".
			empty := filepath.Join(ms, "workspaces", "workspace2", "empty")
			mkdir(t, empty)
			m, _ := callTS(t, ts, "list_directory", map[string]any{"path": empty})
			b, _ := json.Marshal(m)
			if !strings.Contains(string(b), `"entries":[]`) || !strings.Contains(string(b), `"listing":""`) {
				t.Errorf("empty listing: %s", b)
			}
			for _, tool := range []string{"directory_tree", "search_files"} {
				m, _ := callTS(t, ts, tool, map[string]any{"path": empty, "pattern": "x"})
				if b, _ := json.Marshal(m); strings.Contains(string(b), "null") {
					t.Errorf("%s of an empty directory: %s", tool, b)
				}
			}
			// list_allowed_directories is the set of roots, in the words of the prompt.
			m, _ = callTS(t, ts, "list_allowed_directories", map[string]any{})
			var want []string
			for _, r := range pol.Roots() {
				want = append(want, r.Path)
			}
			if got := strs(m["directories"]); !slices.Equal(got, want) {
				t.Errorf("list_allowed_directories = %v, want %v", got, want)
			}
			if m["description"] != pol.DescribeRoots() || ts.DescribeRoots() != pol.DescribeRoots() {
				t.Errorf("description differs from the prompt's: %v", m["description"])
			}
			for _, w := range want {
				if !opens(t, ts, w) {
					t.Errorf("allowed directory %s cannot be opened", w)
				}
			}
		})
	}
}

// regularOnly keeps the regular files (links are listed, not copied or compared).
func regularOnly(dir string, rels []string) []string {
	out := []string{}
	for _, r := range rels {
		if fi, err := os.Lstat(filepath.Join(dir, r)); err == nil && fi.Mode().IsRegular() {
			out = append(out, r)
		}
	}
	return out
}
