package filesystem

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// moduleRoot is the repository root (this package's parent).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// stringLiterals maps every string literal of the module's non-test Go files to the files
// (relative to the root) that spell it.
func stringLiterals(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		seen := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && !seen[s] {
					seen[s] = true
					out[s] = append(out[s], rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEachToolDeclaredOnce: a built-in tool is one file. Its name is a string in exactly one
// non-test Go file of the module, its declaration filesystem/<name>.go, beside its description
// filesystem/<name>.md: no list, switch or table elsewhere names it (the permission engine knows
// command tools by their declarations, MassGen's action words are derived from the engine's
// classes), so adding a tool is adding its file.
func TestEachToolDeclaredOnce(t *testing.T) {
	root := moduleRoot(t)
	lits := stringLiterals(t, root)
	for _, tl := range Builtins() {
		name := tl.Name()
		decl := "filesystem/" + name + ".go"
		var others []string
		found := false
		for _, f := range lits[name] {
			switch {
			case f == decl:
				found = true
			default:
				others = append(others, f)
			}
		}
		if !found {
			t.Errorf("%s is not declared in %s (its name is spelled in %v)", name, decl, lits[name])
		}
		if len(others) > 0 {
			t.Errorf("%s is spelled outside its declaration, in %v: read it from the registry (filesystem.Builtins)", name, others)
		}
		md, err := os.ReadFile(filepath.Join(root, "filesystem", name+".md"))
		if err != nil {
			t.Errorf("%s: no description beside its declaration: %v", name, err)
		} else if strings.TrimSpace(string(md)) == "" || (!strings.Contains(string(md), "{{") && strings.TrimSpace(string(md)) != tl.Description()) {
			t.Errorf("%s: the description is not %s.md", name, name)
		}
	}
}

// TestRegistry: the tools are registered in their Order, with distinct names and orders, and the
// lists read from the registry agree with it.
func TestRegistry(t *testing.T) {
	set := Builtins()
	if len(set) == 0 {
		t.Fatal("no built-in tools registered")
	}
	for i := 1; i < len(set); i++ {
		if set[i-1].Order() >= set[i].Order() {
			t.Errorf("%s (order %d) comes before %s (order %d)", set[i-1].Name(), set[i-1].Order(), set[i].Name(), set[i].Order())
		}
	}
	table := Table()
	if len(table) != len(set) {
		t.Errorf("Table has %d tools, the registry %d", len(table), len(set))
	}
	e := newEnv(t, permissions.Final)
	var offered []string
	for _, tl := range e.ts.Tools() {
		offered = append(offered, tl.Name)
	}
	if !slices.Equal(offered, names(set)) {
		t.Errorf("a Toolset offers %v\nthe registry holds %v", offered, names(set))
	}
	for _, tl := range set {
		if !reflect.DeepEqual(table[tl.Name()], tl.Decl()) {
			t.Errorf("%s: Table declares %+v, the registry %+v", tl.Name(), table[tl.Name()], tl.Decl())
		}
		// Registry values are not shared: a caller changing one changes nothing else.
		d := tl.Decl()
		if len(d.Args) > 0 {
			d.Args[0].Name = "changed"
			if tl.Decl().Args[0].Name == "changed" {
				t.Errorf("%s: Decl shares its arguments", tl.Name())
			}
		}
	}
}

// TestNamesAgreeWithPermissions: where the permission engine judges a tool by its name (an MCP
// server's tool of the same name, a table-less caller), it judges massgen's tools as their
// declarations do, and the reference MCP filesystem server's tools that share massgen's names
// are judged by massgen's declarations.
func TestNamesAgreeWithPermissions(t *testing.T) {
	table := Table()
	for _, tl := range Builtins() {
		name, decl := tl.Name(), tl.Decl()
		if got := toolargs.IsWriteTool(name); got != tl.Writes() {
			t.Errorf("%s: by its name a write tool %v, by its declaration %v", name, got, tl.Writes())
		}
		// Command-ness is the declaration's: the table says it, under any MCP prefix and in
		// any case; the name alone (no table) says nothing of massgen's tools.
		for _, n := range []string{name, "mcp__fs__" + name, strings.ToUpper(name)} {
			if got := table.IsCommand(n); got != decl.Command {
				t.Errorf("%s: the table judges it a command tool %v, its declaration %v", n, got, decl.Command)
			}
		}
		if toolargs.Table(nil).IsCommand(name) || toolargs.IsShellName(name) {
			t.Errorf("%s: a command tool by its name alone: the permission engine spells it", name)
		}
		if got, ok := table.Known("mcp__fs__" + name); !ok || !reflect.DeepEqual(got, decl) {
			t.Errorf("mcp__fs__%s is judged as %+v, not by massgen's declaration", name, got)
		}
	}
	c, err := table.Classify("mcp__fs__move_file", map[string]any{"source": "a", "destination": "b"})
	if err != nil || len(c.Paths) != 2 || c.Paths[0].Access != toolargs.Delete || c.Paths[1].Access != toolargs.Write {
		t.Errorf("the reference server's move_file: %+v, %v", c, err)
	}
	if _, err := table.Classify("mcp__fs__list_allowed_directories", map[string]any{}); err != nil {
		t.Errorf("the reference server's list_allowed_directories: %v", err)
	}
}

// TestDocsToolTable: docs/tools.md's table of tools lists the registry's tools, in its order,
// each with its arguments as declared.
func TestDocsToolTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "| tool | arguments | notes |\n| --- | --- | --- |\n")
	if !ok {
		t.Fatal("docs/tools.md has no table of tools (| tool | arguments | notes |)")
	}
	var rows []string
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 3 {
			t.Fatalf("docs/tools.md: row %q", line)
		}
		rows = append(rows, strings.TrimPrefix(cells[0], "| ")+" | "+cells[1])
	}
	var want []string
	for _, tl := range Builtins() {
		want = append(want, "`"+tl.Name()+"` | "+docArgs(tl.Params()))
	}
	if !slices.Equal(rows, want) {
		t.Errorf("docs/tools.md's table of tools\n got %s\nwant %s\n(write the rows the registry gives, notes after them)", strings.Join(rows, "\n     "), strings.Join(want, "\n     "))
	}
}

// docArgs is a tool's arguments as docs/tools.md's table shows them: `a`, `b[{x,y}]`, or —.
func docArgs(ps []tooldecl.Param) string {
	if len(ps) == 0 {
		return "—"
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "`" + p.Name
		if len(p.Items) > 0 {
			out[i] += "[{" + strings.Join(p.Items, ",") + "}]"
		}
		out[i] += "`"
	}
	return strings.Join(out, ", ")
}

// names are the tools' names in order.
func names(s tooldecl.Set) []string {
	out := make([]string, len(s))
	for i, t := range s {
		out[i] = t.Name()
	}
	return out
}
