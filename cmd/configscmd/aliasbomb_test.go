package configscmd

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// A "billion laughs" config (aliases nested nine deep, nine to a level, under the untyped
// orchestrator.coordination) is refused with exit 2 and the file and line of the alias that
// spent the budget, instead of being expanded for hours.
func TestValidateRefusesAliasBomb(t *testing.T) {
	e := newTestEnv(t)
	var b strings.Builder
	b.WriteString("agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o-mini}\norchestrator:\n  coordination:\n    bomb:\n")
	b.WriteString("      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for l := 1; l < 9; l++ {
		fmt.Fprintf(&b, "      l%d: &l%d [%s]\n", l, l, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", l-1), 9), ", "))
	}
	e.write(t, "bomb.yaml", b.String())
	for _, asJSON := range []bool{false, true} {
		done := make(chan int, 1)
		go func() { done <- e.validate([]string{"bomb.yaml"}, false, asJSON) }()
		select {
		case code := <-done:
			if code != cmdutil.ExitUsage {
				t.Fatalf("json=%v: exit %d, want 2", asJSON, code)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("validate still expanding aliases after 2 minutes")
		}
		out := e.out.String() + e.errOut.String()
		if !strings.Contains(out, "bomb.yaml") || !strings.Contains(out, "alias *l") || !strings.Contains(out, "refused") {
			t.Errorf("json=%v: output does not name the alias:\n%s", asJSON, out)
		}
		e.out.Reset()
		e.errOut.Reset()
	}
}
