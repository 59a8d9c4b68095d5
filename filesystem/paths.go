package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// errChanged is returned when a path changed between the permission check and its use (a
// component became a symbolic link, or the file was swapped for another one).
var errChanged = errors.New("the path changed during the operation (symbolic link swapped in?); refusing")

// loc is a checked path, resolved, and the managed root it lives in. Every operation opens
// root (an os.Root cannot be left) and then walks rel one component at a time refusing
// symbolic links, so a link swapped in after the check cannot redirect the operation, even to
// another place inside the same root (such as a protected file).
type loc struct {
	abs     string // resolved absolute path
	rootDir string // directory opened as the os.Root (the parent, for a file root)
	rel     string // path relative to rootDir ("." for rootDir itself)
	managed string // the managed root (a directory, or a single file context path)
}

// parentRel and base split rel into its directory and last element.
func (l loc) parentRel() string { return filepath.Dir(l.rel) }
func (l loc) base() string      { return filepath.Base(l.rel) }

// resolveRoot resolves symlinks in a root path (roots are under the user's control, not the
// agent's); a root that does not exist is kept as given.
func resolveRoot(r string) string {
	if p, err := filepath.EvalSymlinks(r); err == nil {
		return p
	}
	return filepath.Clean(r)
}

// under reports whether p is root or inside it (both clean and absolute).
func under(p, root string) bool {
	if p == root {
		return true
	}
	if root == string(filepath.Separator) {
		return strings.HasPrefix(p, root)
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

// roots returns the resolved roots the agent may access (write: WritableRoots; read: readable or
// writable).
func (t *Toolset) roots(write bool) []string {
	var rs []string
	if write {
		rs = t.pol.WritableRoots()
	} else {
		rs = append(append(rs, t.pol.ReadableRoots()...), t.pol.WritableRoots()...)
	}
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, resolveRoot(r))
	}
	return out
}

// specRoots are the configured roots (workspace, temp workspaces, read-only paths, context
// paths), resolved. The Policy's root lists drop roots nested in others; for choosing the
// os.Root of an operation we want the deepest one (a workspace inside a context path is the
// workspace, not a ".massgen/..." path of the context path).
func (t *Toolset) specRoots() []string {
	rs := t.configuredRoots()
	for i, r := range rs {
		rs[i] = resolveRoot(r)
	}
	return rs
}

// configuredRoots are the roots as the Spec names them (not resolved): the workspace (when
// set), temp workspaces, read-only paths and context paths.
func (t *Toolset) configuredRoots() []string {
	sp := t.pol.Spec()
	var rs []string
	if sp.Workspace != "" {
		rs = append(rs, sp.Workspace)
	}
	rs = append(rs, sp.TempWorkspaces...)
	rs = append(rs, sp.ReadOnly...)
	for _, cp := range sp.ContextPaths {
		rs = append(rs, cp.Path)
	}
	return rs
}

// locate resolves p (relative paths are relative to the workspace) and finds the deepest managed
// root that contains it. It fails closed: a path under no root is an error.
func (t *Toolset) locate(p string, write bool) (loc, error) {
	abs, err := t.pol.Resolve(p)
	if err != nil {
		return loc{}, fmt.Errorf("cannot resolve %q: %w", p, err)
	}
	return t.locateAbs(abs, write)
}

// locateEntry is locate for operations on a directory entry itself (delete, move source): the
// parent is resolved but the last element is not, so deleting a symbolic link removes the link.
func (t *Toolset) locateEntry(p string, write bool) (loc, error) {
	if p == "" {
		return loc{}, errors.New("empty path")
	}
	if !filepath.IsAbs(p) {
		ws := t.pol.Spec().Workspace
		if ws == "" {
			return loc{}, fmt.Errorf("relative path %q but the agent has no workspace", p)
		}
		p = filepath.Join(ws, p)
	}
	p = filepath.Clean(p)
	base := filepath.Base(p)
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return t.locate(p, write)
	}
	parent, err := t.pol.Resolve(filepath.Dir(p))
	if err != nil {
		return loc{}, fmt.Errorf("cannot resolve %q: %w", p, err)
	}
	return t.locateAbs(filepath.Join(parent, base), write)
}

func (t *Toolset) locateAbs(abs string, write bool) (loc, error) {
	abs = filepath.Clean(abs)
	allowed := t.roots(write)
	best := ""
	for _, r := range allowed {
		if under(abs, r) && len(r) > len(best) {
			best = r
		}
	}
	if best != "" {
		// A deeper configured root inside the allowed one wins.
		for _, r := range t.specRoots() {
			if under(abs, r) && under(r, best) && len(r) > len(best) {
				best = r
			}
		}
	}
	if best == "" {
		what := "readable"
		if write {
			what = "writable"
		}
		return loc{}, fmt.Errorf("%s is not inside any %s directory of this agent", abs, what)
	}
	l := loc{abs: abs, managed: best}
	if fi, err := os.Stat(best); err == nil && !fi.IsDir() {
		// A single-file context path: only that file, opened through its parent directory.
		if abs != best {
			return loc{}, fmt.Errorf("%s is not accessible: only the file %s is shared from that directory", abs, best)
		}
		l.rootDir, l.rel = filepath.Dir(best), filepath.Base(best)
		return l, nil
	}
	rel, err := filepath.Rel(best, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return loc{}, fmt.Errorf("%s: cannot be expressed inside %s", abs, best)
	}
	l.rootDir, l.rel = best, rel
	return l, nil
}

// openRoot opens the managed root of l.
func (t *Toolset) openRoot(l loc) (*os.Root, error) {
	if t.beforeUse != nil {
		t.beforeUse(l.abs)
	}
	r, err := os.OpenRoot(l.rootDir)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", l.rootDir, err)
	}
	return r, nil
}

// openEntry opens the managed root of l and the directory holding its entry (refusing links on
// the way), and Lstats the entry itself (which may be a link). The caller releases both with
// closeDirs(r, dir).
func (t *Toolset) openEntry(l loc) (r, dir *os.Root, fi fs.FileInfo, err error) {
	r, err = t.openRoot(l)
	if err != nil {
		return nil, nil, nil, err
	}
	dir, err = openDirNoFollow(r, l.parentRel())
	if err != nil {
		r.Close()
		return nil, nil, nil, pathErr(l.abs, err)
	}
	fi, err = dir.Lstat(l.base())
	if err != nil {
		closeDirs(r, dir)
		return nil, nil, nil, pathErr(l.abs, err)
	}
	return r, dir, fi, nil
}

// makeParent opens the managed root of l and the directory that is to hold its entry, creating
// missing directories without following links. The caller releases both with closeDirs(r, dir).
func (t *Toolset) makeParent(l loc) (r, dir *os.Root, err error) {
	r, err = t.openRoot(l)
	if err != nil {
		return nil, nil, err
	}
	dir, err = mkdirAllNoFollow(r, l.parentRel())
	if err != nil {
		r.Close()
		return nil, nil, pathErr(filepath.Dir(l.abs), err)
	}
	return r, dir, nil
}

// openDirNoFollow walks rel from r one directory at a time, refusing symbolic links, and
// returns the innermost directory as a Root (r itself for "."). The caller closes it (unless it
// is r).
func openDirNoFollow(r *os.Root, rel string) (*os.Root, error) {
	return walkDirsNoFollow(r, rel, false)
}

// walkDirsNoFollow is openDirNoFollow and mkdirAllNoFollow: with create, each missing component
// is made (0755) before it is opened, and opened the same way (a link there is refused).
func walkDirsNoFollow(r *os.Root, rel string, create bool) (*os.Root, error) {
	if rel == "." || rel == "" {
		return r, nil
	}
	cur := r
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		var next *os.Root
		var err error
		if create {
			if err = cur.Mkdir(c, 0o755); errors.Is(err, fs.ErrExist) {
				err = nil
			}
		}
		if err == nil {
			next, err = openSubdirNoFollow(cur, c)
		}
		if cur != r {
			cur.Close()
		}
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// openSubdirNoFollow opens one child directory of d that must not be a symbolic link, and checks
// that what was opened is what Lstat saw (no swap in between).
func openSubdirNoFollow(d *os.Root, name string) (*os.Root, error) {
	li, err := d.Lstat(name)
	if err != nil {
		return nil, err
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", name, errChanged)
	}
	if !li.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", name)
	}
	sub, err := d.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	si, err := sub.Stat(".")
	if err != nil || !os.SameFile(li, si) {
		sub.Close()
		return nil, fmt.Errorf("%s: %w", name, errChanged)
	}
	return sub, nil
}

// mkdirAllNoFollow creates rel under r (like MkdirAll) without following links, returning the
// innermost directory.
func mkdirAllNoFollow(r *os.Root, rel string) (*os.Root, error) {
	return walkDirsNoFollow(r, rel, true)
}

// openFileNoFollow opens rel under r for reading without following links in any component.
func openFileNoFollow(r *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	dir, err := openDirNoFollow(r, filepath.Dir(rel))
	if err != nil {
		return nil, nil, err
	}
	if dir != r {
		defer dir.Close()
	}
	return openInDir(dir, filepath.Base(rel))
}

// openInDir opens name in d read-only, refusing links and swaps. O_NONBLOCK: opening a FIFO
// an agent made would otherwise block until someone writes to it.
func openInDir(d *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := d.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	li, err := d.Lstat(name)
	if err != nil || li.Mode()&fs.ModeSymlink != 0 || !os.SameFile(fi, li) {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, errChanged)
	}
	return f, fi, nil
}

// isPrivate reports whether abs is inside a private path (another agent's live workspace, the
// snapshot storage, massgen's records): walks over a readable directory leave those out, as the
// permission layer refuses them one by one. The policy's deepest root decides, so the agent's
// own workspace, temp workspace and earlier turns inside a private path stay visible.
func (t *Toolset) isPrivate(abs string) bool { return t.pol.IsPrivate(abs) }
