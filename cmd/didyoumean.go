package cmd

import (
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/fuzzy"
)

// checkCommandTypo refuses a one-word QUESTION that is a small typo of a command name
// (`massgen versoin`, `massgen helpp`), which would otherwise start a paid run with that word as
// the task. A word after `--` is always a task (`massgen -c x.yaml -- refactor`).
func checkCommandTypo(cmd *cobra.Command, question string) error {
	if cmd.ArgsLenAtDash() == 0 || strings.ContainsFunc(question, unicode.IsSpace) {
		return nil
	}
	if name := commandLike(cmd.Root(), question); name != "" {
		return cmdutil.FlagErrorf("%q is not a command: did you mean %q? (massgen %s --help)\n"+
			"To run it as a one-word task, put it after --:  massgen [flags] -- %s", question, name, name, question)
	}
	return nil
}

// commandLike returns the command (or alias) of root that word is one typo away from (two for
// words longer than five letters), or "". The limit is tighter than for config keys: a real
// one-word task ("hello") must not look like a command ("help").
func commandLike(root *cobra.Command, word string) string {
	word = strings.ToLower(word)
	limit := 1
	if len([]rune(word)) > 5 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range root.Commands() {
		for _, name := range append([]string{c.Name()}, c.Aliases...) {
			if d := fuzzy.Distance(word, strings.ToLower(name)); d < bestD {
				best, bestD = name, d
			}
		}
	}
	return best
}
