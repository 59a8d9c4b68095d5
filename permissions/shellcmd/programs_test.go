package shellcmd

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// TestProgramExamples runs every entry's examples: each match gives exactly its accesses, no
// notMatch gives any of its items.
func TestProgramExamples(t *testing.T) {
	for _, p := range programs {
		t.Run(p.names[0], func(t *testing.T) {
			if len(p.match) == 0 || len(p.notMatch) == 0 {
				t.Fatalf("entry %v needs match and notMatch examples", p.names)
			}
			for _, ex := range p.match {
				if !mentions(ex.cmd, p.names) {
					t.Errorf("example %q does not run %v", ex.cmd, p.names)
				}
				if got, want := outcome(ex.cmd), items(ex.want); !slices.Equal(got, want) {
					t.Errorf("%q:\n got  %s\n want %s", ex.cmd, strings.Join(got, " "), strings.Join(want, " "))
				}
			}
			for _, ex := range p.notMatch {
				got := outcome(ex.cmd)
				for _, it := range items(ex.want) {
					if slices.Contains(got, it) {
						t.Errorf("%q gives %s, which it must not (got %s)", ex.cmd, it, strings.Join(got, " "))
					}
				}
			}
		})
	}
}

// mentions reports whether a command names one of the programs (or its family's).
func mentions(cmd string, names []string) bool {
	for _, n := range names {
		if strings.Contains(cmd, strings.TrimSuffix(n, "*")) {
			return true
		}
	}
	return false
}

// outcome is what the analysis of an example command gives, as sorted items.
func outcome(cmd string) []string {
	strict := false
	if rest, ok := strings.CutPrefix(cmd, "[strict] "); ok {
		cmd, strict = rest, true
	}
	a, err := Analyze(cmd, "", strict)
	switch {
	case errors.Is(err, ErrDangerous):
		return []string{"refused"}
	case err != nil:
		return []string{"error"}
	}
	var out []string
	for _, p := range a.Paths {
		out = append(out, p.Path+":"+p.Access.String()[:1])
	}
	if len(a.Inline) > 0 {
		out = append(out, "inline")
	}
	if len(a.Dynamic) > 0 {
		out = append(out, "dynamic")
	}
	slices.Sort(out)
	return out
}

func items(want string) []string {
	out := strings.Fields(want)
	slices.Sort(out)
	return out
}

var _ = toolargs.Read
