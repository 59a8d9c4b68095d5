package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Confirm asks question on stderr and reads a yes/no line from stdin, for commands that remove
// what cannot be got back (`trash empty`, `sessions prune`). yes (--yes) confirms without asking.
// Without a terminal to ask on, it refuses (exit 2) rather than guess: --yes says it on purpose.
func Confirm(ios *IOStreams, question string, yes bool) error {
	if yes {
		return nil
	}
	if !ios.StdinTTY || !ios.StderrTTY {
		return FlagErrorf("%s: not confirmed, nothing removed (no terminal to ask on; pass --yes to confirm)", question)
	}
	fmt.Fprintf(ios.ErrOut, "%s [y/N] ", question)
	ans, err := readLine(ios.In)
	if err != nil {
		return WithCode(ExitFailure, fmt.Errorf("reading the answer: %w", err))
	}
	if a := strings.ToLower(strings.TrimSpace(ans)); a != "y" && a != "yes" {
		return WithCode(ExitFailure, errors.New("not confirmed: nothing removed"))
	}
	return nil
}

// readLine reads one line byte by byte, so nothing after it is taken from stdin.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 256 {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				break
			}
			b.WriteByte(buf[0])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
