package customtools

import (
	"context"
	"testing"
)

// BenchmarkCall is one custom tool call: a python3 process in the command sandbox, import of
// the file, the call, the answer.
func BenchmarkCall(b *testing.B) {
	needSandbox(b)
	f := newFixture(b, "        - {path: tooldir/tools.py, function: plain}\n")
	p := f.provider(b, Options{})
	args := map[string]any{"word": "ab"}
	b.ResetTimer()
	for b.Loop() {
		if r := p.Call(context.Background(), "custom_tool__plain", args, f.sb); r.IsError {
			b.Fatal(r.Content)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/call")
}

// BenchmarkDescribe reads a file's eight functions (what a run does once per file).
func BenchmarkDescribe(b *testing.B) {
	needSandbox(b)
	f := newFixture(b, allTools)
	for b.Loop() {
		f.provider(b, Options{Cache: NewCache()})
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/file")
}
