package cmd

import (
	"context"
	"errors"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

// runTurn is where the orchestrator plugs into the CLI: it runs one task with opts.Config
// (paths resolved, context paths checked), logging to opts.Logger under opts.RunDir, and
// returns the final answer (printed on stdout by the caller). Until the orchestrator is wired
// it stops with a clear error (exit 1).
func runTurn(ctx context.Context, opts *RunOptions, task string) (string, error) {
	return "", cmdutil.WithCode(cmdutil.ExitFailure, errors.New("not implemented yet: the orchestrator is not built"))
}
