//go:build linux

package confine

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelperRefuses: this test binary, re-executed as the helper (dispatched by the package's
// init, no main involved), never runs the command when its spec is bad or its plan empty: it
// exits 126 and says why on the status pipe (fd 4).
func TestHelperRefuses(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, spec, want string
	}{
		{"not json", "{", "bad sandbox spec"},
		{"empty plan", `{"nodes":[],"status":4}`, "empty plan"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			specR, specW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			statusR, statusW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(self, HelperArg, "/bin/sh", "-c", "touch "+marker)
			cmd.ExtraFiles = []*os.File{specR, statusW} // fd 3, fd 4
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			specR.Close()
			statusW.Close()
			specW.WriteString(c.spec)
			specW.Close()
			status, _ := io.ReadAll(statusR)
			statusR.Close()
			err = cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 126 {
				t.Fatalf("helper: %v (want exit 126); stderr %q", err, stderr.String())
			}
			// A spec that cannot be read has no status pipe: the message goes to stderr.
			if got := string(status) + stderr.String(); !strings.Contains(got, c.want) {
				t.Errorf("helper said %q, want %q", got, c.want)
			}
			if _, err := os.Lstat(marker); !os.IsNotExist(err) {
				t.Errorf("the command ran: %v", err)
			}
		})
	}
}
