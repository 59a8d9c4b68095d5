package filesystem

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/permissions"
)

// BenchmarkJournal: what the change journal costs. write_file: one overwrite of a context-path
// file with the journal (the first keeps the original; later ones find it known) against none;
// command_inventory: the inventory and copies taken around one command in a context path of
// 1000 files of 10 KiB (10 MiB), the command itself excluded.
func BenchmarkJournal(b *testing.B) {
	content := strings.Repeat("line of text\n", 800) // ~10 KiB
	for _, journal := range []bool{false, true} {
		b.Run(fmt.Sprintf("write_file/journal=%v", journal), func(b *testing.B) {
			var opts []envOpt
			if journal {
				var j *changes.Journal
				opts = append(opts, withJournal(&j))
			}
			e := newEnv(b, permissions.Final, opts...)
			for i := 0; b.Loop(); i++ {
				p := filepath.Join(e.proj, "files", fmt.Sprintf("f%d.txt", i%1000))
				if _, res := e.call("write_file", map[string]any{"path": p, "content": content}); res.IsError {
					b.Fatal(res.Content)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
	b.Run("command_inventory/1000x10KiB", func(b *testing.B) {
		var j *changes.Journal
		e := newEnv(b, permissions.Final, withJournal(&j))
		for i := 0; i < 1000; i++ {
			write(b, filepath.Join(e.proj, "src", fmt.Sprintf("d%d", i%20), fmt.Sprintf("f%d.go", i)), content)
		}
		pol := e.ts.sandboxPolicy()
		ctx := context.Background()
		for b.Loop() {
			inv, p, note := e.ts.beforeCommand(ctx, pol)
			if inv == nil || note != "" {
				b.Fatalf("no inventory: %s", note)
			}
			e.ts.afterCommand(ctx, inv, p.Keep)
		}
		b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "files/s")
		_ = sandbox.Policy{}
	})
}
