package app

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen/orchestrator"
)

// TestAnswerOnTerminalIsCleaned: a model's answer must not drive the user's terminal (escape
// sequences are shown escaped, termtext.Text) when stdout is one; redirected output stays byte
// for byte.
func TestAnswerOnTerminalIsCleaned(t *testing.T) {
	tests := []struct {
		name string
		tty  bool
		want string
	}{
		{"terminal", true, `\x1b]0;pwned\x07\x1b[2Jline` + "\n\ttwo\n"},
		{"redirected", false, "\x1b]0;pwned\a\x1b[2Jline\r\n\ttwo\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, "")
			e.Write(t, "c.yaml", workspaceConfig)
			e.IO.StdoutTTY = tc.tty
			opts := e.runOpts(&recorder{})
			opts.RunTurn = func(context.Context, *RunOptions, *Turn) (*orchestrator.Result, error) {
				return &orchestrator.Result{FinalAnswer: "\x1b]0;pwned\a\x1b[2Jline\r\n\ttwo\n"}, nil
			}
			opts.ConfigName, opts.Question, opts.Yes = "c.yaml", "task", true
			if err := runRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if got := e.Out.String(); got != tc.want {
				t.Fatalf("stdout = %q, want %q", got, tc.want)
			}
		})
	}
}
