package orchestrator

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/sandbox"
)

// A command's connections, allowed or refused by the command network's proxy, are notes of its
// tool call on the event stream (the live view shows them under the call).
func TestCommandNetworkNotes(t *testing.T) {
	if sandbox.LandlockABI() < 4 {
		t.Skip("needs Landlock's TCP rules (ABI 4)")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	h := newHarness(t, "solo")
	ws := filepath.Join(h.cfg.BaseDir, ".massgen", "workspaces", "workspace1")
	mustMkdir(t, ws)
	h.cfg.Agents[0].Backend.CWD = ws
	h.cfg.CommandSandbox = sandbox.ModeLandlock // no helper process: this test binary is not one
	h.cfg.Orchestrator.CommandNetwork = &configs.CommandNetwork{Mode: sandbox.NetworkAllowlist, AllowedDomains: []string{"pypi.org"}}
	h.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("done"), nil
		case c.n == 0:
			return &backends.Response{ToolCalls: []backends.ToolCall{
				call("c1", "execute_command", map[string]string{"command": "curl -sS --max-time 5 http://not-listed.test/"}),
			}}, nil
		default:
			return answerResp("x"), nil
		}
	}
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	notes := h.ev.of(EventToolNote, "solo")
	if len(notes) != 1 || notes[0].Text != "network: not-listed.test:80 refused" || notes[0].Tool != "execute_command" ||
		notes[0].Summary != "execute_command curl -sS --max-time 5 http://not-listed.test/" {
		t.Errorf("notes: %+v", notes)
	}
}
