package app

import (
	"context"

	"github.com/massgen-go/massgen/orchestrator"
)

// runTurn is where the orchestrator plugs into the CLI: it runs one task with t.Config (paths
// resolved, context paths checked), logging to t.Logger under t.RunDir, and returns the result
// (its final answer is printed on stdout by the caller). See orchestrate.go.
func runTurn(ctx context.Context, opts *RunOptions, t *Turn) (*orchestrator.Result, error) {
	return orchestrateTurn(ctx, opts, t)
}
