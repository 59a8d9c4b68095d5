package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/winpath"
)

// flavour is how paths are written, resolved and compared: unixPaths (/a/b, compared exactly,
// ".." applied to the directory reached) or windowsPaths (C:\a\b, \\server\share\a, winpath's
// rules: compared without case, ".." applied to the text as Win32 does, reserved names,
// alternate data streams and trailing dots refused, 8.3 short names resolved). A Policy takes
// its flavour once, at construction, from the system it runs on (nativeFlavour); tests build
// either on any system.
type flavour uint8

const (
	unixPaths flavour = iota
	windowsPaths
)

// nativeFlavour is the flavour of the system massgen runs on.
func nativeFlavour() flavour {
	if runtime.GOOS == "windows" {
		return windowsPaths
	}
	return unixPaths
}

// absolute turns a path argument into an absolute, not yet resolved path: ~ expands, relative
// paths join base (the workspace), "" is base. On Windows a path that is neither relative nor
// absolute (\a: relative to the current drive; C:a: to drive C's current directory) is
// refused, never joined.
func (f flavour) absolute(path, base, home string) (string, error) {
	if f == unixPaths {
		return absolute(path, base, home)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	if len(path) > maxPathLen {
		return "", fmt.Errorf("path of %d bytes is too long to check (at most %d)", len(path), maxPathLen)
	}
	p, err := f.expandHome(path, home)
	if err != nil {
		return "", err
	}
	if !f.isAbs(p) {
		if base == "" {
			return "", fmt.Errorf("cannot resolve relative path %q: the agent has no workspace", path)
		}
		if p == "" {
			return base, nil
		}
		p = f.joinRel(base, p)
	}
	return p, nil
}

// expandHome expands a leading "~" (then a separator: / or, on Windows, \ too); see expandHome.
func (f flavour) expandHome(path, home string) (string, error) {
	if f == windowsPaths && strings.HasPrefix(path, `~\`) {
		path = "~/" + path[2:]
	}
	return expandHome(path, home)
}

// isAbs reports whether p is absolute. On Windows, a path with a drive letter or a leading
// separator counts: winpath.Parse then refuses those that are only partly absolute (\a, C:a),
// which must never be joined to the workspace.
func (f flavour) isAbs(p string) bool {
	if f == unixPaths {
		return strings.HasPrefix(p, "/")
	}
	return p != "" && (p[0] == '\\' || p[0] == '/' || len(p) >= 2 && p[1] == ':')
}

// joinRel joins a relative path to a base directory, not cleaned.
func (f flavour) joinRel(base, rel string) string {
	if f == unixPaths {
		return filepath.Join(base, rel)
	}
	return strings.TrimRight(base, `\/`) + `\` + rel
}

// resolve resolves an absolute path to the file the system reaches (see resolvePhysical and
// resolveWindows).
func (f flavour) resolve(fsx fsys, abs string) (string, error) {
	if f == windowsPaths {
		return resolveWindows(fsx, abs)
	}
	return resolvePhysical(fsx, abs)
}

// within reports whether p is root or lies below it. Both are clean absolute paths of this
// flavour (resolved ones); on Windows they compare without case, name by name, and a path
// winpath refuses is within nothing.
func (f flavour) within(p, root string) bool {
	if f == unixPaths {
		return pathx.Within(p, root)
	}
	pp, err := winpath.Parse(p)
	if err != nil {
		return false
	}
	rp, err := winpath.Parse(root)
	return err == nil && winpath.Within(pp, rp)
}

// parent is the directory holding q (a clean absolute path); a root is its own parent.
func (f flavour) parent(q string) string {
	if f == unixPaths {
		return parentDir(q)
	}
	vol := winVolumeLen(q)
	i := strings.LastIndexByte(q, '\\')
	if i <= vol {
		return q[:vol] + `\`
	}
	return q[:i]
}

// isRoot reports whether q is a root: "/", or a Windows volume's root (C:\, \\server\share\).
func (f flavour) isRoot(q string) bool {
	if f == unixPaths {
		return q == "/"
	}
	return len(q) == winVolumeLen(q)+1 && strings.HasSuffix(q, `\`)
}

// foldKey is p in the case names compare in where names compare without case: Windows'
// (winpath.Fold: each character upper-cased), else lower case (macOS).
func (f flavour) foldKey(p string) string {
	if f == windowsPaths {
		return winpath.Fold(p)
	}
	return strings.ToLower(p)
}

// rel is p relative to root (p within root, both clean and of this flavour), written with the
// flavour's separator; "" for root itself.
func (f flavour) rel(p, root string) string {
	if f == unixPaths {
		return strings.TrimPrefix(p, root+"/")
	}
	pp, err1 := winpath.Parse(p)
	rp, err2 := winpath.Parse(root)
	if err1 != nil || err2 != nil || !winpath.Within(pp, rp) {
		return p
	}
	return strings.Join(pp.Elems[len(rp.Elems):], `\`)
}

// clean is the lexical clean form of an absolute path, for messages (unchanged when it is not
// one: the message then shows it as given).
func (f flavour) clean(p string) string {
	if f == unixPaths {
		return filepath.Clean(p)
	}
	if c, err := winpath.Clean(p); err == nil {
		return c
	}
	return p
}

// hasDotDot reports whether p has a ".." that a tool could apply differently from the check:
// on Unix a tool may clean it textually where the kernel applies it after links; Windows
// applies it to the text itself, as the check does, so there is nothing to compare.
func (f flavour) hasDotDot(p string) bool {
	return f == unixPaths && hasDotDot(p)
}

// excluded is the first default-excluded name among the components of p (see
// ExcludedComponent), "" when none.
func (f flavour) excluded(p string) string {
	if f == unixPaths {
		return ExcludedComponent(p)
	}
	for _, c := range strings.Split(p, `\`) {
		for _, e := range DefaultExcluded {
			if winpath.Fold(c) == winpath.Fold(e) {
				return c
			}
		}
	}
	return ""
}

// winVolumeLen is the length of the volume of a clean Windows path: 2 for C:, the length of
// \\server\share for a share (0 when there is none).
func winVolumeLen(q string) int {
	if len(q) >= 2 && q[1] == ':' {
		return 2
	}
	if strings.HasPrefix(q, `\\`) {
		n := 2
		for k := 0; k < 2; k++ {
			i := strings.IndexByte(q[n:], '\\')
			if i < 0 {
				return len(q)
			}
			if k == 0 {
				n += i + 1
			} else {
				n += i
			}
		}
		return n
	}
	return 0
}

func isWinSep(c byte) bool { return c == '\\' || c == '/' }

// longNamer is the part of an fsys that resolves 8.3 short names (tests); without it the
// system does (winpath.ResolveShort).
type longNamer interface {
	LongName(path string) (string, error)
}

func resolveShort(fsx fsys, p winpath.Path) (winpath.Path, error) {
	if ln, ok := fsx.(longNamer); ok {
		return winpath.ResolveShortWith(p, ln.LongName)
	}
	return winpath.ResolveShort(p)
}

// resolveWindows resolves an absolute Windows path the way Windows opens it: the text is
// parsed and cleaned first (winpath.Parse: ".." applies to the text, as Win32 applies it;
// reserved names, streams, trailing dots and the like are refused with winpath's reason), then
// walked name by name from the volume's root; at a symbolic link or junction, its target
// (absolute, or relative to the link's directory) replaces the names walked so far and the
// text is parsed again. Names that do not exist are kept as they are. Finally the 8.3 short
// names of the result are resolved (a short-looking name that does not exist is refused). A
// reparse point that is not a link the system can read is refused: where it leads cannot be
// known.
func resolveWindows(fsx fsys, abs string) (string, error) {
	p, err := winpath.Parse(abs)
	if err != nil {
		return "", err
	}
	links := 0
walk:
	for {
		for i := range p.Elems {
			next := winpath.Path{Volume: p.Volume, Elems: p.Elems[:i+1]}
			at := next.String()
			fi, err := fsx.Lstat(at)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					break // nothing below exists either: the rest is kept as written
				}
				return "", &ResolveError{Abs: abs, At: at, Err: err}
			}
			link := fi.Mode()&fs.ModeSymlink != 0
			if !link && fi.Mode()&fs.ModeIrregular == 0 {
				if !fi.IsDir() && i < len(p.Elems)-1 {
					return "", &ResolveError{Abs: abs, At: at}
				}
				continue
			}
			links++
			if links > maxLinks {
				return "", &ResolveError{Abs: abs, At: at, Err: errors.New("too many levels of symbolic links")}
			}
			target, err := fsx.Readlink(at)
			if err != nil {
				if !link {
					err = fmt.Errorf("a reparse point that is not a link the check can follow: %w", err)
				}
				return "", &ResolveError{Abs: abs, At: at, Err: err}
			}
			restElems := p.Elems[i+1:]
			var np string
			switch {
			case target == "":
				return "", &ResolveError{Abs: abs, At: at, Err: fmt.Errorf("empty link %s", at)}
			case len(target) >= 2 && (target[1] == ':' || isWinSep(target[0]) && isWinSep(target[1])):
				np = target // absolute: a drive, a share or a \\?\ path
			case target[0] == '\\' || target[0] == '/':
				np = p.Volume + target // from the volume's root
			default:
				dir := winpath.Path{Volume: p.Volume, Elems: p.Elems[:i]}
				np = strings.TrimSuffix(dir.String(), `\`) + `\` + target
			}
			if len(restElems) > 0 {
				np = strings.TrimRight(np, `\/`) + `\` + strings.Join(restElems, `\`)
			}
			if p, err = winpath.Parse(np); err != nil {
				return "", &ResolveError{Abs: abs, At: at, Err: fmt.Errorf("link target: %w", err)}
			}
			continue walk
		}
		break
	}
	p, err = resolveShort(fsx, p)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// resolveWindowsEntry is stringResolver's entry rule on Windows: when the last name of abs is a
// link, the link itself is what a removal or move acts on.
func resolveWindowsEntry(fsx fsys, abs string) (string, error) {
	p, err := winpath.Parse(abs)
	if err != nil {
		return "", err
	}
	if len(p.Elems) == 0 || strings.HasSuffix(abs, `\`) || strings.HasSuffix(abs, "/") {
		return resolveWindows(fsx, abs)
	}
	dir := winpath.Path{Volume: p.Volume, Elems: p.Elems[:len(p.Elems)-1]}
	parent, err := resolveWindows(fsx, dir.String())
	if err != nil {
		return "", err
	}
	entry := strings.TrimSuffix(parent, `\`) + `\` + p.Elems[len(p.Elems)-1]
	if fi, err := fsx.Lstat(entry); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		ep, err := winpath.Parse(entry)
		if err != nil {
			return "", err
		}
		if ep, err = resolveShort(fsx, ep); err != nil {
			return "", err
		}
		return ep.String(), nil
	}
	return resolveWindows(fsx, abs)
}
