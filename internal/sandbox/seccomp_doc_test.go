//go:build linux

package sandbox

import (
	"os"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// TestDeniedCallsDocumented: docs/tools.md lists every system call the filter refuses.
func TestDeniedCallsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "### What each mode blocks, and why")
	section, _, _ = strings.Cut(section, "\n### ")
	for _, c := range confine.DeniedCalls() {
		if !strings.Contains(section, "`"+c.Name+"`") {
			t.Errorf("docs/tools.md (What each mode blocks) does not list %s", c.Name)
		}
	}
}
