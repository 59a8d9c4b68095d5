package shellcmd

import (
	"errors"
	"testing"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// FuzzAnalyze: whatever the command, Analyze returns (never panics), lists a bounded number of
// paths, and without the sandbox it judges at least what it judges with it: every path it finds
// with the sandbox it finds without, with the same or a stronger access.
func FuzzAnalyze(f *testing.F) {
	for _, p := range programs {
		for _, ex := range append(p.match, p.notMatch...) {
			f.Add(ex.cmd, "")
		}
	}
	f.Add("cd sub && cat a | tee b 2>&1 > /dev/null", "w")
	f.Add("for f in *.go; do sed -i s/a/b/ \"$f\"; done", "")
	f.Add("echo {a,b}{1..3} > sub/{x,y}", "")
	f.Add("find . -exec sh -c 'rm \"$1\"' _ {} ;", "")
	f.Fuzz(func(t *testing.T, cmd, workDir string) {
		loose, lerr := Analyze(cmd, workDir, false)
		strict, serr := Analyze(cmd, workDir, true)
		if (lerr == nil) != (serr == nil) || errors.Is(lerr, ErrDangerous) != errors.Is(serr, ErrDangerous) {
			t.Fatalf("%q: errors differ with and without the sandbox: %v / %v", cmd, lerr, serr)
		}
		if lerr != nil {
			return
		}
		for _, a := range []*Analysis{loose, strict} {
			if len(a.Paths) > 4*MaxWords+1 || len(a.Dynamic) > MaxNodes || len(a.Inline) > MaxNodes {
				t.Fatalf("%q: %d paths, %d dynamic, %d inline", cmd, len(a.Paths), len(a.Dynamic), len(a.Inline))
			}
		}
		strongest := map[string]toolargs.Access{}
		for _, p := range strict.Paths {
			if got, ok := strongest[p.Path]; !ok || got == toolargs.Read {
				strongest[p.Path] = p.Access
			}
		}
		for _, p := range loose.Paths {
			got, ok := strongest[p.Path]
			if !ok || (p.Access != toolargs.Read && got == toolargs.Read) {
				t.Fatalf("%q: %s %s with the sandbox, %v without", cmd, p.Path, p.Access, got)
			}
		}
	})
}
