package orchestrator

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/permissions"
)

// typedExternal is an MCP server stand-in whose results carry only typed fields: their Content
// is not JSON, so nothing can be learnt from it by parsing.
type typedExternal struct{ project, outside string }

func (e typedExternal) Tools() []filesystem.Tool {
	return []filesystem.Tool{
		{Name: "refuse", Parameters: map[string]any{"type": "object"}},
		{Name: "deliver", Parameters: map[string]any{"type": "object"}},
	}
}

func (e typedExternal) Call(_ context.Context, name string, _ map[string]any) filesystem.Result {
	if name == "refuse" {
		return filesystem.Result{Content: "opaque refusal", IsError: true, Message: "refused by the test server",
			Denied: &permissions.Decision{Rule: "test-rule", Reason: "refused by the test server"}}
	}
	return filesystem.Result{Content: "opaque success", Changes: []changes.Change{
		{Path: filepath.Join(e.project, "out.txt"), Op: changes.Created},
		{Path: filepath.Join(e.project, "index.html"), Op: changes.Modified},
		{Path: filepath.Join(e.project, "old.txt"), Op: changes.Deleted},
		{Path: filepath.Join(e.outside, "elsewhere.txt"), Op: changes.Created},
	}}
}

// The orchestrator learns whether a call was denied, its message and what it changed from the
// result's typed fields (Denied, Message, Changes), never from its content: the events carry
// them to the displays, and Result.Delivered lists the created or modified paths inside context
// paths.
func TestTypedResultsDriveEventsAndDelivery(t *testing.T) {
	fh := newFileHarness(t, "solo")
	ext := typedExternal{project: fh.project, outside: filepath.Join(fh.base, "outside")}
	fh.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final() && c.lastMessage().Role == "user":
			return &backends.Response{ToolCalls: []backends.ToolCall{call("d1", "mcp__srv__deliver", map[string]string{})}}, nil
		case c.final():
			return textResp("delivered"), nil
		case c.n == 0:
			return &backends.Response{ToolCalls: []backends.ToolCall{call("r1", "mcp__srv__refuse", map[string]string{})}}, nil
		default:
			return answerResp("the answer"), nil
		}
	}
	o := fh.options(context.Background())
	o.External = func(context.Context, configs.Agent) map[string]filesystem.External {
		return map[string]filesystem.External{"srv": ext}
	}
	res, err := fh.runOptions(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(fh.project, "index.html"), filepath.Join(fh.project, "out.txt")}
	if !slices.Equal(res.Delivered, want) {
		t.Errorf("Delivered = %v, want %v", res.Delivered, want)
	}
	var refused, delivered *Event
	for _, ev := range fh.ev.of(EventToolResult, "solo") {
		switch ev.Tool {
		case "mcp__srv__refuse":
			refused = &ev
		case "mcp__srv__deliver":
			delivered = &ev
		}
	}
	if refused == nil || !refused.Denied || refused.Rule != "test-rule" || !refused.IsError || refused.Text != "refused by the test server" {
		t.Errorf("refusal event = %+v", refused)
	}
	if delivered == nil || delivered.Denied || delivered.IsError || len(delivered.Changes) != 4 {
		t.Errorf("delivery event = %+v", delivered)
	}
	// The model still gets the content.
	if m, ok := toolResult(fh.rec.get("solo"), "r1"); !ok || m.Content != "opaque refusal" || !m.IsError {
		t.Errorf("result sent to the model = %+v", m)
	}
}

// A result cut to maxToolResultBytes keeps its typed fields.
func TestCapResultKeepsTypedFields(t *testing.T) {
	in := filesystem.Result{Content: strings.Repeat("x", maxToolResultBytes+1), IsError: true, Message: "m",
		Denied: &permissions.Decision{Rule: "r"}, Changes: []changes.Change{{Path: "/p", Op: changes.Created}}}
	out := capResult(in)
	if !strings.Contains(out.Content, `"truncated"`) || !json.Valid([]byte(out.Content)) {
		t.Errorf("content not capped: %.100s", out.Content)
	}
	if out.Message != "m" || out.Denied != in.Denied || len(out.Changes) != 1 || !out.IsError {
		t.Errorf("capResult lost typed fields: %q %v %v %v", out.Message, out.Denied, out.Changes, out.IsError)
	}
}
