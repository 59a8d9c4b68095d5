package filesystem

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/permissions"
)

// BenchmarkJournalFirstChange: what keeping a path's original costs on its first change in a
// turn (every call here is a first change): an overwrite of an existing 10 KiB file (its copy
// kept) and the creation of a new file (recorded absent), with the journal against none. Since
// issue 23 the copy and the journal line are synced before the change lands. Run with
// -benchtime=Nx, N at most 2000 (the files made beforehand).
func BenchmarkJournalFirstChange(b *testing.B) {
	content := strings.Repeat("line of text\n", 800) // ~10 KiB
	for _, kind := range []string{"overwrite", "create"} {
		for _, journal := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/journal=%v", kind, journal), func(b *testing.B) {
				var opts []envOpt
				if journal {
					var j *changes.Journal
					opts = append(opts, withJournal(&j))
				}
				e := newEnv(b, permissions.Final, opts...)
				if kind == "overwrite" {
					for i := range 2000 {
						write(b, filepath.Join(e.proj, "files", fmt.Sprintf("f%d.txt", i)), "old\n")
					}
				}
				for i := 0; b.Loop(); i++ {
					p := filepath.Join(e.proj, "files", fmt.Sprintf("f%d.txt", i))
					if _, res := e.call("write_file", map[string]any{"path": p, "content": content}); res.IsError {
						b.Fatal(res.Content)
					}
				}
			})
		}
	}
}
