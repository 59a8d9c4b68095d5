package app

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/orchestrator"
)

// configRunner records the config each turn ran with.
type configRunner struct {
	sessionRunner
	configs []*configs.Config
}

func (r *configRunner) run(ctx context.Context, opts *RunOptions, t *Turn) (*orchestrator.Result, error) {
	r.configs = append(r.configs, t.Config)
	return r.sessionRunner.run(ctx, opts, t)
}

// TestContextMakesANewConfigForTheNextTurn: /context gives the next turn a new config
// (configs.Resolve) and leaves the one the turns so far ran with as they saw it; a /context
// that fails its check changes nothing.
func TestContextMakesANewConfigForTheNextTurn(t *testing.T) {
	e := newTestEnv(t, "one\n/context shared:read\n/context .:read\n/context missing-dir\ntwo\n")
	e.Write(t, "c.yaml", workspaceConfig)
	e.Write(t, "shared/readme.txt", "hi")
	rr := &configRunner{sessionRunner: sessionRunner{t: t, root: t.TempDir()}}
	opts := e.runOpts(nil)
	opts.RunTurn, opts.ConfigName, opts.Yes = rr.run, "c.yaml", true
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, e.ErrOut)
	}
	if len(rr.configs) != 2 {
		t.Fatalf("%d turns ran, want 2\nstderr:\n%s", len(rr.configs), e.ErrOut)
	}
	first := []configs.ContextPath{{Path: e.Wd, Permission: "write"}} // --yes's
	second := []configs.ContextPath{
		{Path: e.Wd, Permission: "read"}, // replaced by /context .:read
		{Path: filepath.Join(e.Wd, "shared"), Permission: "read"},
	}
	if got := rr.configs[0].Orchestrator.ContextPaths; !reflect.DeepEqual(got, first) {
		t.Errorf("turn one's config was changed after it ran: %+v, want %+v", got, first)
	}
	if got := rr.configs[1].Orchestrator.ContextPaths; !reflect.DeepEqual(got, second) {
		t.Errorf("turn two's context paths %+v, want %+v\nstderr:\n%s", got, second, e.ErrOut)
	}
	if rr.configs[0] == rr.configs[1] {
		t.Error("both turns ran with the same config value")
	}
}
