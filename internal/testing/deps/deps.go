// Package deps checks in tests which of the module's packages a package depends on.
package deps

import (
	"os/exec"
	"strings"
	"testing"
)

// Module is the module path the package names below are relative to.
const Module = "github.com/massgen-go/massgen/"

// Forbid fails t when the package in the current directory (pkg, relative to Module) depends,
// directly or not, on one of forbidden (or a package below one) when built for linux, darwin or
// windows. It skips when there is no go command to ask.
func Forbid(t *testing.T, pkg string, forbidden []string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the package's dependencies")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=amd64")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", goos, err)
		}
		list := strings.Fields(string(out))
		if len(list) == 0 || list[len(list)-1] != Module+pkg {
			t.Fatalf("go list (%s) did not list the package itself last: %q", goos, list)
		}
		for _, d := range list {
			for _, f := range forbidden {
				if d == Module+f || strings.HasPrefix(d, Module+f+"/") {
					t.Errorf("%s: %s imports %s", goos, pkg, d)
				}
			}
		}
	}
}
