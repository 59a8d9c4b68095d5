package permconfig

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/filesystem"
)

// A project rules file is parsed before the user approved it, and an agent may write one: a
// "billion laughs" file (hooks merging the level below nine times, nine levels) is refused
// with its file and line, not expanded.
func TestProjectRulesAliasBombRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("hooks:\n  pre_tool_use:\n    - &l0 {command: x}\n")
	for l := 1; l < 9; l++ {
		fmt.Fprintf(&b, "    - &l%d {%s}\n", l, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("<<: *l%d, ", l-1), 9), ", "))
	}
	done := make(chan error, 1)
	go func() {
		_, err := ParseProjectFile("/p/.massgen/permissions.yaml", []byte(b.String()), filesystem.Table())
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "/p/.massgen/permissions.yaml:") || !strings.Contains(err.Error(), "alias *l") {
			t.Fatalf("want the alias refused naming the file, got %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("ParseProjectFile still expanding aliases after 2 minutes")
	}
}
