//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const inheritEnv = "MASSGEN_TEST_INHERITED_FD"

// TestInheritedDescriptors: a descriptor massgen's parent left open (here a writable file
// outside every root, passed as this test binary's descriptor 3) reaches no command, in any
// mode: no sandbox governs a descriptor already open.
func TestInheritedDescriptors(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "inherited-marker")
	f, err := os.Create(marker)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run", "^TestInheritedDescriptorsChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), inheritEnv+"="+marker)
	cmd.ExtraFiles = []*os.File{f} // descriptor 3 of the child, not close-on-exec
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CHILD-OK") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(marker); len(b) != 0 {
		t.Errorf("a command wrote through the inherited descriptor: %q", b)
	}
}

// TestInheritedDescriptorsChild runs in the child of TestInheritedDescriptors: its TestMain
// called MaybeRunHelper, as massgen's main does.
func TestInheritedDescriptorsChild(t *testing.T) {
	marker := os.Getenv(inheritEnv)
	if marker == "" {
		t.Skip("run by TestInheritedDescriptors")
	}
	if got, err := os.Readlink("/proc/self/fd/3"); err != nil || got != marker {
		t.Fatalf("descriptor 3 is %q (%v), want the inherited %s", got, err, marker)
	}
	f := newFixture(t)
	for _, mode := range append([]Mode{ModeNone}, modes(t)...) {
		t.Run(string(mode), func(t *testing.T) {
			// The shell's descriptor 3, if it had one, is the inherited file: write to it.
			res := run(t, mode, f.pol, f.ws, `echo escaped >&3 2>/dev/null; echo done`)
			if !strings.Contains(res.Stdout, "done") {
				t.Fatalf("%+v", res)
			}
		})
	}
	os.Stdout.WriteString("CHILD-OK\n")
}
