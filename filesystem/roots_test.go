package filesystem

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/massgen-go/massgen/permissions"
)

// The command sandbox takes every root as resolved when the Policy was built: a workspace and a
// private path given as links and retargeted afterwards move neither the writable mount nor
// what is hidden (before issue 21's move 4, each command resolved them again by string, so the
// new target became writable and the real private folder visible).
func TestSandboxPolicyRootsResolvedOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	var wsLink, privLink, wsReal, privReal, decoy string
	e := newEnv(t, permissions.Final, func(s *permissions.Spec, _ *ToolsetOptions) {
		base := filepath.Dir(s.Workspace)
		wsReal, privReal, decoy = filepath.Join(base, "ws_real"), filepath.Join(base, "private_real"), filepath.Join(base, "decoy")
		for _, d := range []string{wsReal, privReal, decoy} {
			mkdir(t, d)
		}
		wsLink, privLink = filepath.Join(base, "ws_link"), filepath.Join(base, "private_link")
		for l, target := range map[string]string{wsLink: wsReal, privLink: privReal} {
			if err := os.Symlink(target, l); err != nil {
				t.Fatal(err)
			}
		}
		s.Workspace = wsLink
		s.Private = []string{privLink}
	})
	for _, l := range []string{wsLink, privLink} {
		if err := os.Remove(l); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(decoy, l); err != nil {
			t.Fatal(err)
		}
	}
	sp := e.ts.sandboxPolicy()
	for what, list := range map[string][]string{"Write": sp.Write, "Own": sp.Own, "Read": sp.Read} {
		if slices.Contains(list, decoy) {
			t.Errorf("%s = %v holds the links' new target %s", what, list, decoy)
		}
	}
	if !slices.Contains(sp.Own, wsReal) || !slices.Contains(sp.Write, wsReal) {
		t.Errorf("Own = %v, Write = %v: want the workspace as resolved at build, %s", sp.Own, sp.Write, wsReal)
	}
	if !slices.Equal(sp.Hide, []string{privReal}) {
		t.Errorf("Hide = %v, want the private path as resolved at build, %s", sp.Hide, privReal)
	}
	if got := SandboxWorkspace(e.pol); got != wsReal {
		t.Errorf("SandboxWorkspace = %s, want %s", got, wsReal)
	}
}
