package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// BenchmarkToolSummary measures the summary made for every tool call's events.
func BenchmarkToolSummary(b *testing.B) {
	a := &agent{workspace: "/p/.massgen/workspaces/workspace1", tempDir: "/p/.massgen/temp_workspaces/a"}
	tools := filesystem.Builtins()
	for _, c := range []struct{ name, tool, args string }{
		{"write_file_10KB", "write_file", `{"path":"/p/.massgen/workspaces/workspace1/index.html","content":"` + strings.Repeat("x", 10<<10) + `"}`},
		{"execute_command", "execute_command", `{"command":"npm test -- --watch=false"}`},
		{"mcp_tool", "mcp__weather__forecast", `{"city":"Paris","days":3,"units":{"t":"c"}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			raw := json.RawMessage(c.args)
			for b.Loop() {
				// What every call pays for its summary: the arguments decoded (once: the call
				// reads the same map), then summarised.
				_ = tools.Summary(c.tool, tooldecl.Decode(raw), a.shortPath)
			}
		})
	}
}

// BenchmarkTextDelta measures one streamed delta through the text stream when it is coalesced
// (the common case: no event emitted).
func BenchmarkTextDelta(b *testing.B) {
	s, _, done := newTestStream()
	defer done()
	defer s.close()
	s.onEvent(backends.Event{Kind: backends.EventTextDelta, Text: "first\n"}) // the first is reported at once
	ev := backends.Event{Kind: backends.EventTextDelta, Text: "token "}
	nl := backends.Event{Kind: backends.EventTextDelta, Text: "end\n"}
	i := 0
	for b.Loop() {
		if i++; i%20 == 0 {
			s.onEvent(nl)
		} else {
			s.onEvent(ev)
		}
	}
}
