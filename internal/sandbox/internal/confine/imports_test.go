package confine

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImports: the package imports only the standard library, x/sys/unix and go-landlock's
// syscall package (with its psx), so the re-executed helper, dispatched from this package's
// init, starts before the heavy packages of the binary are initialised.
func TestImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the package's dependencies")
	}
	allowed := []string{
		"github.com/massgen-go/massgen/internal/sandbox/internal/confine",
		"golang.org/x/sys/unix",
		"github.com/landlock-lsm/go-landlock/landlock/syscall",
		"kernel.org/pub/linux/libs/security/libcap/psx",
	}
	for _, arch := range []string{"amd64", "arm64", "riscv64"} {
		cmd := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(cmd.Environ(), "GOOS=linux", "GOARCH="+arch)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", arch, err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, allowed[0]) {
			t.Fatalf("go list (%s) did not list the package itself: %q", arch, deps)
		}
		for _, d := range deps {
			if !slices.Contains(allowed, d) {
				t.Errorf("linux/%s: imports %s (the helper would start after it is initialised)", arch, d)
			}
		}
	}
}
