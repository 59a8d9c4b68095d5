package configs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A config is finished once Resolve made it: nothing outside this package writes into one.
// These tests read the module's source (go/ast) for the two ways that happened before Resolve:
// writing a config's context-path list, and calling a method of Config that changes it.

// step kinds in a chain: a field name, or one of these.
const (
	stepIndex = "[]" // x[i], x[i:j]: the memory a slice or map refers to
	stepDeref = "*"  // *x
)

// chain returns the identifier an expression starts from (nil when it starts from a call, a
// literal, ...) and the steps taken from it: field names, stepIndex and stepDeref.
func chain(e ast.Expr) (*ast.Ident, []string) {
	switch e := e.(type) {
	case *ast.Ident:
		return e, nil
	case *ast.ParenExpr:
		return chain(e.X)
	case *ast.SelectorExpr:
		root, steps := chain(e.X)
		return root, append(steps, e.Sel.Name)
	case *ast.IndexExpr:
		root, steps := chain(e.X)
		return root, append(steps, stepIndex)
	case *ast.IndexListExpr:
		root, steps := chain(e.X)
		return root, append(steps, stepIndex)
	case *ast.SliceExpr:
		root, steps := chain(e.X)
		return root, append(steps, stepIndex)
	case *ast.StarExpr:
		root, steps := chain(e.X)
		return root, append(steps, stepDeref)
	}
	return nil, nil
}

// alias is a local that refers to watched memory: through a pointer (x := &w, or a copy of
// a pointer), or as a copy (x := w.F, or a range value) of a struct, slice header or pointer,
// which reaches the watched memory only through an index or a dereference.
type alias struct {
	steps  []string // the steps from the watched root it stands for
	copied bool
}

// watcher says which memory a check watches: writing it changes a config.
type watcher struct {
	root     func(name string) bool    // an identifier the watched memory is reached from
	relevant func(steps []string) bool // a local reached by steps from a root is followed
	watched  func(steps []string) bool // steps from a root lead into watched memory
}

// inPlace are the functions that write into the memory their first argument refers to.
var inPlace = map[string][]string{
	"":       {"append", "copy", "clear", "delete"},
	"sort":   {"Sort", "Stable", "Slice", "SliceStable", "Strings", "Ints", "Float64s"},
	"slices": {"Sort", "SortFunc", "SortStableFunc", "Reverse", "Delete", "DeleteFunc", "Insert", "Replace", "Compact", "CompactFunc"},
}

func indirect(steps []string) bool {
	return slices.ContainsFunc(steps, func(s string) bool { return s == stepIndex || s == stepDeref })
}

// walker finds, in one function, the writes into memory a watcher watches. Locals assigned
// from watched memory, or from its address, are followed by name (flow-insensitively).
type walker struct {
	w       watcher
	aliases map[string]alias
}

// resolve returns the steps from a root that e stands for, and whether it reaches the root
// through a copy.
func (k *walker) resolve(e ast.Expr) (steps []string, copied, ok bool) {
	root, s := chain(e)
	if root == nil {
		return nil, false, false
	}
	if a, found := k.aliases[root.Name]; found {
		return append(slices.Clone(a.steps), s...), a.copied && !indirect(s), true
	}
	if k.w.root(root.Name) {
		return s, false, true
	}
	return nil, false, false
}

// writes reports whether writing e (and then the extra steps) changes watched memory.
func (k *walker) writes(e ast.Expr, extra ...string) bool {
	root, s := chain(e)
	if root == nil {
		return false
	}
	s = append(s, extra...)
	if a, found := k.aliases[root.Name]; found {
		if a.copied && !indirect(s) {
			return false // the copy's own fields
		}
		return k.w.watched(append(slices.Clone(a.steps), s...))
	}
	return k.w.root(root.Name) && k.w.watched(s)
}

// define follows lhs := rhs (or var lhs = rhs).
func (k *walker) define(lhs, rhs ast.Expr) {
	id, ok := lhs.(*ast.Ident)
	if !ok || id.Name == "_" {
		return
	}
	amp := false
	if u, ok := rhs.(*ast.UnaryExpr); ok && u.Op == token.AND {
		rhs, amp = u.X, true
	}
	steps, copied, ok := k.resolve(rhs)
	if !ok || !k.w.relevant(steps) {
		return
	}
	_, s := chain(rhs)
	if len(s) > 0 && !amp {
		copied = true // a value read from the memory: a struct, slice header or pointer
	}
	k.aliases[id.Name] = alias{steps: steps, copied: copied}
}

// writesIn lists the places in body that write into watched memory: the left side of an
// assignment or ++/--, and the first argument of an in-place function (inPlace).
func writesIn(fset *token.FileSet, body ast.Node, w watcher) []string {
	k := &walker{w: w, aliases: map[string]alias{}}
	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fset.Position(n.Pos()).String()+": "+what)
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if n.Tok != token.DEFINE && k.writes(l) {
					report(l, "assigns to "+render(l))
				}
				if len(n.Lhs) == len(n.Rhs) {
					k.define(l, n.Rhs[i])
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if len(n.Names) == len(n.Values) {
					k.define(name, n.Values[i])
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				for _, l := range []ast.Expr{n.Key, n.Value} {
					if l != nil && k.writes(l) {
						report(l, "assigns to "+render(l))
					}
				}
			}
			if id, ok := n.Value.(*ast.Ident); ok {
				if steps, _, ok := k.resolve(n.X); ok && k.w.relevant(steps) {
					k.aliases[id.Name] = alias{steps: append(steps, stepIndex), copied: true}
				}
			}
		case *ast.IncDecStmt:
			if k.writes(n.X) {
				report(n.X, n.Tok.String()+" on "+render(n.X))
			}
		case *ast.CallExpr:
			if len(n.Args) > 0 && isInPlace(n.Fun) && k.writes(n.Args[0], stepIndex) {
				report(n, render(n.Fun)+" writes into "+render(n.Args[0]))
			}
		}
		return true
	})
	return found
}

func isInPlace(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return slices.Contains(inPlace[""], f.Name)
	case *ast.SelectorExpr:
		if pkg, ok := f.X.(*ast.Ident); ok {
			return slices.Contains(inPlace[pkg.Name], f.Sel.Name)
		}
	}
	return false
}

// render shows an expression's chain in messages ("cfg.Orchestrator.ContextPaths[]").
func render(e ast.Expr) string {
	root, steps := chain(e)
	if root == nil {
		return "an expression"
	}
	var b strings.Builder
	b.WriteString(root.Name)
	for _, s := range steps {
		switch s {
		case stepIndex:
			b.WriteString("[]")
		case stepDeref:
			b.WriteString("(*)")
		default:
			b.WriteString("." + s)
		}
	}
	return b.String()
}

// hasContextPaths: the steps select .Orchestrator.ContextPaths, a field path only
// configs.Config has (TestContextPathFieldPathIsConfigs).
func hasContextPaths(steps []string) bool {
	for i := 1; i < len(steps); i++ {
		if steps[i-1] == "Orchestrator" && steps[i] == "ContextPaths" {
			return true
		}
	}
	return false
}

// contextPathList watches a config's context-path list, from whatever variable holds the
// config; locals holding the Orchestrator section or the list are followed.
var contextPathList = watcher{
	root: func(string) bool { return true },
	relevant: func(steps []string) bool {
		return hasContextPaths(steps) || (len(steps) > 0 && steps[len(steps)-1] == "Orchestrator")
	},
	watched: hasContextPaths,
}

// pointedTo watches what the named *Config variables (a receiver, a parameter) point to:
// assigning the variable itself changes nothing, anything reached through it does.
func pointedTo(names map[string]bool) watcher {
	return watcher{
		root:     func(name string) bool { return names[name] },
		relevant: func([]string) bool { return true },
		watched:  func(steps []string) bool { return len(steps) > 0 },
	}
}

// moduleFiles parses every non-test Go file of the module (testdata and hidden folders
// skipped), keyed by its path relative to the module root.
func moduleFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, files
}

// configParams are the names of fn's receiver and parameters of type *Config.
func configParams(fn *ast.FuncDecl) map[string]bool {
	names := map[string]bool{}
	var lists []*ast.Field
	if fn.Recv != nil {
		lists = append(lists, fn.Recv.List...)
	}
	lists = append(lists, fn.Type.Params.List...)
	for _, f := range lists {
		star, ok := f.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		if id, ok := star.X.(*ast.Ident); ok && id.Name == "Config" {
			for _, n := range f.Names {
				names[n.Name] = true
			}
		}
	}
	return names
}

// funcName is "Name" for a function and "(*Config).Name" for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil {
		return fn.Name.Name
	}
	return "(*Config)." + fn.Name.Name
}

// changesConfig returns the functions and methods of the given files (package configs) that
// change a *Config they are given (receiver or parameter), with one place each does so: by
// writing through it, or by calling such a method on it or passing it to such a function.
func changesConfig(fset *token.FileSet, files []*ast.File) map[string]string {
	type fn struct {
		decl  *ast.FuncDecl
		names map[string]bool
	}
	var fns []fn
	for _, f := range files {
		for _, d := range f.Decls {
			if decl, ok := d.(*ast.FuncDecl); ok && decl.Body != nil {
				if names := configParams(decl); len(names) > 0 {
					fns = append(fns, fn{decl, names})
				}
			}
		}
	}
	out := map[string]string{}
	for _, f := range fns {
		if w := writesIn(fset, f.decl.Body, pointedTo(f.names)); len(w) > 0 {
			out[funcName(f.decl)] = w[0]
		}
	}
	for changed := true; changed; {
		changed = false
		for _, f := range fns {
			if _, done := out[funcName(f.decl)]; done {
				continue
			}
			ast.Inspect(f.decl.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var callee string
				var args []ast.Expr
				switch fun := call.Fun.(type) {
				case *ast.SelectorExpr:
					callee, args = "(*Config)."+fun.Sel.Name, append([]ast.Expr{fun.X}, call.Args...)
				case *ast.Ident:
					callee, args = fun.Name, call.Args
				}
				if _, bad := out[callee]; !bad {
					return true
				}
				for _, a := range args {
					if id, ok := a.(*ast.Ident); ok && f.names[id.Name] {
						out[funcName(f.decl)] = fset.Position(call.Pos()).String() + ": calls " + callee
						changed = true
						return false
					}
				}
				return true
			})
		}
	}
	return out
}

// configsFiles are the parsed non-test files of package configs.
func configsFiles(files map[string]*ast.File) []*ast.File {
	var out []*ast.File
	for p, f := range files {
		if filepath.ToSlash(filepath.Dir(p)) == "configs" {
			out = append(out, f)
		}
	}
	return out
}

// TestNoExportedFunctionChangesAConfig: no package outside configs can change a config
// through configs' own API: every function or method of configs that writes into a *Config it
// is given (as Load's helpers do while loading) is unexported, so the compiler keeps the others
// from calling it. A config is finished by Resolve, which returns a new one.
func TestNoExportedFunctionChangesAConfig(t *testing.T) {
	fset, files := moduleFiles(t)
	changing := changesConfig(fset, configsFiles(files))
	if len(changing) == 0 {
		t.Fatal("found no function of configs that changes a *Config; Load's helpers (relocate, ...) do: the scan is broken")
	}
	for name, where := range changing {
		if ast.IsExported(strings.TrimPrefix(name, "(*Config).")) {
			t.Errorf("%s changes the config it is given (%s): a loaded config is finished once configs.Resolve made it; return a new value as Resolve does, or keep it unexported for Load", name, where)
		}
	}
	if _, ok := changing["(*Config).relocate"]; !ok {
		t.Errorf("relocate writes its receiver's paths but is not found (found %v): the scan is broken", changing)
	}
}

// TestNothingOutsideConfigsWritesContextPaths: no package outside configs writes a config's
// context-path list (assigns it or into it, appends to it, sorts it in place ...), directly or
// through a local holding the Orchestrator section or the list: context paths are inputs to
// configs.Resolve, and the next turn gets a new config.
func TestNothingOutsideConfigsWritesContextPaths(t *testing.T) {
	fset, files := moduleFiles(t)
	scanned, reads := 0, 0
	for p, f := range files {
		if strings.HasPrefix(p, "configs/") {
			continue
		}
		scanned++
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				for _, w := range writesIn(fset, fn.Body, contextPathList) {
					t.Errorf("%s: a config's context paths are configs.Resolve's inputs, not written after it", w)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "ContextPaths" {
				if _, steps := chain(sel); hasContextPaths(steps) {
					reads++
				}
			}
			return true
		})
	}
	// The scan reads the packages that use the list (internal/app, orchestrator, ...).
	if scanned < 100 || reads < 10 {
		t.Fatalf("scanned %d files with %d uses of Orchestrator.ContextPaths: the scan missed the module", scanned, reads)
	}
}

// TestContextPathFieldPathIsConfigs: .Orchestrator.ContextPaths, which the scan above goes
// by, names configs.Config's field and nothing else: no other struct of the module has a
// field named Orchestrator, and none embeds configs.Orchestrator.
func TestContextPathFieldPathIsConfigs(t *testing.T) {
	_, files := moduleFiles(t)
	for p, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fld := range st.Fields.List {
				for _, name := range fld.Names {
					if name.Name == "Orchestrator" && p != "configs/schema.go" {
						t.Errorf("%s: another struct has a field named Orchestrator: TestNothingOutsideConfigsWritesContextPaths needs types to tell them apart", p)
					}
				}
				// An embedded Orchestrator would promote ContextPaths past the scan.
				if typ := fld.Type; len(fld.Names) == 0 {
					if star, ok := typ.(*ast.StarExpr); ok {
						typ = star.X
					}
					if sel, ok := typ.(*ast.SelectorExpr); ok && sel.Sel.Name == "Orchestrator" {
						t.Errorf("%s: a struct embeds %s.Orchestrator: its ContextPaths would be written past TestNothingOutsideConfigsWritesContextPaths", p, render(sel.X))
					}
				}
			}
			return true
		})
	}
}

// TestWriteScan: the scan the tests above rely on finds each way of writing, through locals
// too, and takes reads and writes of copies for what they are.
func TestWriteScan(t *testing.T) {
	tests := []struct {
		name, body string
		want       int // writes of the context-path list found
	}{
		{"the old /context rollback", `cfg.Orchestrator.ContextPaths = slices.Clip(cfg.Orchestrator.ContextPaths[:before])`, 1},
		{"an element", `st.cfg.Orchestrator.ContextPaths[i] = cp`, 1},
		{"an element's field", `cfg.Orchestrator.ContextPaths[i].Permission = "write"`, 1},
		{"a protected path", `cfg.Orchestrator.ContextPaths[0].ProtectedPaths[1] = "x"`, 1},
		{"append", `cfg.Orchestrator.ContextPaths = append(cfg.Orchestrator.ContextPaths, cp)`, 2}, // the assignment and the append
		{"append elsewhere", `other := append(cfg.Orchestrator.ContextPaths[:1], cp); _ = other`, 1},
		{"sort in place", `slices.SortFunc(cfg.Orchestrator.ContextPaths, cmp)`, 1},
		{"sort.Slice", `sort.Slice(r.cfg.Orchestrator.ContextPaths, less)`, 1},
		{"copy into", `copy(cfg.Orchestrator.ContextPaths, cps)`, 1},
		{"through a pointer to the section", `o := &cfg.Orchestrator; o.ContextPaths = nil`, 1},
		{"through a section copy's list", `o := cfg.Orchestrator; o.ContextPaths[0].Path = "x"`, 1},
		{"through the list", `cps := cfg.Orchestrator.ContextPaths; cps[0] = cp`, 1},
		{"appending to the list", `cps := cfg.Orchestrator.ContextPaths; cps = append(cps, cp)`, 1},
		{"through a pointer to an element", `p := &cfg.Orchestrator.ContextPaths[0]; p.Path = "x"`, 1},
		{"through a range value's protected paths", `for _, cp := range cfg.Orchestrator.ContextPaths { cp.ProtectedPaths[0] = "x" }`, 1},
		{"in a closure", `f := func() { cfg.Orchestrator.ContextPaths = nil }; f()`, 1},
		{"var", `var o = &cfg.Orchestrator; o.ContextPaths = nil`, 1},
		{"reads", `n := len(cfg.Orchestrator.ContextPaths); for _, cp := range cfg.Orchestrator.ContextPaths { use(cp.Path) }; use(cfg.Orchestrator.ContextPaths[n-1])`, 0},
		{"a copy of the list", `cps := slices.Clone(cfg.Orchestrator.ContextPaths); cps[0] = cp; cps = append(cps, cp)`, 0},
		{"a range value's own fields", `for _, cp := range cfg.Orchestrator.ContextPaths { cp.Path = "x"; use(cp) }`, 0},
		{"a section copy's own field", `o := cfg.Orchestrator; o.ContextPaths = nil`, 0},
		{"the local, not the list", `cps := cfg.Orchestrator.ContextPaths; cps = nil`, 0},
		{"Resolve's result", `next, err := configs.Resolve(st.cfg, wd, cps...); st.cfg = next`, 0},
		{"another field", `cfg.Orchestrator.MaxCostUSD = 3; t.ContextPaths = nil`, 0},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\nfunc f() {\n"+tt.body+"\n}\n", parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := writesIn(fset, f, contextPathList); len(got) != tt.want {
			t.Errorf("%s: found %d writes %v, want %d", tt.name, len(got), got, tt.want)
		}
	}

	// Functions that change the *Config they are given, as AddContextPaths did.
	src := `package configs
func (c *Config) AddContextPaths(baseDir string, cps ...ContextPath) error {
	for _, cp := range cps {
		replaced := false
		for i := range c.Orchestrator.ContextPaths {
			if c.Orchestrator.ContextPaths[i].Path == cp.Path {
				c.Orchestrator.ContextPaths[i], replaced = cp, true
			}
		}
		if !replaced {
			c.Orchestrator.ContextPaths = append(c.Orchestrator.ContextPaths, cp)
		}
	}
	return nil
}
func (c *Config) SetModel(m string) { a := &c.Agents[0]; a.Backend.Model = m }
func (c *Config) Grow() { agents := c.Agents; agents[0].ID = "x" }
func (c *Config) Calls() { c.relocate() }
func (c *Config) relocate() { o := &c.Orchestrator; o.SnapshotStorage = "x" }
func Apply(cfg *Config) { helper(cfg) }
func helper(cfg *Config) { cfg.Env["K"] = "v" }
func Resolve(loaded *Config, extra ...ContextPath) *Config {
	out := deepCopy(loaded)
	out.Orchestrator.ContextPaths = append(out.Orchestrator.ContextPaths, extra...)
	return out
}
func (c *Config) Redacted() *Config {
	out := deepCopy(c)
	for _, a := range c.Agents {
		a.Backend.APIKey = "x"
		out.Agents = append(out.Agents, a)
	}
	return out
}
func (c *Config) Shallow() *Config {
	cp := *c
	cp.Agents = nil
	cp.Agents = append(cp.Agents, Agent{})
	return &cp
}
func (c *Config) Reads() int { n := len(c.Agents); c2 := c; _ = c2.Env; return n }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "configs.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := changesConfig(fset, []*ast.File{f})
	var names []string
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	// Shallow is counted: a struct copy *c shares c's slices, and the scan does not follow the
	// order of statements to see that cp.Agents was replaced before the append (it errs on the
	// side of a write; a copy made by deepCopy shares nothing and is not followed).
	want := []string{"(*Config).AddContextPaths", "(*Config).Calls", "(*Config).Grow", "(*Config).SetModel", "(*Config).Shallow", "(*Config).relocate", "Apply", "helper"}
	if !slices.Equal(names, want) {
		t.Errorf("changesConfig = %v\nwant %v", got, want)
	}
}
