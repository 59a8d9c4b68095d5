package ask

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/charmbracelet/huh"
	"github.com/mattn/go-runewidth"

	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/permissions"
)

// AskOptions configures an Asker.
type AskOptions struct {
	In  io.Reader // the terminal (or, in tests, scripted input)
	Out io.Writer
	// Accessible selects huh's line-based accessible mode (screen readers, scripted tests);
	// otherwise the prompt is huh's interactive select.
	Accessible bool
	// Width and Height are the terminal's size (0: 100 by 40). Lines are cut to the width and
	// the preview to what fits, so the whole prompt is on screen at once and can be erased
	// once answered.
	Width, Height int
	// Color paints the diff preview (a terminal, and NO_COLOR unset).
	Color bool
	// Erase erases the prompt once answered, leaving one line saying what was answered: set
	// when nothing else writes to the terminal meanwhile (the live view, which the CLI
	// suspends); plain progress lines would be erased instead.
	Erase bool
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
	// denials are the calls the user refused (guarded by mu: read by the end-of-run summary).
	mu      sync.Mutex
	denials []string
}

var _ permissions.Asker = (*Asker)(nil)

// NewAsker returns an Asker over the given streams. The CLI only builds one when stdin is a
// terminal; without one it passes no Asker and the Guard turns asks into denies with a reason.
func NewAsker(o AskOptions) *Asker {
	if o.Width <= 0 {
		o.Width = 100
	}
	if o.Height <= 0 {
		o.Height = 40
	}
	a := &Asker{o: o, turn: make(chan struct{}, 1), runAllowed: map[string]bool{}}
	a.turn <- struct{}{}
	return a
}

// Answer labels, in the order shown: the default (deny) first, so the cursor starts on it and
// every option is in view from the first frame.
const (
	labelDeny = "Deny"
	labelOnce = "Allow once"
	labelRun  = "Allow for this run (this agent, tool and path)"
)

// Denials lists the calls the user refused so far ("agent: tool path"), for the summary.
func (a *Asker) Denials() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.denials)
}

// Ask shows one request, with what it would change, and returns the user's choice. Anything but
// an explicit allow (end of input, Ctrl-C, a cancelled context) is a deny.
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
	answer, err := a.ask(ctx, req)
	if answer == permissions.AskAllowRun {
		a.runAllowed[key] = true
	}
	if answer == permissions.AskDeny && err == nil {
		a.mu.Lock()
		a.denials = append(a.denials, subject(req))
		a.mu.Unlock()
	}
	return answer, err
}

func (a *Asker) ask(ctx context.Context, req permissions.AskRequest) (permissions.AskAnswer, error) {
	answer := permissions.AskDeny // the default: Enter or end of input denies
	header := a.header(req)
	sel := huh.NewSelect[permissions.AskAnswer]().
		Title("Allow?").
		Options(
			huh.NewOption(labelDeny, permissions.AskDeny),
			huh.NewOption(labelOnce, permissions.AskAllowOnce),
			huh.NewOption(labelRun, permissions.AskAllowRun),
		).
		Value(&answer)
	// The header is printed above the form (huh's description would count toward the select's
	// height, and wraps); huh erases its own lines when done, the header is erased below.
	fmt.Fprint(a.o.Out, strings.Join(header, "\n")+"\n")
	form := huh.NewForm(huh.NewGroup(sel)).WithAccessible(a.o.Accessible).WithShowHelp(!a.o.Accessible)
	if a.o.In != nil {
		form = form.WithInput(a.o.In)
	}
	if a.o.Out != nil {
		form = form.WithOutput(a.o.Out)
	}
	err := form.RunWithContext(ctx)
	if errors.Is(err, huh.ErrUserAborted) {
		answer, err = permissions.AskDeny, nil
	} else if err != nil {
		answer, err = permissions.AskDeny, fmt.Errorf("permission prompt: %w", err)
	} else if ctx.Err() != nil {
		answer, err = permissions.AskDeny, ctx.Err()
	}
	if !a.o.Accessible {
		if a.o.Erase {
			// Erase the header so the live view comes back where it was.
			fmt.Fprintf(a.o.Out, "\x1b[%dA\r\x1b[J", len(header))
		}
		fmt.Fprintln(a.o.Out, a.fit(Outcome(req, answer)))
	}
	return answer, err
}

// header is what the prompt shows above the choice, one terminal line each (cut to the width):
// the question, the paths or command, the rule, and the preview of the change.
func (a *Asker) header(req permissions.AskRequest) []string {
	lines := []string{a.fit(termtext.Line(Title(req)))}
	for _, l := range strings.Split(Details(req), "\n") {
		if l != "" {
			lines = append(lines, a.fit(termtext.Line(l)))
		}
	}
	preview := strings.Split(strings.TrimRight(filesystem.PreviewChange(req.Tool, req.Args, req.Paths), "\n"), "\n")
	if len(preview) == 1 && preview[0] == "" {
		return lines
	}
	// Room left: the select (title, three options) and huh's help line, with a margin.
	room := max(3, a.o.Height-len(lines)-8)
	if len(preview) > room {
		more := len(preview) - room + 1
		preview = append(preview[:room-1], fmt.Sprintf("... %d more lines", more))
	}
	for _, l := range preview {
		lines = append(lines, "  "+a.paint(a.fit(termtext.Line(strings.ReplaceAll(l, "\t", "    ")))))
	}
	return lines
}

// fit cuts a line to the terminal width, less a two-column indent (never wrapping: the erase
// counts lines).
func (a *Asker) fit(s string) string {
	if a.o.Accessible {
		return s
	}
	return runewidth.Truncate(s, a.o.Width-3, "…")
}

// paint colours one diff line (already cleaned and cut).
func (a *Asker) paint(l string) string {
	if !a.o.Color {
		return l
	}
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return "\x1b[1m" + l + "\x1b[0m"
	case strings.HasPrefix(l, "@@"):
		return "\x1b[36m" + l + "\x1b[0m"
	case strings.HasPrefix(l, "+"):
		return "\x1b[32m" + l + "\x1b[0m"
	case strings.HasPrefix(l, "-"):
		return "\x1b[31m" + l + "\x1b[0m"
	}
	return l
}

// Outcome is the line left on screen once a request is answered.
func Outcome(req permissions.AskRequest, answer permissions.AskAnswer) string {
	switch answer {
	case permissions.AskAllowOnce:
		return "✓ Allowed once: " + subject(req)
	case permissions.AskAllowRun:
		return "✓ Allowed for this run: " + subject(req)
	}
	return "✗ Denied: " + subject(req)
}

// subject names a request in one line: agent, tool and its paths or command.
func subject(req permissions.AskRequest) string {
	what := commandArg(req.Args)
	if what == "" {
		what = strings.Join(slices.Compact(slices.Clone(req.Paths)), ", ")
	}
	return termtext.Line(strings.TrimSpace(fmt.Sprintf("%s: %s %s", req.Agent, req.Tool, what)))
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
	return fmt.Sprintf("Agent %s (%s) wants to run %s", req.Agent, role, req.Tool)
}

// Details names the command (for command tools), the paths, the rule that asked, and its
// reason.
func Details(req permissions.AskRequest) string {
	var b strings.Builder
	if cmd := commandArg(req.Args); cmd != "" {
		fmt.Fprintf(&b, "  command: %s\n", termtext.Line(cmd))
	}
	if len(req.Paths) > 0 {
		seen := map[string]bool{}
		var paths []string
		for _, p := range req.Paths {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
		fmt.Fprintf(&b, "  paths: %s\n", termtext.Line(strings.Join(paths, ", ")))
	}
	if req.Rule != "" {
		fmt.Fprintf(&b, "  rule: %s\n", termtext.Line(string(req.Rule)))
	}
	if req.Reason != "" {
		fmt.Fprintf(&b, "  reason: %s\n", termtext.Line(req.Reason))
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
