package cmd

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCmdHoldsNoApplication: the top-level cmd package wires commands only. The run application
// (coordination, sessions, output) lives in internal/app, so cmd imports none of the packages
// that do that work and stays small.
func TestCmdHoldsNoApplication(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"/orchestrator", "/session", "/display", "/snapshots", "/backends", "/filesystem"}
	lines := 0
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(src, []byte("\n"))
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if strings.HasPrefix(p, "github.com/massgen-go/massgen") && strings.HasSuffix(p, bad) {
					t.Errorf("%s imports %s: that work belongs in internal/app", f, p)
				}
			}
		}
	}
	if lines >= 500 {
		t.Errorf("cmd has %d non-test lines; the run application belongs in internal/app (limit 500)", lines)
	}
}
