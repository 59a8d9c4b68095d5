package filesystem

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/massgen-go/massgen/filesystem/sandbox"
)

const (
	defaultCommandTimeout = 60
	maxCommandTimeout     = 600
	maxCommandOutput      = 64 << 10
)

type commandResult struct {
	Command string `json:"command"`
	WorkDir string `json:"work_dir"`
	Success bool   `json:"success"`
	sandbox.Result
}

func (r commandResult) failed() bool { return !r.Success }

// sandboxPolicy is what commands may touch: the agent's roots, with protected and
// default-excluded paths under writable roots kept read-only and private paths hidden.
func (t *Toolset) sandboxPolicy() sandbox.Policy {
	var p sandbox.Policy
	for _, r := range t.pol.ReadableRoots() {
		p.Read = append(p.Read, resolveRoot(r))
	}
	for _, w := range t.pol.WritableRoots() {
		p.Write = append(p.Write, resolveRoot(w))
		for _, k := range t.pol.ExcludedUnder(w) {
			p.Keep = append(p.Keep, resolveRoot(k))
		}
	}
	for _, h := range t.pol.Spec().Private {
		p.Hide = append(p.Hide, resolveRoot(h))
	}
	return p
}

func (t *Toolset) executeCommand(ctx context.Context, c *call) (any, error) {
	command, err := c.str("command", true)
	if err != nil {
		return nil, err
	}
	wd, err := c.str("work_dir", false)
	if err != nil {
		return nil, err
	}
	timeout, err := c.integer("timeout", defaultCommandTimeout)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = defaultCommandTimeout
	}
	if timeout > maxCommandTimeout {
		timeout = maxCommandTimeout
	}
	if wd == "" {
		wd = t.pol.Spec().Workspace
		if wd == "" {
			return nil, fmt.Errorf("work_dir is required: this agent has no workspace")
		}
	}
	l, err := t.locate(wd, false)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(l.abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("work_dir %s is not a directory", l.abs)
	}
	if t.beforeUse != nil {
		t.beforeUse(l.abs)
	}
	res, err := sandbox.Run(ctx, sandbox.Options{
		Mode: t.o.Sandbox, Command: command, Dir: l.abs,
		Timeout: time.Duration(timeout) * time.Second, MaxOutput: maxCommandOutput,
		Policy: t.sandboxPolicy(),
	})
	if err != nil {
		return nil, err
	}
	return commandResult{Command: command, WorkDir: l.abs, Success: res.ExitCode == 0 && !res.TimedOut, Result: res}, nil
}
