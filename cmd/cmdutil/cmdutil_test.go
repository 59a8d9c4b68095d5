package cmdutil

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodeOf(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"plain error", base, ExitFailure},
		{"with code", WithCode(ExitUsage, base), ExitUsage},
		{"wrapped with code", fmt.Errorf("ctx: %w", WithCode(ExitCanceled, base)), ExitCanceled},
		{"silent", Silent(ExitUsage), ExitUsage},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("%s: CodeOf = %d, want %d", tt.name, got, tt.want)
		}
	}
	if !errors.Is(WithCode(2, base), base) {
		t.Error("WithCode must keep the cause for errors.Is")
	}
	if Silent(2).Error() != "exit 2" || WithCode(1, base).Error() != "boom" {
		t.Error("ExitError messages")
	}
}

func TestTestStreams(t *testing.T) {
	ios, out, errOut := TestStreams("in")
	fmt.Fprint(ios.Out, "o")
	fmt.Fprint(ios.ErrOut, "e")
	buf := make([]byte, 2)
	n, _ := ios.In.Read(buf)
	if out.String() != "o" || errOut.String() != "e" || string(buf[:n]) != "in" || ios.StdinTTY {
		t.Errorf("streams: %q %q %q", out, errOut, buf[:n])
	}
}
