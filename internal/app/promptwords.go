package app

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"unicode"
)

// The interactive prompt knows its own words: /help, /clear, /exit (and help, exit, quit typed
// alone) are commands, never tasks; any other single word on a terminal is asked about before
// it starts a run of the agents (each model call is paid for).

// interactivePrompt is the prompt of interactive mode.
const interactivePrompt = "massgen> "

// promptCommand is the slash command a bare word at the prompt means ("help" is /help, "exit"
// and "quit" are /quit), or line itself.
func promptCommand(line string) string {
	switch strings.ToLower(line) {
	case "help", "?":
		return "/help"
	case "exit", "quit":
		return "/quit"
	}
	return line
}

// oneWord: a task of a single word (no space), which is more often a slip (a command, a
// greeting) than a task worth a run.
func oneWord(task string) bool {
	return task != "" && !strings.ContainsFunc(task, unicode.IsSpace)
}

// confirmOneWord asks, on a terminal, whether the one-word task should start a run; a word
// that is a typo of a command is named. It reads the answer the way tasks are read (the line
// editor when there is one). run is false unless the answer is y or yes.
func confirmOneWord(ctx context.Context, opts *RunOptions, st *runState, editor *lineEditor, in *bufio.Reader, word string) (run bool, err error) {
	question := fmt.Sprintf("%q is a single word: run it as a task for %s (each model call is paid)? [y/N] ", word, plural(len(st.cfg.Agents), "agent"))
	var answer string
	var ok bool
	if editor != nil {
		editor.t.SetPrompt(question)
		answer, ok, err = editor.readLine(ctx)
		editor.t.SetPrompt(interactivePrompt)
	} else {
		fmt.Fprint(opts.IO.ErrOut, question)
		answer, ok, err = readLine(ctx, in, st.maxTask)
	}
	if err != nil || !ok {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	fmt.Fprintln(opts.IO.ErrOut, "Not run. Type a longer task, or /help for the commands.")
	return false, nil
}
