package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// evalSymlinksAllowed are the non-test functions that may call filepath.EvalSymlinks: none of
// them resolves a managed root (workspace, temp workspace, read-only, context, protected or
// private path) of a built environment. Those are resolved once, by internal/roots, when the
// agent's environment is built, and read from that value everywhere after (issue 21, move 4).
// Key: file and enclosing function; value: why it is not a managed root.
var evalSymlinksAllowed = map[string]string{
	"permissions/trust/trust.go key": "the approval key of a project rules file: a file the user approves, not a root; " +
		"the project reached through a link is the same project",
	"configs/load.go checkWorkspaces": "config validation, before any environment exists: it warns about a cwd " +
		"outside .massgen/workspaces and decides nothing at run time (configs/ is another move's)",
	"configs/load.go realPath": "config validation (the .massgen folder compared with the cwds), as above",
	"configs/customtools.go customToolFile": "only names a link's target in the error refusing a custom tool " +
		"file given as a link",
	"internal/mcpclient/client.go serverDir": "massgen's own fresh private folder for an MCP server, made by " +
		"os.MkdirTemp a line above; no agent can reach it",
	"internal/launch/launch.go NewArea": "massgen's own fresh private area (os.MkdirTemp a line above)",
	"internal/launch/launch.go Resolve": "a program massgen starts (hook, MCP server): its real file is hashed " +
		"and copied into the private area, and what runs is that copy",
	"internal/customtools/customtools.go New": "a custom tool's own file (code the user configured, copied and " +
		"checked with Shaped), not a root",
	"internal/customtools/customtools.go interpreter": "a python3 found on PATH: checked against Shaped and " +
		"against the tool's sandbox policy, which holds the canonical roots",
	"internal/sandbox/seatbelt_darwin.go runSeatbelt": "the command's own fresh TMPDIR (os.MkdirTemp a line above); " +
		"Seatbelt names /private/var, not the /var link",
}

// TestNoEvalSymlinksOfRoots lists every filepath.EvalSymlinks call in the module's non-test Go
// files and allows only the sites above: a new one that resolves a root by string again fails
// here, and so does an entry above that no longer has a call.
func TestNoEvalSymlinksOfRoots(t *testing.T) {
	found := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		alias := importName(f, "path/filepath")
		if alias == "" {
			return nil
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "EvalSymlinks" {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == alias {
					key := filepath.ToSlash(p) + " " + fn.Name.Name
					found[key] = append(found[key], fset.Position(sel.Pos()).String())
				}
				return true
			})
		}
		// EvalSymlinks taken as a value outside any function (var f = filepath.EvalSymlinks).
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok {
				ast.Inspect(gd, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "EvalSymlinks" {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == alias {
							found[filepath.ToSlash(p)+" (package level)"] = append(found[filepath.ToSlash(p)+" (package level)"], fset.Position(sel.Pos()).String())
						}
					}
					return true
				})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range found {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := evalSymlinksAllowed[k]; !ok {
			t.Errorf("%s: filepath.EvalSymlinks in %s, which is not an allowed site: a managed root is resolved once (internal/roots) and read from the agent's roots.Set; anything else needs a row in evalSymlinksAllowed saying why it is not a root",
				strings.Join(found[k], ", "), k)
		}
	}
	for k := range evalSymlinksAllowed {
		if _, ok := found[k]; !ok {
			t.Errorf("evalSymlinksAllowed names %s, which no longer calls filepath.EvalSymlinks: remove the row", k)
		}
	}
	if len(found) == 0 {
		t.Fatal("no call found at all: the walk is broken")
	}
	t.Logf("allowed EvalSymlinks sites: %s", fmt.Sprint(keys))
}

// importName is the name path is imported under in f ("" when it is not imported).
func importName(f *ast.File, path string) string {
	for _, im := range f.Imports {
		if strings.Trim(im.Path.Value, `"`) != path {
			continue
		}
		if im.Name != nil {
			return im.Name.Name
		}
		return filepath.Base(path)
	}
	return ""
}
