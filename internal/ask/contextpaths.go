// Package ask holds the interactive questions massgen asks the user on the terminal (huh forms):
// which context paths to add before a run, and (ask.go) whether to allow a tool call. Every
// question takes its input and output streams and can run in huh's accessible mode (plain
// numbered questions, one answer per line), which is also how tests drive them.
package ask

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/huh"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/internal/vocab"
)

// ErrAborted is returned when the user cancels a prompt (Ctrl-C, or end of input).
var ErrAborted = errors.New("prompt cancelled")

// The choices of the context-path question.
const (
	ChoiceYes       = "yes"
	ChoiceProtected = "protected"
	ChoiceNo        = "no"
	ChoiceCustom    = "custom"
)

// ContextPathOptions configure AskContextPaths.
type ContextPathOptions struct {
	In  io.Reader
	Out io.Writer
	// Accessible runs huh's accessible mode: numbered options and one typed answer per line.
	Accessible bool
	// Cwd is the current directory: the one offered, and what relative answers resolve against.
	Cwd string
	// Home expands "~" in typed paths.
	Home string
	// Existing are the context paths the config already has (shown first).
	Existing []configs.ContextPath
}

// AskContextPaths asks "Add current directory as context path?" with Yes (default, write) /
// Protected / No / Custom path, and returns the context paths to add: Path absolute, protected
// paths as typed (relative to the context path; configs.Resolve resolves them).
func AskContextPaths(ctx context.Context, o ContextPathOptions) ([]configs.ContextPath, error) {
	p := &prompter{ctx: ctx, in: &eofReader{r: o.In}, rawIn: o.In, out: o.Out, accessible: o.Accessible}

	fmt.Fprintln(o.Out, FormatContextPaths(o.Existing))
	choice := ChoiceYes
	err := p.run(huh.NewSelect[string]().
		Title(fmt.Sprintf("Add current directory as context path?\n  %s", termtext.Line(o.Cwd))).
		Options(
			huh.NewOption("Yes (write access for the final agent)", ChoiceYes),
			huh.NewOption("Protected (write, but some paths stay read-only)", ChoiceProtected),
			huh.NewOption("No", ChoiceNo),
			huh.NewOption("Custom path", ChoiceCustom),
		).
		Value(&choice))
	if err != nil {
		return nil, err
	}
	switch choice {
	case ChoiceYes:
		return []configs.ContextPath{{Path: o.Cwd, Permission: vocab.AccessWrite}}, nil
	case ChoiceNo:
		return nil, nil
	case ChoiceProtected:
		prot, err := p.askProtected(o.Cwd, o.Home)
		if err != nil {
			return nil, err
		}
		return []configs.ContextPath{{Path: o.Cwd, Permission: vocab.AccessWrite, ProtectedPaths: prot}}, nil
	case ChoiceCustom:
		cp, err := p.askCustom(o.Cwd, o.Home)
		if err != nil {
			return nil, err
		}
		return []configs.ContextPath{cp}, nil
	}
	return nil, fmt.Errorf("prompt: unexpected choice %q", choice)
}

// FormatContextPaths renders a context-path list the way it is shown before a run.
func FormatContextPaths(cps []configs.ContextPath) string {
	var b strings.Builder
	b.WriteString("Context paths:\n")
	if len(cps) == 0 {
		b.WriteString("   No context paths configured")
		return b.String()
	}
	for i, cp := range cps {
		if i > 0 {
			b.WriteString("\n")
		}
		perm := cp.Permission
		if perm == "" {
			perm = vocab.AccessRead
		}
		fmt.Fprintf(&b, "   %s (%s)", termtext.Line(cp.Path), termtext.Line(string(perm)))
		for _, pp := range cp.ProtectedPaths {
			fmt.Fprintf(&b, "\n      protected: %s", termtext.Line(pp))
		}
	}
	return b.String()
}

type prompter struct {
	ctx        context.Context
	in         *eofReader // accessible mode reads through this
	rawIn      io.Reader  // the terminal UI needs the real *os.File to switch to raw mode
	out        io.Writer
	accessible bool
}

// run asks one field. Accessible mode cannot report end of input, so it is detected here.
func (p *prompter) run(f huh.Field) error {
	if err := p.ctx.Err(); err != nil {
		return err
	}
	var in io.Reader = p.rawIn
	if p.accessible {
		in = p.in
	}
	form := huh.NewForm(huh.NewGroup(f)).
		WithInput(in).WithOutput(p.out).
		WithAccessible(p.accessible).WithShowHelp(!p.accessible)
	err := form.RunWithContext(p.ctx)
	switch {
	case errors.Is(err, huh.ErrUserAborted):
		return ErrAborted
	case err != nil:
		return fmt.Errorf("prompt: %w", err)
	case p.in.eof:
		return fmt.Errorf("%w: end of input", ErrAborted)
	}
	return nil
}

// askCustom asks for a file or directory (re-asking until it exists), its permission, and,
// for write access, its protected paths.
func (p *prompter) askCustom(cwd, home string) (configs.ContextPath, error) {
	var raw string
	resolve := func(s string) string { return resolvePath(strings.TrimSpace(s), cwd, home) }
	err := p.run(huh.NewInput().
		Title("Path (absolute or relative, file or directory):").
		Value(&raw).
		Validate(func(s string) error {
			if strings.TrimSpace(s) == "" {
				return errors.New("enter a path")
			}
			if _, err := os.Stat(resolve(s)); err != nil {
				return fmt.Errorf("%s does not exist; enter an existing file or directory", resolve(s))
			}
			return nil
		}))
	if err != nil {
		return configs.ContextPath{}, err
	}
	path := resolve(raw)
	if _, err := os.Stat(path); err != nil { // accessible mode may return an unvalidated answer
		return configs.ContextPath{}, fmt.Errorf("context path %s: %w", path, err)
	}
	perm := vocab.AccessWrite
	err = p.run(huh.NewSelect[vocab.Access]().
		Title("Permission for "+path).
		Options(huh.NewOption("write (default)", vocab.AccessWrite), huh.NewOption("read", vocab.AccessRead)).
		Value(&perm))
	if err != nil {
		return configs.ContextPath{}, err
	}
	cp := configs.ContextPath{Path: path, Permission: perm}
	if perm == vocab.AccessWrite {
		if cp.ProtectedPaths, err = p.askProtected(path, home); err != nil {
			return configs.ContextPath{}, err
		}
	}
	return cp, nil
}

// askProtected reads protected paths, one per answer, until an empty answer. Each must lie
// inside the context path.
func (p *prompter) askProtected(ctxPath, home string) ([]string, error) {
	fmt.Fprintf(p.out, "Protected paths (relative to %s), one per line; empty line to finish:\n", termtext.Line(ctxPath))
	var out []string
	check := func(s string) error {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil
		}
		abs := resolvePath(s, ctxPath, home)
		rel, err := filepath.Rel(ctxPath, abs)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s is not inside %s", s, ctxPath)
		}
		return nil
	}
	for {
		var s string
		title := fmt.Sprintf("Protected path %d (empty to finish):", len(out)+1)
		err := p.run(huh.NewInput().Title(title).Value(&s).Validate(check))
		if err != nil {
			return nil, err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return out, nil
		}
		if check(s) != nil { // accessible mode may return an unvalidated answer
			return nil, check(s)
		}
		out = append(out, s)
	}
}

func resolvePath(p, base, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// eofReader remembers that its reader reached the end, which huh's accessible mode swallows.
type eofReader struct {
	r   io.Reader
	eof bool
}

func (e *eofReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if errors.Is(err, io.EOF) {
		e.eof = true
	}
	return n, err
}
