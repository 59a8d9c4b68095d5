package configs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every production caller that loads a config gives it MassGen's file actions
// (LoadOptions.Actions from filesystem.MassGenActions): without them a backend.permissions rule
// over read_file or write_file would not be mapped (only warned about). Each configs.LoadOptions
// literal outside configs that sets anything sets Actions, and each call of configs.Load or
// configs.LoadBytes is given such a literal or a variable built from one.
func TestLoadCallersGiveActions(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	const configsPath = "github.com/massgen-go/massgen/configs"
	calls, literals := 0, 0
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if e.IsDir() {
			if rel != "." && (strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" || e.Name() == "node_modules" || rel == "configs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == configsPath {
				name = "configs"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return nil
		}
		isConfigs := func(x ast.Expr, sel ...string) bool {
			s, ok := x.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			id, ok := s.X.(*ast.Ident)
			if !ok || id.Name != name {
				return false
			}
			for _, w := range sel {
				if s.Sel.Name == w {
					return true
				}
			}
			return false
		}
		setsActions := func(cl *ast.CompositeLit) bool {
			for _, el := range cl.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Actions" {
						return true
					}
				}
			}
			return false
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if isConfigs(n.Type, "LoadOptions") && len(n.Elts) > 0 {
					literals++
					if !setsActions(n) {
						t.Errorf("%s: configs.LoadOptions without Actions (filesystem.MassGenActions())", fset.Position(n.Pos()))
					}
				}
			case *ast.CallExpr:
				if !isConfigs(n.Fun, "Load", "LoadBytes") || len(n.Args) == 0 {
					return true
				}
				calls++
				switch a := n.Args[len(n.Args)-1].(type) {
				case *ast.CompositeLit:
					if !setsActions(a) {
						t.Errorf("%s: configs.Load without Actions", fset.Position(n.Pos()))
					}
				case *ast.Ident: // built from a literal, checked above
				default:
					t.Errorf("%s: configs.Load given %T: build its options as a literal setting Actions", fset.Position(n.Pos()), a)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || literals == 0 {
		t.Fatalf("found %d calls of configs.Load and %d LoadOptions literals: the walk missed them", calls, literals)
	}
}
