package prompt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/huh"

	"github.com/massgen-go/massgen/permissions"
)

// AskOptions configures an Asker.
type AskOptions struct {
	In  io.Reader // the terminal (or, in tests, scripted input)
	Out io.Writer
	// Accessible selects huh's line-based accessible mode (screen readers, scripted tests);
	// otherwise the prompt is huh's interactive select.
	Accessible bool
}

// Asker implements permissions.Asker with a huh prompt. Agents run concurrently, but the user
// answers one question at a time: prompts are queued (first come, first asked) and a prompt
// waiting in the queue gives up, as a deny, when its context ends.
type Asker struct {
	o AskOptions
	// turn holds one token; whoever holds it owns the terminal. A channel (not a mutex) so a
	// waiting ask can be cancelled; waiting senders are served in arrival order.
	turn chan struct{}
	// runAllowed remembers "allow for this run" answers (guarded by turn), so an identical ask
	// that was already queued behind the one answered is not shown again.
	runAllowed map[string]bool
}

var _ permissions.Asker = (*Asker)(nil)

// NewAsker returns an Asker over the given streams. The CLI only builds one when stdin is a
// terminal; without one it passes no Asker and the Guard turns asks into denies with a reason.
func NewAsker(o AskOptions) *Asker {
	a := &Asker{o: o, turn: make(chan struct{}, 1), runAllowed: map[string]bool{}}
	a.turn <- struct{}{}
	return a
}

// Answer labels, in the order shown.
const (
	labelOnce = "Allow once"
	labelRun  = "Allow for this run (this agent, tool and path)"
	labelDeny = "Deny"
)

// Ask shows one request and returns the user's choice. Anything but an explicit allow (end of
// input, Ctrl-C, a cancelled context) is a deny.
func (a *Asker) Ask(ctx context.Context, req permissions.AskRequest) (permissions.AskAnswer, error) {
	select {
	case <-a.turn:
	case <-ctx.Done():
		return permissions.AskDeny, ctx.Err()
	}
	defer func() { a.turn <- struct{}{} }()
	if err := ctx.Err(); err != nil {
		return permissions.AskDeny, err
	}
	key := askKey(req)
	if a.runAllowed[key] {
		return permissions.AskAllowRun, nil
	}

	answer := permissions.AskDeny // the default: Enter or end of input denies
	title := Title(req)
	details := Details(req)
	sel := huh.NewSelect[permissions.AskAnswer]().
		Title(title).
		Options(
			huh.NewOption(labelOnce, permissions.AskAllowOnce),
			huh.NewOption(labelRun, permissions.AskAllowRun),
			huh.NewOption(labelDeny, permissions.AskDeny),
		).
		Value(&answer)
	if a.o.Accessible {
		// Accessible mode prints only a select's title: print the details ourselves.
		fmt.Fprintln(a.o.Out, details)
	} else {
		sel.Description(details)
	}
	form := huh.NewForm(huh.NewGroup(sel)).WithAccessible(a.o.Accessible).WithShowHelp(!a.o.Accessible)
	if a.o.In != nil {
		form = form.WithInput(a.o.In)
	}
	if a.o.Out != nil {
		form = form.WithOutput(a.o.Out)
	}
	if err := form.RunWithContext(ctx); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			return permissions.AskDeny, nil
		}
		return permissions.AskDeny, fmt.Errorf("permission prompt: %w", err)
	}
	if ctx.Err() != nil {
		return permissions.AskDeny, ctx.Err()
	}
	if answer == permissions.AskAllowRun {
		a.runAllowed[key] = true
	}
	return answer, nil
}

// askKey identifies an ask for "allow for this run": agent, role, tool and paths (the Guard
// remembers the same answer on its side).
func askKey(req permissions.AskRequest) string {
	return strings.Join(append([]string{req.Agent, fmt.Sprint(req.Role), req.Tool}, req.Paths...), "\x00")
}

// Title is the one-line question: which agent wants to run which tool.
func Title(req permissions.AskRequest) string {
	role := "coordination"
	if req.Role == permissions.Final {
		role = "final"
	}
	return fmt.Sprintf("Agent %s (%s) wants to run %s. Allow?", req.Agent, role, req.Tool)
}

// Details names the paths, the rule that asked, and its reason (or the command, for command
// tools without paths).
func Details(req permissions.AskRequest) string {
	var b strings.Builder
	if len(req.Paths) > 0 {
		fmt.Fprintf(&b, "  paths: %s\n", strings.Join(req.Paths, ", "))
	} else if cmd := commandArg(req.Args); cmd != "" {
		fmt.Fprintf(&b, "  command: %s\n", cmd)
	}
	if req.Rule != "" {
		fmt.Fprintf(&b, "  rule: %s\n", req.Rule)
	}
	if req.Reason != "" {
		fmt.Fprintf(&b, "  reason: %s\n", req.Reason)
	}
	return strings.TrimRight(b.String(), "\n")
}

func commandArg(args map[string]any) string {
	for _, k := range []string{"command", "cmd"} {
		if s, ok := args[k].(string); ok {
			return s
		}
	}
	return ""
}
