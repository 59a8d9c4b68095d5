package shellcmd

import "testing"

// benchCommand is BenchmarkDecideCommand's command line (permissions/bench_test.go).
const benchCommand = "cd sub && cat ../a.txt | grep x > out.txt && cp out.txt /project/src/"

// BenchmarkAnalyze measures the analysis of one command line alone (no filesystem).
func BenchmarkAnalyze(b *testing.B) {
	for b.Loop() {
		if _, err := Analyze(benchCommand, "", true); err != nil {
			b.Fatal(err)
		}
	}
}
