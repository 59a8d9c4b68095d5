package filesystem

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

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
