package filesystem

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/roots"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/winpath"
	"github.com/massgen-go/massgen/permissions"
)

// errChanged is returned when an entry changed between the walk that was judged and its use.
var errChanged = safefs.ErrChanged

// walks are the walks of one call. The permission decision resolves each path argument through
// them (permissions.Resolver) and decides on the canonical path found; the tool then acts on the
// same walk's descriptors. Nothing is resolved again by string in between.
type walks struct {
	m map[walkKey]*safefs.Walk
}

type walkKey struct {
	arg   string
	entry bool
}

func newWalks() *walks { return &walks{m: map[walkKey]*safefs.Walk{}} }

// Resolve implements permissions.Resolver.
func (ws *walks) Resolve(arg, abs string, entry bool) (string, error) {
	k := walkKey{arg, entry}
	if w := ws.m[k]; w != nil {
		return w.Path, nil
	}
	w, err := safefs.Resolve(abs, entry)
	if err != nil {
		var fe *safefs.Error
		if errors.As(err, &fe) {
			re := &permissions.ResolveError{Abs: abs, At: fe.At, Err: fe.Err}
			if errors.Is(fe.Err, syscall.ENOTDIR) {
				re.Err = nil // "is not a directory", as the permission layer words it
			}
			return "", re
		}
		return "", err
	}
	ws.m[k] = w
	return w.Path, nil
}

func (ws *walks) close() {
	for _, w := range ws.m {
		w.Close()
	}
}

// walk is the walk the decision judged for a path argument. A path argument the decision did
// not resolve cannot be acted on: that is a bug, and the call fails closed.
func (c *call) walk(arg string) (*safefs.Walk, error) {
	if w := c.walks.m[walkKey{arg, true}]; w != nil {
		return w, nil
	}
	if w := c.walks.m[walkKey{arg, false}]; w != nil {
		return w, nil
	}
	return nil, fmt.Errorf("internal error: the path argument %q was not checked; refusing", arg)
}

// existing is walk for an argument that must name something that exists.
func (c *call) existing(arg string) (*safefs.Walk, error) {
	w, err := c.walk(arg)
	if err != nil {
		return nil, err
	}
	if !w.Exists {
		return nil, fmt.Errorf("%s does not exist", w.Path)
	}
	return w, nil
}

// dirOf opens an argument's walk as a directory.
func (c *call) dirOf(arg string) (*safefs.Walk, *safefs.Dir, error) {
	w, err := c.existing(arg)
	if err != nil {
		return nil, nil, err
	}
	if !w.Info.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory", w.Path)
	}
	d, err := w.OpenDir()
	if err != nil {
		return nil, nil, pathErr(w.Path, err)
	}
	return w, d, nil
}

// readable reports whether the agent may read the canonical path p: what listing and walking
// tools show is exactly what read_file and list_directory can open.
func (t *Toolset) readable(p string) bool {
	return t.pol.CheckCanonical(p, permissions.Read).Allow
}

// visible reports whether the entry e of the directory dir (canonical) is shown: a link is shown
// when what it leads to may be read, anything else when it may be read itself.
func (t *Toolset) visible(dir string, e safefs.Entry) bool {
	p := safefs.Join(dir, e.Name)
	if e.Info.IsLink() {
		w, err := safefs.Resolve(p, false)
		if err != nil {
			return false
		}
		defer w.Close()
		p = w.Path
	}
	return t.readable(p)
}

// rootPaths are the managed roots as written and as resolved when the agent's environment was
// built (workspace, temp workspaces, read-only paths, context paths): never deleted or moved,
// nor any directory holding one.
func (t *Toolset) rootPaths() []string {
	set := t.pol.Managed()
	var rs []roots.Root
	if set.Workspace != nil {
		rs = append(rs, *set.Workspace)
	}
	rs = append(rs, set.Temp...)
	rs = append(rs, set.ReadOnly...)
	for _, c := range set.Context {
		rs = append(rs, c.Root)
	}
	out := make([]string, 0, 2*len(rs))
	for _, r := range rs {
		out = append(out, filepath.Clean(r.Given), r.Path)
	}
	return out
}

// containsRoot reports the managed root p is, or holds.
func (t *Toolset) containsRoot(p string) (string, bool) {
	for _, r := range t.rootPaths() {
		if t.pol.Within(r, p) {
			return r, true
		}
	}
	return "", false
}

// excludedBelowRoot is the first default-excluded component of p below the managed root that
// holds it ("" when none): such paths are never deleted or moved, wherever they are.
func (t *Toolset) excludedBelowRoot(p string) string {
	return t.pol.ExcludedBelow(p, t.pol.ManagedRoot(p))
}

// inWorkspace reports whether p is in the agent's own workspace (deletions there are final;
// elsewhere, i.e. in context paths, they go to the trash).
func (t *Toolset) inWorkspace(p string) bool {
	ws := t.pol.Managed().Workspace
	if ws == nil {
		return false
	}
	// The same root, named the same way (on Windows without case).
	r, w := t.pol.ManagedRoot(p), ws.Path
	return r != "" && t.pol.Within(r, w) && t.pol.Within(w, r)
}

// isPrivate reports whether abs is inside a private path (another agent's live workspace, the
// snapshot storage, massgen's records): walks over a readable directory leave those out, as the
// permission layer refuses them one by one. The policy's deepest root decides, so the agent's
// own workspace, temp workspace and earlier turns inside a private path stay visible.
func (t *Toolset) isPrivate(abs string) bool { return t.pol.IsPrivate(abs) }

// withinCanonical reports whether the canonical path p (a walk's) is root or lies below it, as
// the system names files: on Windows without case, name by name (winpath), and a path winpath
// cannot read counts as within (the callers refuse what is within).
func withinCanonical(p, root string) bool {
	if filepath.Separator != '\\' {
		return pathx.Within(p, root)
	}
	pp, err1 := winpath.Parse(p)
	rp, err2 := winpath.Parse(root)
	return err1 != nil || err2 != nil || winpath.Within(pp, rp)
}

// pathErr turns OS errors into short messages naming the path.
func pathErr(p string, err error) error { return safefs.PathError(p, err) }
