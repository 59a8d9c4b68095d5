package orchestrator

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// An agent's MCP server that cannot start is reported on the event stream, and the agent (here
// one without a workspace, whose servers start too) goes on without it.
func TestMCPServerThatFailsToStartIsAnErrorEvent(t *testing.T) {
	dir := t.TempDir()
	cfg := &configs.Config{BaseDir: dir, Agents: []configs.Agent{{ID: "solo", Backend: configs.Backend{
		Type: "scripted",
		Script: []configs.ScriptStep{{ToolCalls: []configs.ScriptToolCall{
			{Name: ToolNewAnswer, Args: map[string]any{"content": "done"}},
		}}},
		MCPServers: []configs.MCPServer{{Name: "gone", Command: filepath.Join(dir, "no-such-server")}},
	}}}}
	var evs events
	stream := evs.stream()
	res, err := Run(t.Context(), Options{Config: cfg, Task: "t", Events: stream})
	evs.finish(stream)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalAnswer == "" {
		t.Error("no final answer")
	}
	if errs := evs.of(EventError, ""); len(errs) != 1 || errs[0].Agent != "solo" || !strings.Contains(errs[0].Text, `mcp server "gone"`) {
		t.Errorf("error events: %+v", errs)
	}
}
