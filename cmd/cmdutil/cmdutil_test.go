package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
	if Silent(2).Error() != Meaning(2) || Silent(77).Error() != "exit 77" || WithCode(1, base).Error() != "boom" {
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

// Usage errors are FlagErrors (exit 2) by type, whatever their text, in the whole tree.
func TestMarkUsageErrors(t *testing.T) {
	newTree := func() *cobra.Command {
		root := &cobra.Command{Use: "root", Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error { return nil }}
		leaf := &cobra.Command{Use: "leaf", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }}
		leaf.Flags().Int("n", 0, "a number")
		fails := &cobra.Command{Use: "fails", RunE: func(*cobra.Command, []string) error { return errors.New("unknown flag: not a usage error") }}
		root.AddCommand(leaf, fails)
		root.SilenceErrors, root.SilenceUsage = true, true
		MarkUsageErrors(root)
		return root
	}
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"stray"}, ExitUsage},
		{[]string{"--nope"}, ExitUsage},
		{[]string{"leaf"}, ExitUsage},
		{[]string{"leaf", "a", "b"}, ExitUsage},
		{[]string{"leaf", "--n", "x", "a"}, ExitUsage},
		{[]string{"leaf", "a"}, ExitOK},
		{[]string{"fails"}, ExitFailure}, // a message that looks like a usage error is not one
	}
	for _, tt := range tests {
		root := newTree()
		root.SetArgs(tt.args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		err := root.Execute()
		var fe *FlagError
		if got := CodeOf(err); got != tt.code || (tt.code == ExitUsage) != errors.As(err, &fe) {
			t.Errorf("%q: err %v, code %d, want %d", tt.args, err, got, tt.code)
		}
	}
	if CodeOf(fmt.Errorf("wrapped: %w", FlagErrorf("bad %s", "flag"))) != ExitUsage {
		t.Error("a wrapped FlagError must exit 2")
	}
}

func TestWorst(t *testing.T) {
	tests := []struct {
		codes []int
		want  int
	}{
		{nil, ExitOK},
		{[]int{ExitOK, ExitTimeout}, ExitTimeout},
		{[]int{ExitTimeout, ExitPartial}, ExitPartial},
		{[]int{ExitPartial, ExitTimeout}, ExitPartial},
		{[]int{ExitPartial, ExitFailure, ExitUsage}, ExitFailure},
		{[]int{ExitFailure, ExitCanceled}, ExitCanceled},
		{[]int{ExitTerminated, ExitUsage}, ExitTerminated},
		{[]int{ExitPartial, ExitHangup}, ExitHangup},
		{[]int{ExitBusy, ExitPartial}, ExitBusy},
		{[]int{ExitTimeout, ExitBudget}, ExitBudget},
		{[]int{ExitBudget, ExitPartial}, ExitPartial},
	}
	for _, tt := range tests {
		if got := Worst(tt.codes...); got != tt.want {
			t.Errorf("Worst(%v) = %d, want %d", tt.codes, got, tt.want)
		}
	}
	// Every code is distinct.
	seen := map[int]bool{}
	for _, c := range []int{ExitOK, ExitFailure, ExitUsage, ExitTimeout, ExitPartial, ExitBusy, ExitBudget, ExitHangup, ExitCanceled, ExitTerminated} {
		if seen[c] {
			t.Errorf("exit code %d used twice", c)
		}
		seen[c] = true
	}
}

// TestSilentErrorSaysWhy: an ExitError that carries no reason still reads as one (what --output
// json's result gives), never a bare "exit N".
func TestSilentErrorSaysWhy(t *testing.T) {
	for code, want := range map[int]string{
		ExitFailure: "failed", ExitUsage: "bad flags", ExitTimeout: "timeout", ExitPartial: "partial", ExitBusy: "another massgen run",
		ExitBudget: "budget", ExitHangup: "SIGHUP", ExitCanceled: "cancelled", ExitTerminated: "SIGTERM",
	} {
		if got := Silent(code).Error(); !strings.Contains(got, want) {
			t.Errorf("Silent(%d) = %q, want it to say %q", code, got, want)
		}
	}
}
