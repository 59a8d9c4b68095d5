package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureDocNamesEveryPackage: docs/architecture.md names every package of the tree,
// and every package it names exists (a move that forgets the floor plan fails here).
func TestArchitectureDocNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	// A package row: | `dir/` | job |, or the root's | `.` (`main.go`) | job |.
	row := regexp.MustCompile("(?m)^\\| `([^`]+)`")
	named := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		named[strings.TrimSuffix(m[1], "/")] = true
	}
	var pkgs []string
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			dir := filepath.ToSlash(filepath.Dir(p))
			if !slices.Contains(pkgs, dir) {
				pkgs = append(pkgs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if !named[p] {
			t.Errorf("package %s is not on the floor plan (docs/architecture.md)", p)
		}
	}
	for n := range named {
		if !slices.Contains(pkgs, n) {
			t.Errorf("docs/architecture.md names %s, which is not a package of the tree", n)
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages: %v", len(pkgs), pkgs)
	}
}
