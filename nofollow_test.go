package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// noFollowCalls are the system names with which code resolves a path by itself without
// following links: opening relative to a descriptor, refusing links, stat'ing or removing a
// child of a descriptor. Code that acts on a managed root (a workspace, a context path, a
// snapshot, a sweep) uses internal/safefs, the one resolve-once walker, instead of a private
// copy of that logic.
var noFollowCalls = []string{
	"O_NOFOLLOW", "O_NOFOLLOW_ANY", "O_PATH", "Openat", "Openat2", "Fstatat", "Unlinkat",
	"AT_SYMLINK_NOFOLLOW", "RESOLVE_NO_SYMLINKS", "RESOLVE_BENEATH", "FILE_FLAG_OPEN_REPARSE_POINT",
	"FILE_OPEN_REPARSE_POINT",
}

// noFollowAllowed are the packages that may use them directly, and why.
var noFollowAllowed = map[string]string{
	"internal/safefs": "the resolve-once walker itself",
	"internal/sandbox": "the sandbox plan holds an O_PATH handle for every path of the policy and " +
		"hands them to bubblewrap as descriptors (plan_linux.go, bwrap_linux.go): a tree of raw " +
		"handles shared with a child process, not a Dir; the clean-up (sweep_linux.go) walks and " +
		"removes through safefs and keeps only walkTo, O_PATH steps that pass a search-only (--x) " +
		"directory a command made, which a Dir (opened for reading) cannot",
	"internal/sandbox/internal/confine": "Landlock rules and the namespace view are built from " +
		"O_PATH handles inside the confined child (between clone and exec), where no Go library " +
		"code may run",
	"internal/launch": "opens a program or script it hashes by its already resolved real path; on " +
		"Windows it must open app-execution aliases (reparse points), which safefs refuses",
}

// TestNoPrivateNoFollowCode: only the packages in noFollowAllowed use the no-follow system calls
// directly (non-test files); a new private copy fails here, and so does an allowance no longer
// used.
func TestNoPrivateNoFollowCode(t *testing.T) {
	used := map[string][]string{} // package -> "file: name"
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "node_modules") {
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
		sys := map[string]bool{} // local names of syscall, x/sys/unix, x/sys/windows
		for _, path := range []string{"syscall", "golang.org/x/sys/unix", "golang.org/x/sys/windows"} {
			if name := importName(f, path); name != "" {
				sys[name] = true
			}
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && sys[x.Name] && slices.Contains(noFollowCalls, sel.Sel.Name) {
				used[pkg] = append(used[pkg], filepath.Base(p)+": "+x.Name+"."+sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, uses := range used {
		if _, ok := noFollowAllowed[pkg]; !ok {
			slices.Sort(uses)
			t.Errorf("%s resolves paths with its own no-follow code (%s): use internal/safefs (Resolve, Dir, WalkTree, OpenFileAt, RemoveSame...), adding what it lacks there", pkg, strings.Join(slices.Compact(uses), ", "))
		}
	}
	for pkg := range noFollowAllowed {
		if len(used[pkg]) == 0 {
			t.Errorf("%s is allowed no-follow code but has none: drop it from noFollowAllowed", pkg)
		}
	}
}
