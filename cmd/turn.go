package cmd

import "context"

// runTurn is where the orchestrator plugs into the CLI: it runs one task with opts.Config
// (paths resolved, context paths checked), logging to opts.Logger under opts.RunDir, and
// returns the final answer (printed on stdout by the caller). See orchestrate.go.
func runTurn(ctx context.Context, opts *RunOptions, task string) (string, error) {
	return orchestrateTurn(ctx, opts, task)
}
