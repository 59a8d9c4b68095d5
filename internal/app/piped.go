package app

import "fmt"

// turnSeparator is the line printed on stdout between the answers of successive turns when
// interactive mode reads a piped stdin (one task per line), so a script can split the answers:
// `--- turn N ---` before the answer of turn N (N counts the turns of this invocation), when an
// answer was printed before it. A turn that prints no answer (cancelled) prints no separator.
const turnSeparator = "--- turn %d ---\n"

// separateTurn prints turnSeparator before turn t's answer when an earlier answer of this
// invocation is already on stdout and stdin is piped, and counts the answer.
func separateTurn(opts *RunOptions, st *runState, t *Turn) {
	if opts.Question == "" && !opts.IO.StdinTTY && st.answers > 0 {
		fmt.Fprintf(opts.IO.Out, turnSeparator, t.Number)
	}
	st.answers++
}
