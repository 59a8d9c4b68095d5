// Package roots holds an agent's managed roots (its workspace, temp workspaces, read-only paths,
// context paths with their protected paths, private paths) resolved once, when its environment is
// built: per root the path as configured, its canonical path, and the directory walk that found
// it, held open (internal/safefs: an O_PATH handle on Linux). The permission Policy decides on
// these canonical paths, and the command sandbox, the journal and delivery read the same value:
// nothing resolves a root by string again, so a link retargeted after the environment was built
// cannot move a root.
//
// It sits in internal/ beside safefs, below both the permission engine (which imports neither
// configs nor filesystem) and its users (filesystem, agentenv, orchestrator).
package roots

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/massgen-go/massgen/internal/safefs"
)

// Root is one managed root.
type Root struct {
	// Given is the root as configured, made absolute (~ expanded, a relative protected path
	// joined to its context path).
	Given string
	// Path is its canonical path: symlink-free, found by the one walk (missing components
	// appended as given).
	Path string
	// walk is that walk, held open (nil when the Set was resolved without handles).
	walk *safefs.Walk
}

// Exists reports whether the root existed when it was resolved; IsDir whether it was a
// directory. Without a held walk both are false.
func (r Root) Exists() bool { return r.walk != nil && r.walk.Exists }

// IsDir: see Exists.
func (r Root) IsDir() bool { return r.walk != nil && r.walk.Exists && r.walk.Info.IsDir() }

// Held reports whether the root's walk is held open.
func (r Root) Held() bool { return r.walk != nil }

// Same reports whether the canonical path still names the object the walk found (a directory
// renamed away and another put in its place is not the same); true when nothing is held or the
// root did not exist.
func (r Root) Same() bool {
	if r.walk == nil || !r.walk.Exists {
		return true
	}
	w, err := safefs.Resolve(r.Path, true)
	if err != nil {
		return false
	}
	defer w.Close()
	return w.Exists && w.Path == r.Path && w.Info.Same(r.walk.Info)
}

// Context is a context path and its protected paths.
type Context struct {
	Root
	Protected []Root
}

// Input lists the roots to resolve, each absolute.
type Input struct {
	Workspace string // "" none
	Temp      []string
	ReadOnly  []string
	Context   []ContextInput
	Private   []string
}

// ContextInput is one context path and its protected paths, absolute.
type ContextInput struct {
	Path      string
	Protected []string
}

// Set is an agent's managed roots, in the order of its Input. It is immutable once built; Close
// releases the held walks (the canonical paths stay valid).
type Set struct {
	Workspace *Root // nil: no workspace
	Temp      []Root
	ReadOnly  []Root
	Context   []Context
	Private   []Root
}

// Resolver resolves one absolute path to its canonical path.
type Resolver func(abs string) (string, error)

// Open resolves every root of in once with the safefs walker and holds each walk open.
func Open(in Input) (*Set, error) {
	s, err := build(in, func(abs string) (Root, error) {
		w, err := safefs.Resolve(abs, false)
		if err != nil {
			return Root{}, err
		}
		return Root{Given: abs, Path: w.Path, walk: w}, nil
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Resolved builds a Set with res and holds nothing: for a Policy built without an environment
// (tests, one-shot checks against a fake file system).
func Resolved(in Input, res Resolver) (*Set, error) {
	return build(in, func(abs string) (Root, error) {
		p, err := res(abs)
		if err != nil {
			return Root{}, err
		}
		return Root{Given: abs, Path: p}, nil
	})
}

// Canonical is the canonical path of one existing absolute path, by the same walk Open uses: for
// the commands that hold no agent environment (diff, undo) and check a recorded path against a
// root. A path that does not exist is an error (fs.ErrNotExist).
func Canonical(abs string) (string, error) {
	w, err := safefs.Resolve(abs, false)
	if err != nil {
		return "", err
	}
	defer w.Close()
	if !w.Exists {
		return "", &fs.PathError{Op: "resolve", Path: abs, Err: fs.ErrNotExist}
	}
	return w.Path, nil
}

func build(in Input, open func(abs string) (Root, error)) (*Set, error) {
	s := &Set{}
	one := func(what, abs string) (Root, error) {
		r, err := open(abs)
		if err != nil {
			return Root{}, fmt.Errorf("%s: %w", what, err)
		}
		return r, nil
	}
	if in.Workspace != "" {
		r, err := one("workspace", in.Workspace)
		if err != nil {
			return s, err
		}
		s.Workspace = &r
	}
	for _, p := range in.Temp {
		r, err := one("temp workspace", p)
		if err != nil {
			return s, err
		}
		s.Temp = append(s.Temp, r)
	}
	for _, p := range in.ReadOnly {
		r, err := one("read-only path", p)
		if err != nil {
			return s, err
		}
		s.ReadOnly = append(s.ReadOnly, r)
	}
	for i, cp := range in.Context {
		r, err := one(fmt.Sprintf("context path %d", i), cp.Path)
		if err != nil {
			return s, err
		}
		c := Context{Root: r}
		s.Context = append(s.Context, c)
		for _, pp := range cp.Protected {
			pr, err := one(fmt.Sprintf("context path %s: protected path", cp.Path), pp)
			if err != nil {
				return s, err
			}
			s.Context[len(s.Context)-1].Protected = append(s.Context[len(s.Context)-1].Protected, pr)
		}
	}
	for _, p := range in.Private {
		r, err := one("private path", p)
		if err != nil {
			return s, err
		}
		s.Private = append(s.Private, r)
	}
	return s, nil
}

// Input is what s was built from (its roots as given).
func (s *Set) Input() Input {
	var in Input
	if s.Workspace != nil {
		in.Workspace = s.Workspace.Given
	}
	for _, r := range s.Temp {
		in.Temp = append(in.Temp, r.Given)
	}
	for _, r := range s.ReadOnly {
		in.ReadOnly = append(in.ReadOnly, r.Given)
	}
	for _, c := range s.Context {
		ci := ContextInput{Path: c.Given}
		for _, p := range c.Protected {
			ci.Protected = append(ci.Protected, p.Given)
		}
		in.Context = append(in.Context, ci)
	}
	for _, r := range s.Private {
		in.Private = append(in.Private, r.Given)
	}
	return in
}

// Match reports why s was not built from in ("" when it was): a Policy refuses to decide on roots
// resolved for another Spec.
func (s *Set) Match(in Input) error {
	have := s.Input()
	eq := func(a, b []string) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	ok := have.Workspace == in.Workspace && eq(have.Temp, in.Temp) && eq(have.ReadOnly, in.ReadOnly) &&
		eq(have.Private, in.Private) && len(have.Context) == len(in.Context)
	for i := 0; ok && i < len(in.Context); i++ {
		ok = have.Context[i].Path == in.Context[i].Path && eq(have.Context[i].Protected, in.Context[i].Protected)
	}
	if !ok {
		return errors.New("the managed roots given were resolved for other paths than the spec names")
	}
	return nil
}

// All lists every root of s (protected paths included), in order.
func (s *Set) All() []Root {
	var out []Root
	if s.Workspace != nil {
		out = append(out, *s.Workspace)
	}
	out = append(out, s.Temp...)
	out = append(out, s.ReadOnly...)
	for _, c := range s.Context {
		out = append(out, c.Root)
		out = append(out, c.Protected...)
	}
	return append(out, s.Private...)
}

// Close releases the held walks.
func (s *Set) Close() error {
	if s == nil {
		return nil
	}
	closeRoot := func(r *Root) {
		if r.walk != nil {
			r.walk.Close()
		}
	}
	if s.Workspace != nil {
		closeRoot(s.Workspace)
	}
	for i := range s.Temp {
		closeRoot(&s.Temp[i])
	}
	for i := range s.ReadOnly {
		closeRoot(&s.ReadOnly[i])
	}
	for i := range s.Context {
		closeRoot(&s.Context[i].Root)
		for j := range s.Context[i].Protected {
			closeRoot(&s.Context[i].Protected[j])
		}
	}
	for i := range s.Private {
		closeRoot(&s.Private[i])
	}
	return nil
}
