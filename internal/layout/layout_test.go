package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestPaths(t *testing.T) {
	p := filepath.FromSlash
	proj := OfProject(p("/w"))
	moved := proj.WithStorage(p("/s/snaps"), "", p("/s/sessions"))
	tests := []struct {
		name, got, want string
	}{
		{"dir", proj.Dir(), p("/w/.massgen")},
		{"workspaces", proj.Workspaces(), p("/w/.massgen/workspaces")},
		{"snapshots", proj.Snapshots(), p("/w/.massgen/snapshots")},
		{"temp workspaces", proj.TempWorkspaces(), p("/w/.massgen/temp_workspaces")},
		{"sessions", proj.Sessions(), p("/w/.massgen/sessions")},
		{"logs", proj.Logs(), p("/w/.massgen/logs")},
		{"trash", proj.Trash(), p("/w/.massgen/trash")},
		{"run lock", proj.RunLock(), p("/w/.massgen/run.lock")},
		{"project rules", proj.ProjectRules(), p("/w/.massgen/permissions.yaml")},
		{"owned workspaces", proj.OwnedWorkspaces(), p("/w/.massgen/state/workspaces")},
		{"config file", proj.ConfigFile(), p("/w/.massgen/config.yaml")},
		{"env file", proj.EnvFile(), p("/w/.massgen/.env")},
		{"at", At(p("/m/x/")).Logs(), p("/m/x/logs")},
		{"zero value is relative", Layout{}.Trash(), p(".massgen/trash")},
		{"zero dir", Layout{}.Dir(), ".massgen"},
		{"moved snapshots", moved.Snapshots(), p("/s/snaps")},
		{"temp not moved", moved.TempWorkspaces(), p("/w/.massgen/temp_workspaces")},
		{"moved sessions", moved.Sessions(), p("/s/sessions")},
		{"storage does not move the rest", moved.Logs(), p("/w/.massgen/logs")},
		{"empty keeps a moved folder", moved.WithStorage("", "", "").Sessions(), p("/s/sessions")},
		{"enclosing", Enclosing(p("/w/.massgen/workspaces/a")), p("/w/.massgen")},
		{"enclosing none", Enclosing(p("/w/src/a")), ""},
		{"enclosing is above", Enclosing(p("/w/.massgen")), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	for path, want := range map[string]bool{
		p("/w/.massgen/permissions.yaml"):     true,
		p(".massgen/permissions.yaml"):        true,
		p("/w/permissions.yaml"):              false,
		p("/w/.massgen/x/permissions.yaml"):   false,
		p("/w/.massgen/permissions.yaml.bak"): false,
	} {
		if got := IsProjectRules(path); got != want {
			t.Errorf("IsProjectRules(%q) = %v", path, got)
		}
	}
}

// spelledElsewhere are the literals equal to a layout name outside this package that do not
// name a place in a .massgen folder.
var spelledElsewhere = []struct{ file, literal, why string }{
	{"cmd/sessionscmd/sessions.go", "sessions", "the command's name"},
	{"cmd/trashcmd/trash.go", "trash", "the command's name"},
	{"snapshots/save.go", "snapshots", "a folder in a run's log folder"},
	{"internal/testing/fakeclaude/fakeclaude.go", "state", "the fake's own folder"},
	{"internal/sandbox/sandbox.go", ".env", "a system name never created outside the workspace"},
	{"permissions/policy.go", ".env", "a default-excluded name"},
	{"configs/userdir.go", "config.yaml", "in ~/.config/massgen"},
	{"configs/userdir.go", ".env", "in ~/.config/massgen and the current folder"},
}

// TestNamesSpelledOnce: no non-test Go file of the module spells a name of the .massgen folder
// as a string: each reads it from this package.
func TestNamesSpelledOnce(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	ns := names()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == here || (path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !slices.Contains(ns, s) {
				return true
			}
			if slices.ContainsFunc(spelledElsewhere, func(e struct{ file, literal, why string }) bool {
				return e.file == rel && e.literal == s
			}) {
				return true
			}
			t.Errorf("%s spells %q: read it from internal/layout", rel, s)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files under %s: the walk missed the module", files, root)
	}
}
