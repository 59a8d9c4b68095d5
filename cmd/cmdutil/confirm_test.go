package cmdutil

import (
	"strings"
	"testing"
)

func TestConfirm(t *testing.T) {
	tests := []struct {
		name     string
		tty, yes bool
		in       string
		code     int // CodeOf the result
	}{
		{"--yes", false, true, "", ExitOK},
		{"no terminal", false, false, "y\n", ExitUsage},
		{"y", true, false, "y\n", ExitOK},
		{"YES", true, false, "YES\n", ExitOK},
		{"n", true, false, "n\n", ExitFailure},
		{"enter (default no)", true, false, "\n", ExitFailure},
		{"end of input", true, false, "", ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, errOut := TestStreams(tt.in)
			ios.StdinTTY, ios.StderrTTY = tt.tty, tt.tty
			err := Confirm(ios, "Delete it?", tt.yes)
			if got := CodeOf(err); got != tt.code {
				t.Errorf("exit %d (%v), want %d", got, err, tt.code)
			}
			if asked := strings.Contains(errOut.String(), "Delete it? [y/N] "); asked != (tt.tty && !tt.yes) {
				t.Errorf("asked = %v; stderr %q", asked, errOut)
			}
		})
	}
}
