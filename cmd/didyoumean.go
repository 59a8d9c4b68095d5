package cmd

import (
	"fmt"
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

// forgiveSubcommands makes every command group under root (a command with subcommands) refuse
// an unknown subcommand the same way, with exit 2 and a suggestion: `massgen configs lst` says
// `unknown command "lst" for "massgen configs"; did you mean "list"?`. A group without an action
// of its own prints its help when called bare, as before. The root takes a QUESTION, so it is
// left to rootArgs and checkCommandTypo.
func forgiveSubcommands(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || !c.HasSubCommands() {
			return
		}
		own := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownSubcommand(cmd, args[0])
			}
			if own != nil {
				return own(cmd, args)
			}
			return nil
		}
		if !c.Runnable() {
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	walk(root)
}

// rootArgs is the root's argument check: at most one QUESTION. Several words whose first is a
// command's typo (`massgen confg list`) get the subcommand message instead of cobra's count.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) <= 1 {
		return nil
	}
	if name := commandLike(cmd, args[0]); name != "" {
		return unknownSubcommand(cmd, args[0])
	}
	return cmdutil.FlagErrorf("accepts at most 1 arg(s), received %d: quote a QUESTION of several words (massgen \"fix the tests\")", len(args))
}

// unknownSubcommand is the error for word given where parent expects one of its subcommands.
func unknownSubcommand(parent *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, parent.CommandPath())
	if name := subcommandLike(parent, word); name != "" {
		return cmdutil.FlagErrorf("%s; did you mean %q?", msg, name)
	}
	var names []string
	for _, c := range parent.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return cmdutil.FlagErrorf("%s (commands: %s; see %s --help)", msg, strings.Join(names, ", "), parent.CommandPath())
}

// subcommandLike is commandLike for a subcommand, where no task can be mistaken for a command:
// a unique prefix counts too (`massgen configs val` -> validate).
func subcommandLike(parent *cobra.Command, word string) string {
	if name := commandLike(parent, word); name != "" {
		return name
	}
	var match []string
	for _, c := range parent.Commands() {
		if c.IsAvailableCommand() && len(word) >= 2 && strings.HasPrefix(c.Name(), strings.ToLower(word)) {
			match = append(match, c.Name())
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	return ""
}
