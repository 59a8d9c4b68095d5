package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// maxLinks bounds symlink chains (Linux uses 40); more is a loop or an attack.
const maxLinks = 40

// maxPathLen bounds a path argument (4 x PATH_MAX).
const maxPathLen = 16 << 10

// fsys is the little filesystem access resolution needs; tests may substitute it.
type fsys interface {
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) Readlink(name string) (string, error)   { return os.Readlink(name) }

// expandHome expands a leading "~" or "~/". "~user" is refused: we cannot know which directory
// the tool would use, so we do not guess.
func expandHome(path, home string) (string, error) {
	if !strings.HasPrefix(path, "~") {
		return path, nil
	}
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return "", fmt.Errorf("cannot resolve %q: ~user paths are not supported", path)
	}
	if home == "" {
		return "", fmt.Errorf("cannot resolve %q: no home directory", path)
	}
	return home + path[1:], nil
}

// absolute turns path into an absolute, not yet symlink-resolved path: ~ expands, relative paths
// join base (the workspace). An empty path means base itself.
func absolute(path, base, home string) (string, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	if len(path) > maxPathLen {
		// The kernel refuses paths past PATH_MAX (4096) anyway; judging one costs a lookup per
		// component, so a huge one is refused rather than walked.
		return "", fmt.Errorf("path of %d bytes is too long to check (at most %d)", len(path), maxPathLen)
	}
	p, err := expandHome(path, home)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		if base == "" {
			return "", fmt.Errorf("cannot resolve relative path %q: the agent has no workspace", path)
		}
		p = base + "/" + p
	}
	return p, nil
}

// resolvePhysical resolves an absolute path the way the kernel walks it: component by
// component, following every symlink (dangling ones by their target text), applying ".." to the
// directory actually reached. Components that do not exist are appended as they are. Any error
// other than "does not exist" (permission denied, not a directory, a loop) is returned: the caller
// denies.
func resolvePhysical(fsx fsys, abs string) (string, error) {
	if !strings.HasPrefix(abs, "/") {
		return "", fmt.Errorf("not an absolute path: %q", abs)
	}
	rest := abs
	cur := "/"
	links := 0
	missing := false // once a component is missing, nothing below it exists
	for rest != "" {
		var comp string
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp, rest = rest[:i], rest[i+1:]
		} else {
			comp, rest = rest, ""
		}
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = parentDir(cur)
			// Back above a missing component, the tree exists again and must be looked at.
			missing = false
			continue
		}
		next := joinClean(cur, comp)
		if missing {
			cur = next
			continue
		}
		fi, err := fsx.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				missing = true
				cur = next
				continue
			}
			return "", &ResolveError{Abs: abs, At: next, Err: err}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && !onlyDotsAndSlashes(rest) {
				// A file used as a directory: the kernel would refuse; so do we.
				return "", &ResolveError{Abs: abs, At: next}
			}
			cur = next
			continue
		}
		links++
		if links > maxLinks {
			return "", &ResolveError{Abs: abs, At: next, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := fsx.Readlink(next)
		if err != nil {
			return "", &ResolveError{Abs: abs, At: next, Err: err}
		}
		if target == "" {
			return "", &ResolveError{Abs: abs, At: next, Err: fmt.Errorf("empty symlink %s", next)}
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		if rest == "" {
			rest = target
		} else {
			rest = target + "/" + rest
		}
	}
	return cur, nil
}

func onlyDotsAndSlashes(s string) bool {
	for _, c := range strings.Split(s, "/") {
		if c != "" && c != "." {
			return false
		}
	}
	return true
}

// parentDir of a clean absolute path, without allocating.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func joinClean(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// stringResolver resolves by string with Lstat and Readlink: for commands and external tools,
// where the sandbox or the server is the actor, and for one-shot checks.
type stringResolver struct {
	fs   fsys
	flav flavour
}

func (r stringResolver) Resolve(_, abs string, entry bool) (string, error) {
	if r.flav == windowsPaths {
		if entry {
			return resolveWindowsEntry(r.fs, abs)
		}
		return resolveWindows(r.fs, abs)
	}
	if !entry || strings.HasSuffix(abs, "/") || strings.HasSuffix(abs, "/.") || hasDotDot(abs) {
		return resolvePhysical(r.fs, abs)
	}
	// An entry that is removed or moved: when its last component is a link, the link itself
	// goes (its target is untouched), so the link is what is judged.
	clean := filepath.Clean(abs)
	name := filepath.Base(clean)
	if name == "/" {
		return resolvePhysical(r.fs, abs)
	}
	parent, err := resolvePhysical(r.fs, filepath.Dir(clean))
	if err != nil {
		return "", err
	}
	entryPath := joinClean(parent, name)
	if fi, err := r.fs.Lstat(entryPath); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return entryPath, nil
	}
	return resolvePhysical(r.fs, abs)
}

// memoFS remembers Lstat and Readlink answers. Only for one-shot checks of a tree that does not
// change while deciding (massgen permissions check --batch): a run uses the live filesystem.
type memoFS struct {
	mu    sync.Mutex
	stat  map[string]memoStat
	links map[string]memoLink
}

type memoStat struct {
	fi  fs.FileInfo
	err error
}

type memoLink struct {
	target string
	err    error
}

func (m *memoFS) Lstat(name string) (fs.FileInfo, error) {
	m.mu.Lock()
	r, ok := m.stat[name]
	m.mu.Unlock()
	if ok {
		return r.fi, r.err
	}
	fi, err := os.Lstat(name)
	m.mu.Lock()
	if len(m.stat) < 1<<20 {
		m.stat[name] = memoStat{fi, err}
	}
	m.mu.Unlock()
	return fi, err
}

func (m *memoFS) Readlink(name string) (string, error) {
	m.mu.Lock()
	r, ok := m.links[name]
	m.mu.Unlock()
	if ok {
		return r.target, r.err
	}
	t, err := os.Readlink(name)
	m.mu.Lock()
	if len(m.links) < 1<<20 {
		m.links[name] = memoLink{t, err}
	}
	m.mu.Unlock()
	return t, err
}
