package cmd

import "fmt"

// turnSeparator is the line printed on stdout before the answer of every turn after the first
// when interactive mode reads a piped stdin (one task per line), so a script can split the
// answers: `--- turn 2 ---`, `--- turn 3 ---`, ... (N counts the turns of this invocation).
const turnSeparator = "--- turn %d ---\n"

// separateTurn prints turnSeparator before turn t's answer when several piped tasks share stdout.
func separateTurn(opts *RunOptions, t *Turn) {
	if opts.Question == "" && !opts.IO.StdinTTY && t.Number > 1 {
		fmt.Fprintf(opts.IO.Out, turnSeparator, t.Number)
	}
}
