//go:build windows

package safefs

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/massgen-go/massgen/internal/winpath"
	"golang.org/x/sys/windows"
)

// Sep separates the names of a canonical path.
const Sep = '\\'

// sysHandle is what a walk holds an entry by.
type sysHandle = windows.Handle

// Close releases the walk's handles.
func (w *Walk) Close() {
	if w == nil {
		return
	}
	w.Dir.Close()
	closeH(w.entry)
	w.entry = windows.InvalidHandle
}

// Resolve walks abs (an absolute Windows path) once, the way the permission layer's Windows
// flavour resolves it by string (permissions.resolveWindows), so that the decision and the walk
// name paths the same way: the text is parsed and cleaned by winpath (".." applies to the text,
// as Win32 applies it; reserved names, streams and trailing dots are refused), then opened name
// by name from the volume's root, each name relative to the directory handle held from the step
// before and never following a reparse point. A symbolic link or junction is read and its target
// (absolute, or relative to the link's directory) replaces the names walked so far; the walk
// then starts again from that target's volume root. Any other reparse point is refused. 8.3
// short names are expanded to the long names of the entries opened (one that does not exist is
// refused). entry: when the last name is a link (or another reparse point), it is the result
// itself, unless abs ends in a separator.
func Resolve(abs string, entry bool) (*Walk, error) {
	if strings.IndexByte(abs, 0) >= 0 {
		return nil, errors.New("path contains a NUL byte")
	}
	p, err := winpath.Parse(abs)
	if err != nil {
		return nil, err
	}
	follow := !entry || strings.HasSuffix(abs, `\`) || strings.HasSuffix(abs, "/")
	for links := 0; ; links++ {
		w, next, err := walkOnce(abs, p, follow)
		if err != nil || next == nil {
			return w, err
		}
		if links >= MaxLinks {
			return nil, &Error{Path: abs, At: next.at, Err: syscall.ELOOP}
		}
		if p, err = next.path(p); err != nil {
			return nil, &Error{Path: abs, At: next.at, Err: err}
		}
	}
}

// linkHit is a link walkOnce found: at index i of the path, canonical at, reading target.
type linkHit struct {
	i      int
	at     string
	target string
}

// path is where the walk goes on after the link: resolveWindows' rule, to the letter.
func (l *linkHit) path(p winpath.Path) (winpath.Path, error) {
	t := l.target
	isSep := func(c byte) bool { return c == '\\' || c == '/' }
	var np string
	switch {
	case t == "":
		return winpath.Path{}, fmt.Errorf("empty link %s", l.at)
	case len(t) >= 2 && (t[1] == ':' || isSep(t[0]) && isSep(t[1])):
		np = t // a drive, a share or a \\?\ path
	case isSep(t[0]):
		np = p.Volume + t // from the volume's root
	default:
		dir := winpath.Path{Volume: p.Volume, Elems: p.Elems[:l.i]}
		np = strings.TrimSuffix(dir.String(), `\`) + `\` + t
	}
	if rest := p.Elems[l.i+1:]; len(rest) > 0 {
		np = strings.TrimRight(np, `\/`) + `\` + strings.Join(rest, `\`)
	}
	q, err := winpath.Parse(np)
	if err != nil {
		return winpath.Path{}, fmt.Errorf("link target: %w", err)
	}
	return q, nil
}

// openRoot opens the root directory of a volume (C:, \\server\share).
func openRoot(volume string) (windows.Handle, error) {
	nt := `\??\` + volume + `\`
	if strings.HasPrefix(volume, `\\`) {
		nt = `\??\UNC\` + volume[2:] + `\`
	}
	return ntOpen(0, nt, accessDir, shareHeld, windows.FILE_OPEN, windows.FILE_DIRECTORY_FILE, 0)
}

// walkOnce walks p from its volume's root until it ends, a name is missing, or a link is to be
// followed (returned: the caller goes on from its target).
func walkOnce(abs string, p winpath.Path, follow bool) (w *Walk, link *linkHit, err error) {
	p = winpath.Path{Volume: p.Volume, Elems: append([]string(nil), p.Elems...)}
	vroot := winpath.Path{Volume: p.Volume}
	root, err := openRoot(p.Volume)
	if err != nil {
		return nil, nil, &Error{Path: abs, At: vroot.String(), Err: err}
	}
	held := []windows.Handle{root} // held[i]: the directory holding p.Elems[i]
	kept := map[windows.Handle]bool{}
	defer func() {
		for _, h := range held {
			if !kept[h] {
				closeH(h)
			}
		}
	}()
	at := func(i int) string { return winpath.Path{Volume: p.Volume, Elems: p.Elems[:i+1]}.String() }
	n := len(p.Elems)
	if n == 0 {
		info, err := statHandle(root)
		if err != nil {
			return nil, nil, &Error{Path: abs, At: vroot.String(), Err: err}
		}
		dup, err := dupHandle(root)
		if err != nil {
			return nil, nil, &Error{Path: abs, At: vroot.String(), Err: err}
		}
		kept[root] = true
		return &Walk{Path: p.String(), Dir: &Dir{h: root, Path: p.String()}, Exists: true, Info: info, entry: dup}, nil, nil
	}
	for i := 0; i < n; i++ {
		comp, last := p.Elems[i], i == n-1
		h, info, err := step(held[i], comp, last)
		if notExist(err) {
			// Nothing below exists either: the rest is kept as written, but a short-looking
			// name there cannot be known to be what it will be (winpath.ResolveShort's rule).
			for _, e := range p.Elems[i:] {
				if winpath.ShortNameLike(e) {
					return nil, nil, &winpath.Error{Path: p.String(), Reason: fmt.Sprintf(
						"%q looks like an 8.3 short name and does not exist yet, so what it stands for cannot be known", e)}
				}
			}
			dir := held[i]
			kept[dir] = true
			return &Walk{Path: p.String(), Dir: &Dir{h: dir, Path: winpath.Path{Volume: p.Volume, Elems: p.Elems[:i]}.String()},
				Missing: append([]string(nil), p.Elems[i:n-1]...), Name: p.Elems[n-1], entry: windows.InvalidHandle}, nil, nil
		}
		if err != nil {
			return nil, nil, &Error{Path: abs, At: at(i), Err: err}
		}
		if info.IsLink() || !info.IsDir() && !info.IsRegular() {
			if last && !follow {
				held = append(held, h)
				break
			}
			if !info.IsLink() {
				closeH(h)
				return nil, nil, &Error{Path: abs, At: at(i), Err: errors.New("a reparse point that is not a symbolic link or junction; where it leads cannot be known")}
			}
			target, err := readReparse(h)
			closeH(h)
			if err != nil {
				return nil, nil, &Error{Path: abs, At: at(i), Err: err}
			}
			return nil, &linkHit{i: i, at: at(i), target: target}, nil
		}
		if !info.IsDir() && !last {
			closeH(h)
			return nil, nil, &Error{Path: abs, At: at(i), Err: syscall.ENOTDIR}
		}
		if winpath.ShortNameLike(comp) {
			long, err := longName(h)
			if err == nil {
				err = winpath.CheckName(long)
			}
			if err != nil {
				closeH(h)
				return nil, nil, &Error{Path: abs, At: at(i), Err: fmt.Errorf("cannot resolve the 8.3 short name %q: %w", comp, err)}
			}
			p.Elems[i] = long
		}
		held = append(held, h)
		if last {
			break
		}
	}
	w = &Walk{Path: p.String(), Dir: &Dir{h: held[n-1], Path: winpath.Path{Volume: p.Volume, Elems: p.Elems[:n-1]}.String()},
		Name: p.Elems[n-1], Exists: true, entry: held[n]}
	w.Info, err = statHandle(held[n])
	if err != nil {
		return nil, nil, &Error{Path: abs, At: at(n - 1), Err: err}
	}
	kept[held[n-1]] = true
	if w.Info.IsDir() {
		kept[held[n]] = true
	} else {
		// Only directories are held, as on Unix without O_PATH: an open handle on a file,
		// even one sharing deletion, stops the file being replaced by a rename (classic
		// semantics). Its users reopen it by name and check it is the same (OpenFileSame).
		w.entry = windows.InvalidHandle
	}
	return w, nil, nil
}

// step opens one name in the directory dir without following it: as a directory held for the
// walk (not to be renamed or deleted meanwhile; the last name, which the operation may remove or
// move, with FILE_SHARE_DELETE), else as any other entry, described only (no right to read it:
// its user reopens it by name and checks it is the same, OpenFileSame).
func step(dir windows.Handle, name string, last bool) (windows.Handle, Info, error) {
	share := uint32(shareHeld)
	if last {
		share = shareAll
	}
	for try := 0; ; try++ {
		h, err := ntOpen(dir, name, accessDir, share, windows.FILE_OPEN, windows.FILE_DIRECTORY_FILE, 0)
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			// Not listable, perhaps still traversable.
			h, err = ntOpen(dir, name, windows.FILE_TRAVERSE|accessAttrs, share, windows.FILE_OPEN, windows.FILE_DIRECTORY_FILE, 0)
		}
		if err == nil {
			return described(h)
		}
		if !errors.Is(err, syscall.ENOTDIR) {
			return windows.InvalidHandle, Info{}, err
		}
		h, err = ntOpen(dir, name, accessAttrs, shareAll, windows.FILE_OPEN, windows.FILE_NON_DIRECTORY_FILE, 0)
		if err == nil {
			return described(h)
		}
		if !errors.Is(err, syscall.EISDIR) {
			return windows.InvalidHandle, Info{}, err
		}
		// A directory after all: swapped in between the two opens. Try again, a few times.
		if try >= 3 {
			return windows.InvalidHandle, Info{}, ErrChanged
		}
	}
}

// described returns h with its Info (h closed when that cannot be read).
func described(h windows.Handle) (windows.Handle, Info, error) {
	info, err := statHandle(h)
	if err != nil {
		closeH(h)
		return windows.InvalidHandle, Info{}, err
	}
	return h, info, nil
}

func dupHandle(h windows.Handle) (windows.Handle, error) {
	p := windows.CurrentProcess()
	var d windows.Handle
	if err := windows.DuplicateHandle(p, h, p, &d, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return windows.InvalidHandle, err
	}
	return d, nil
}
