package app

import (
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/orchestrator"
	"github.com/massgen-go/massgen/permissions"
)

func TestDeniedChanges(t *testing.T) {
	var d DeniedChanges
	for _, ev := range []orchestrator.Event{
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseFinal, Denied: true, Tool: "write_file"},
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseFinal, Denied: true, Tool: "edit_file"},
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseFinal, Denied: true, Tool: "delete_file"},
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseFinal, Denied: true, Tool: "execute_command"},
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseFinal, Denied: true, Tool: "mcp__filesystem__write_file"},
		// Not counted: a read, coordination, the user's own refusal, an allowed call.
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseFinal, Denied: true, Tool: "read_file"},
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseCoordination, Denied: true, Tool: "write_file"},
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseFinal, Denied: true, Tool: "write_file", Rule: string(permissions.RuleUserDenied)},
		{Kind: orchestrator.EventToolResult, Phase: orchestrator.PhaseFinal, Tool: "write_file"},
	} {
		d.noteDenial(ev)
	}
	if want := (DeniedChanges{Writes: 3, Deletes: 1, Commands: 1}); d != want {
		t.Fatalf("counted %+v, want %+v", d, want)
	}
	if got := d.String(); got != "3 writes, 1 delete and 1 command" {
		t.Errorf("String() = %q", got)
	}
	cfg := &configs.Config{}
	if got := filesLine(cfg, DeniedChanges{Writes: 3}, nil); got != "Final agent: 3 writes denied, no file changed; see `massgen logs` (no context path was shared: --context PATH)\n" {
		t.Errorf("filesLine = %q", got)
	}
	if got := filesLine(cfg, DeniedChanges{}, nil); got != "" {
		t.Errorf("no context path, nothing tried: %q", got)
	}
	cfg.Orchestrator.ContextPaths = []configs.ContextPath{{Path: "/p", Permission: "write"}}
	if got := filesLine(cfg, DeniedChanges{Deletes: 1}, nil); got != "Final agent: 1 delete denied, no file changed; see `massgen logs`\n" {
		t.Errorf("filesLine = %q", got)
	}
	if got := filesLine(cfg, DeniedChanges{}, nil); got != "No file changed in context paths.\n" {
		t.Errorf("writable context path, nothing changed: %q", got)
	}
}

func TestPromptCommand(t *testing.T) {
	for in, want := range map[string]string{"help": "/help", "HELP": "/help", "exit": "/quit", "quit": "/quit", "clear": "clear", "fix the bug": "fix the bug"} {
		if got := promptCommand(in); got != want {
			t.Errorf("promptCommand(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{"summarize": true, "fix it": false, "": false} {
		if oneWord(in) != want {
			t.Errorf("oneWord(%q) = %v", in, !want)
		}
	}
}
