//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRedteamPolicyShapes: policies seen in real layouts run in every sandbox: a hidden path
// outside every root (another agent's workspace, the logs) and a writable root nested in a
// read-only (Keep) path of another writable root (the workspace in <project>/.massgen/).
func TestRedteamPolicyShapes(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			base := t.TempDir()
			proj := filepath.Join(base, "proj")
			ws := filepath.Join(proj, ".massgen", "workspaces", "a")
			other := filepath.Join(proj, ".massgen", "workspaces", "b")
			logs := filepath.Join(base, "elsewhere", "logs")
			for _, d := range []string{ws, other, logs, filepath.Join(proj, "src")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(t, filepath.Join(other, "b.txt"), "private")
			mustWrite(t, filepath.Join(proj, ".massgen", "state"), "state")
			pol := Policy{Write: []string{proj, ws}, Keep: []string{filepath.Join(proj, ".massgen")}, Hide: []string{other, logs}}
			res := run(t, mode, pol, ws, "echo a > a.txt && cat a.txt && echo p > ../../../src/p.txt")
			if res.ExitCode != 0 || res.Stdout != "a\n" {
				t.Fatalf("nested writable workspace: %+v", res)
			}
			for _, c := range []string{"echo x > ../../state", "echo x > ../b/b.txt", "cat ../b/b.txt", "mkdir ../c"} {
				if res := run(t, mode, pol, ws, c); res.ExitCode == 0 {
					t.Errorf("%q succeeded: %+v", c, res)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(proj, ".massgen", "state")); string(b) != "state" {
				t.Errorf("Keep path written: %q", b)
			}
		})
	}
}
