package changes

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports: the change record knows nothing of the tools that change files, nor of the run
// that asks them to: filesystem calls it (Recorder), never the other way round, on any system
// massgen builds for. A move back (a method on the Toolset) closes the cycle this test guards.
func TestImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the package's dependencies")
	}
	const mod = "github.com/massgen-go/massgen/"
	forbidden := []string{"filesystem", "orchestrator", "permissions", "internal/agentenv", "internal/app", "session", "display", "cmd"}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=amd64")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", goos, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 || deps[len(deps)-1] != mod+"changes" {
			t.Fatalf("go list (%s) did not list the package itself last: %q", goos, deps)
		}
		for _, d := range deps {
			for _, f := range forbidden {
				if d == mod+f || strings.HasPrefix(d, mod+f+"/") {
					t.Errorf("%s: changes imports %s", goos, d)
				}
			}
		}
	}
}
