package filesystem

import (
	"context"

	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/sandbox/netproxy"
)

type notesKey struct{}

// WithNotes returns ctx carrying note, which hears what a tool call has to say while it runs,
// one short line at a time ("network: pypi.org:443 allowed"): the live view shows it under the
// call. Set by whoever runs the call (the orchestrator).
func WithNotes(ctx context.Context, note func(text string)) context.Context {
	return context.WithValue(ctx, notesKey{}, note)
}

// noteOf is ctx's note function (one that discards, when there is none).
func noteOf(ctx context.Context) func(string) {
	if f, ok := ctx.Value(notesKey{}).(func(string)); ok && f != nil {
		return f
	}
	return func(string) {}
}

// NetworkNote is the live view's line for a connection of a command: "network: pypi.org:443
// allowed", "network: evil.example:443 refused".
func NetworkNote(e netproxy.Event) string {
	return "network: " + e.Target() + " " + e.Verdict()
}

// commandNetwork is the network of one call of tool (execute_command, a custom tool): the
// agent's, with each connection its proxy allows or refuses written to the audit log and told
// to the call's notes.
func (t *Toolset) commandNetwork(ctx context.Context, tool string) sandbox.Network {
	n := t.o.CommandNetwork
	note := noteOf(ctx)
	n.Report = func(e netproxy.Event) {
		t.guard.AuditNetwork(tool, e.Kind, e.Target(), e.Allowed, e.Entry, e.Reason)
		note(NetworkNote(e))
	}
	return n
}
