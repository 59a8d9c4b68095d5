package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/configs"
)

// A context path given as a link is resolved once, when the agent's environment is built: the
// link retargeted afterwards (here during coordination, before the final role's tools exist)
// moves neither what the final agent may write nor what delivery reports. Before issue 21's
// move 4 the final role's policy and delivery resolved the link again and followed it to the
// new target.
func TestContextLinkRetargetedAfterBuildDeliversToTheOriginal(t *testing.T) {
	fh := newFileHarness(t, "solo")
	link, decoy := filepath.Join(fh.base, "ctxlink"), filepath.Join(fh.base, "decoy")
	mustMkdir(t, decoy)
	if err := os.Symlink(fh.project, link); err != nil {
		t.Fatal(err)
	}
	fh.cfg.Orchestrator.ContextPaths = []configs.ContextPath{{Path: link, Permission: "write"}}
	retarget := func() {
		tmp := link + ".new"
		if err := os.Symlink(decoy, tmp); err != nil {
			t.Error(err)
			return
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Error(err)
		}
	}
	fh.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final() && c.lastMessage().Role == "user":
			return &backends.Response{ToolCalls: []backends.ToolCall{
				writeCall("f1", filepath.Join(fh.project, "z.txt"), "to the original"),
				writeCall("f2", filepath.Join(link, "y.txt"), "through the link"),
				writeCall("f3", filepath.Join(decoy, "x.txt"), "to the new target"),
			}}, nil
		case c.final():
			return textResp("delivered"), nil
		case c.n == 0:
			retarget() // the environment is built: the link now leads elsewhere
			return answerResp("the answer"), nil
		default:
			return answerResp("the answer"), nil
		}
	}
	res, err := fh.runOptions(context.Background(), fh.options(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(fh.project, "z.txt")); string(got) != "to the original" {
		t.Errorf("z.txt in the original target = %q (%v)", got, err)
	}
	for _, f := range []string{"x.txt", "y.txt"} {
		if exists(filepath.Join(decoy, f)) {
			t.Errorf("the final agent wrote %s into the link's new target", f)
		}
	}
	if want := []string{filepath.Join(fh.project, "z.txt")}; !slices.Equal(res.Delivered, want) {
		t.Errorf("Delivered = %v, want %v", res.Delivered, want)
	}
}
