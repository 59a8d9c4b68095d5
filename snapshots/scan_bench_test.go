package snapshots

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/safefs"
)

// BenchmarkScan: listing the benchmark workspace (10,000 files in 100 directories) with every
// entry's stat, what an unchanged save costs beyond comparing stats.
func BenchmarkScan(b *testing.B) {
	root, err := safefs.OpenDirPath(benchWorkspace(b))
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	for b.Loop() {
		ents, err := scan(context.Background(), root, zap.NewNop())
		if err != nil || len(ents) < benchDirs*benchPerDir {
			b.Fatalf("scan: %d entries, %v", len(ents), err)
		}
	}
}
