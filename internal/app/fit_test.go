package app

import (
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

func TestFitSummary(t *testing.T) {
	const wd = "/home/someone/projects/a-project-with-a-long-name"
	for _, tt := range []struct {
		name, in, want string
	}{
		{"short lines stay", "Winner: alice\n", "Winner: alice\n"},
		{"paths under wd become relative", "Final workspace: " + wd + "/.massgen/workspaces/workspace1\n",
			"Final workspace: .massgen/workspaces/workspace1\n"},
		{"wd itself is .", "  " + wd + " (write)", "  . (write)"},
		{"a path ending a long line goes on its own line",
			"Saved turn 1 of session session_20261127_034348: " + wd + "/.massgen/sessions/session_20261127_034348/turn_1\n",
			"Saved turn 1 of session session_20261127_034348:\n  .massgen/sessions/session_20261127_034348/turn_1\n"},
		{"colours are left alone", "\x1b[1m" + strings.Repeat("x", 100) + "\x1b[0m", "\x1b[1m" + strings.Repeat("x", 100) + "\x1b[0m"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fitSummary(tt.in, wd, 80); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	long := "Delivered: /" + strings.Repeat("very-long-folder/", 10) + "file.txt"
	for _, l := range strings.Split(fitSummary(long, wd, 80), "\n") {
		if w := runewidth.StringWidth(l); w > 80 {
			t.Errorf("line of %d columns: %q", w, l)
		}
		if strings.Contains(l, "…") && !strings.HasSuffix(l, "file.txt") {
			t.Errorf("a cut path lost its file name: %q", l)
		}
	}
}
