package cmd

// Request from H7 (interactive sessions) to H6 (runTurn in turn.go) and H1 (run.go):
//
// To keep multi-turn sessions H7 needs, per turn, a way to pass the conversation so far and the
// previous turn's workspace INTO the orchestrator and to get the full Result OUT. Proposal (H7
// adds the fields to RunOptions itself, in its own file, unless you prefer otherwise):
//
//	opts.History  []orchestrator.Exchange // runTurn passes it as orchestrator.Options.History
//	opts.ReadOnly []string                // runTurn passes it as orchestrator.Options.ReadOnly
//	opts.LastResult *orchestrator.Result  // runTurn sets it after orchestrator.Run returns
//
// plus, for `mode: default`, runTurn passing prompt.NewAsker(prompt.AskOptions{In: opts.IO.In,
// Out: opts.IO.ErrOut, Accessible: ...}) as Options.Asker when stdin AND stderr are terminals
// (nil otherwise: asks become denies), and mcptools.NewRunner(cfg, opts.ReadOnly, warn, logger)
// .External as Options.External (Close it when the turn ends).
// This file holds no code; delete it once settled.
