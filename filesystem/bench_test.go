package filesystem

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/permissions"
)

// BenchmarkToolCall: a permission-checked, escape-proof tool call end to end.
func BenchmarkToolCall(b *testing.B) {
	e := newEnv(b, permissions.Final)
	write(b, filepath.Join(e.ws, "a.txt"), "hello\n")
	calls := []struct {
		name string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "a.txt"}},
		{"write_file", map[string]any{"path": filepath.Join(e.proj, "out.txt"), "content": "x"}},
		{"list_directory", map[string]any{"path": e.proj}},
	}
	for _, c := range calls {
		raw, _ := json.Marshal(c.args)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if res := e.ts.Call(context.Background(), c.name, raw); res.IsError {
					b.Fatal(res.Content)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// BenchmarkDecodeOnce: what a run pays for one write_file call of 256 KiB, summary included,
// with the arguments decoded once for the summary and the call (as the orchestrator does) and
// decoded again by the call (as Toolset.Call does, and as the run did before).
func BenchmarkDecodeOnce(b *testing.B) {
	e := newEnv(b, permissions.Final)
	raw, _ := json.Marshal(map[string]any{"path": "big.txt", "content": strings.Repeat("x", 256<<10)})
	tools := Builtins()
	for _, c := range []struct {
		name string
		call func() Result
	}{
		{"once", func() Result {
			a := tooldecl.Decode(raw)
			_ = tools.Summary("write_file", a, nil)
			return e.ts.CallArgs(context.Background(), "write_file", a)
		}},
		{"twice", func() Result {
			_ = tools.Summary("write_file", tooldecl.Decode(raw), nil)
			return e.ts.Call(context.Background(), "write_file", raw)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if res := c.call(); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}

// BenchmarkSandboxPolicy: what each command pays to compute its sandbox policy (the roots, the
// read-only paths found under writable roots, private paths).
func BenchmarkSandboxPolicy(b *testing.B) {
	e := newEnv(b, permissions.Final)
	for b.Loop() {
		if p := e.ts.sandboxPolicy(); len(p.Write) == 0 {
			b.Fatal("no writable root")
		}
	}
}
