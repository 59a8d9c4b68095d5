package permissions

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineImports: the engine decides from a Spec and stat/readlink only. Building the Spec
// from the config (internal/agentenv/permconfig), the side effects around a decision (asks,
// hooks, the audit log: permissions/guard) and the tools (filesystem) live outside it, and it
// imports none of them, on any system massgen builds for.
func TestEngineImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the package's dependencies")
	}
	const mod = "github.com/massgen-go/massgen/"
	forbidden := []string{"configs", "filesystem", "internal/agentenv", "permissions/guard", "permissions/hooks",
		"permissions/audit", "permissions/trust"}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=amd64")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", goos, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 || deps[len(deps)-1] != mod+"permissions" {
			t.Fatalf("go list (%s) did not list the package itself last: %q", goos, deps)
		}
		for _, d := range deps {
			for _, f := range forbidden {
				if d == mod+f || strings.HasPrefix(d, mod+f+"/") {
					t.Errorf("%s: permissions imports %s", goos, d)
				}
			}
		}
	}
}
