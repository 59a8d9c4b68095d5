package permissions

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDecide measures one decision with N context paths of 100 protected paths each: the
// cost must not grow with N (managed paths are found by map lookups over the candidate's
// ancestors, not by scanning a list).
func BenchmarkDecide(b *testing.B) { benchDecide(b, New) }

// BenchmarkDecideMemo is BenchmarkDecide with memoized stat calls (NewSnapshot): the policy's
// own CPU cost, without the syscalls that dominate a live decision.
func BenchmarkDecideMemo(b *testing.B) { benchDecide(b, NewSnapshot) }

func benchDecide(b *testing.B, newPolicy func(Spec) (*Policy, error)) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("paths=%d", n), func(b *testing.B) {
			root, err := filepath.EvalSymlinks(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			ws := filepath.Join(root, "ws")
			target := filepath.Join(root, "contexts", fmt.Sprintf("ctx_%d", n/2))
			for _, d := range []string{ws, filepath.Join(target, "src")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			s := Spec{Agent: "a", Role: Final, Workspace: ws}
			for i := 0; i < n; i++ {
				cp := ContextPath{Path: filepath.Join(root, "contexts", fmt.Sprintf("ctx_%d", i)), Write: true}
				for j := 0; j < 100; j++ {
					cp.Protected = append(cp.Protected, filepath.Join(cp.Path, fmt.Sprintf("protected_%d", j)))
				}
				s.ContextPaths = append(s.ContextPaths, cp)
			}
			p, err := newPolicy(s)
			if err != nil {
				b.Fatal(err)
			}
			allowed := Request{Tool: "write_file", Args: map[string]any{"path": filepath.Join(target, "src", "main.go"), "content": "x"}}
			denied := Request{Tool: "write_file", Args: map[string]any{"path": filepath.Join(target, "protected_7", "x"), "content": "x"}}
			if d := p.Decide(allowed); !d.Allow {
				b.Fatalf("setup: %s", d.Reason)
			}
			if d := p.Decide(denied); d.Allow || d.Rule != "protected-path" {
				b.Fatalf("setup: %+v", d)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					p.Decide(allowed)
				} else {
					p.Decide(denied)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// BenchmarkDecideCommand measures a parsed command decision.
func BenchmarkDecideCommand(b *testing.B) {
	tr := newTree(b)
	p := mustPolicy(b, tr.spec(Final))
	r := Request{Tool: "execute_command", Args: map[string]any{"command": "cd sub && cat ../a.txt | grep x > out.txt && cp out.txt " + tr.p("project/src/")}}
	if d := p.Decide(r); !d.Allow {
		b.Fatal(d.Reason)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Decide(r)
	}
}
