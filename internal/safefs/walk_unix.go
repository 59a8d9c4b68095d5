//go:build linux || darwin

package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Sep separates the names of a canonical path.
const Sep = '/'

// sysHandle is what a walk holds an entry by: a descriptor (-1: none).
type sysHandle = int

// feat is the set of system features a walk and the Dirs it yields use. It is fixed when the
// walk starts (native for the platform, sys_*.go); the tests force the portable strategy on
// Linux so that the code macOS runs is exercised there too.
type feat uint8

const (
	// featFast: one open that refuses every link on the way to the parent (openat2
	// RESOLVE_NO_SYMLINKS, O_NOFOLLOW_ANY) before the component walk.
	featFast feat = 1 << iota
	// featPath: O_PATH handles on every entry (files and links too, without permission to read
	// them); without it directories are opened for reading and other entries are reopened by
	// name and checked against the walk's lstat.
	featPath
	// featTmpfile: writes go to an unnamed O_TMPFILE file linked in; without it, a named one.
	featTmpfile
	// featGetdents: listings through getdents; without it through os.File.Readdirnames.
	featGetdents
)

// dirFlags opens a directory the walk holds: an O_PATH handle, or the directory open for reading
// (O_NONBLOCK: a FIFO swapped in cannot block, though O_DIRECTORY refuses it first).
func (f feat) dirFlags() int {
	if f&featPath != 0 {
		return oPath | unix.O_DIRECTORY | unix.O_CLOEXEC
	}
	return unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_CLOEXEC
}

// Close releases the walk's descriptors.
func (w *Walk) Close() {
	if w == nil {
		return
	}
	w.Dir.Close()
	if w.entry >= 0 {
		unix.Close(w.entry)
		w.entry = -1
	}
}

// Resolve walks abs (absolute; "." and ".." allowed) once. entry: when the last component is a
// symbolic link, the link itself is the result (delete, move), unless the path ends in "/".
// A failure is an *Error naming where the walk stopped; a missing component is not a failure.
func Resolve(abs string, entry bool) (*Walk, error) { return resolve(native, abs, entry) }

func resolve(f feat, abs string, entry bool) (*Walk, error) {
	if !strings.HasPrefix(abs, "/") {
		return nil, fmt.Errorf("not an absolute path: %q", abs)
	}
	if strings.IndexByte(abs, 0) >= 0 {
		return nil, errors.New("path contains a NUL byte")
	}
	if f&featFast != 0 {
		if w, done, err := fastWalk(f, abs, entry); done {
			return w, err
		}
	}
	return slowWalk(f, abs, entry)
}

// fastWalk resolves a plain path (no "..", no trailing slash) with one open that refuses every
// link on the way to the parent; any surprise leaves the work to slowWalk.
func fastWalk(f feat, abs string, entry bool) (*Walk, bool, error) {
	if hasDotDot(abs) || strings.HasSuffix(abs, "/") || strings.HasSuffix(abs, "/.") {
		return nil, false, nil
	}
	clean := path.Clean(abs)
	if clean == "/" {
		return nil, false, nil
	}
	i := strings.LastIndexByte(clean, '/')
	parent, name := clean[:i], clean[i+1:]
	if parent == "" {
		parent = "/"
	}
	dfd, err := openNoLinks(parent, f.dirFlags())
	if err != nil {
		return nil, false, nil
	}
	fd, info, err := step(f, dfd, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return &Walk{Path: clean, Dir: &Dir{fd: dfd, f: f, Path: parent}, Name: name, entry: -1}, true, nil
	case err != nil:
		unix.Close(dfd)
		return nil, true, &Error{Path: abs, At: clean, Err: err}
	case info.IsLink() && !entry:
		closeFd(fd)
		unix.Close(dfd)
		return nil, false, nil
	}
	return &Walk{Path: clean, Dir: &Dir{fd: dfd, f: f, Path: parent}, Name: name, Exists: true, Info: info, entry: fd}, true, nil
}

type frame struct {
	name   string
	exists bool
	fd     int // the entry's descriptor, or -1 (missing; or, without O_PATH, not a directory)
	info   Info
}

// slowWalk is the component-by-component walk: each step opens (or, without O_PATH, describes)
// one name without following it in the directory held from the step before; a link is read and
// its target walked in turn; ".." returns to the descriptor it came from.
func slowWalk(f feat, abs string, entry bool) (w *Walk, err error) {
	root, err := openRetry(unix.AT_FDCWD, "/", f.dirFlags())
	if err != nil {
		return nil, &Error{Path: abs, At: "/", Err: err}
	}
	var stack []frame
	kept := map[int]bool{}
	defer func() {
		if !kept[root] {
			unix.Close(root)
		}
		for _, f := range stack {
			if f.fd >= 0 && !kept[f.fd] {
				unix.Close(f.fd)
			}
		}
	}()
	canon := func(n int) string {
		if n == 0 {
			return "/"
		}
		var b strings.Builder
		for _, f := range stack[:n] {
			b.WriteByte('/')
			b.WriteString(f.name)
		}
		return b.String()
	}
	// cur is the directory the next component is looked up in (-1: below a missing one; only
	// directories are pushed before another component).
	cur := func() int {
		if n := len(stack); n > 0 {
			return stack[n-1].fd
		}
		return root
	}
	pop := func() {
		if n := len(stack); n > 0 {
			closeFd(stack[n-1].fd)
			stack = stack[:n-1]
		}
	}
	links := 0
	rest := abs
	for rest != "" {
		comp, r, slash := splitFirst(rest)
		rest = r
		switch comp {
		case "", ".":
			continue
		case "..":
			pop()
			continue
		}
		if cur() < 0 {
			// Below a missing component nothing exists: appended as given.
			stack = append(stack, frame{name: comp, fd: -1})
			continue
		}
		fd, info, err := step(f, cur(), comp)
		if errors.Is(err, unix.ENOENT) {
			stack = append(stack, frame{name: comp, fd: -1})
			continue
		}
		if err != nil {
			return nil, &Error{Path: abs, At: Join(canon(len(stack)), comp), Err: err}
		}
		if info.IsLink() {
			if entry && rest == "" && !slash {
				stack = append(stack, frame{name: comp, exists: true, fd: fd, info: info})
				break
			}
			links++
			target, lerr := readLink(cur(), fd, comp, info)
			closeFd(fd)
			switch {
			case links > MaxLinks:
				return nil, &Error{Path: abs, At: Join(canon(len(stack)), comp), Err: unix.ELOOP}
			case lerr != nil:
				return nil, &Error{Path: abs, At: Join(canon(len(stack)), comp), Err: lerr}
			case target == "":
				return nil, &Error{Path: abs, At: Join(canon(len(stack)), comp), Err: unix.ENOENT}
			}
			if target[0] == '/' {
				for len(stack) > 0 {
					pop()
				}
			}
			if slash {
				rest = target + "/" + rest
			} else {
				rest = target
			}
			continue
		}
		if !info.IsDir() && slash {
			// A file used as a directory: the kernel refuses, so do we.
			closeFd(fd)
			return nil, &Error{Path: abs, At: Join(canon(len(stack)), comp), Err: unix.ENOTDIR}
		}
		// Not a directory and not followed by a slash: the last component, so nothing is looked
		// up below a frame without a descriptor.
		stack = append(stack, frame{name: comp, exists: true, fd: fd, info: info})
	}
	n := len(stack)
	if n == 0 {
		var st unix.Stat_t
		if err := unix.Fstat(root, &st); err != nil {
			return nil, &Error{Path: abs, At: "/", Err: err}
		}
		fd, err := openRetry(unix.AT_FDCWD, "/", f.dirFlags())
		if err != nil {
			return nil, &Error{Path: abs, At: "/", Err: err}
		}
		kept[root] = true
		return &Walk{Path: "/", Dir: &Dir{fd: root, f: f, Path: "/"}, Exists: true, Info: infoOf(&st), entry: fd}, nil
	}
	// The stack is existing frames, then missing ones.
	k := n - 1
	for k >= 0 && !stack[k].exists {
		k--
	}
	dirFd, dirPath := root, "/"
	last := stack[n-1]
	w = &Walk{Path: canon(n), Name: last.name, entry: -1}
	if last.exists {
		if n >= 2 {
			dirFd, dirPath = stack[n-2].fd, canon(n-1)
		}
		w.Exists, w.Info, w.entry = true, last.info, last.fd
		kept[last.fd] = true
	} else {
		if k >= 0 {
			dirFd, dirPath = stack[k].fd, canon(k+1)
		}
		for _, f := range stack[k+1 : n-1] {
			w.Missing = append(w.Missing, f.name)
		}
	}
	kept[dirFd] = true
	w.Dir = &Dir{fd: dirFd, f: f, Path: dirPath}
	return w, nil
}

// step looks up one name in dirfd without following it. With O_PATH it opens whatever is there
// and stats the handle. Without, it opens the name as a directory (O_NOFOLLOW) and stats that;
// anything else (a link, a file) is described by lstat and not opened (fd -1): its user reopens
// it by name and checks it is still the same (OpenFileSame, readLink).
func step(f feat, dirfd int, name string) (int, Info, error) {
	if f&featPath != 0 {
		fd, err := openPath(dirfd, name)
		if err != nil {
			return -1, Info{}, err
		}
		return statFd(fd)
	}
	for try := 0; ; try++ {
		fd, err := openDirAt(dirfd, name, f.dirFlags()|unix.O_NOFOLLOW)
		if err == nil {
			return statFd(fd)
		}
		if !notDirErr(err) {
			return -1, Info{}, err
		}
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return -1, Info{}, err
		}
		if info := infoOf(&st); !info.IsDir() {
			return -1, info, nil
		}
		// A directory after all: it was swapped in between the two calls. Try again, a few
		// times, then give up rather than loop against a swapper.
		if try >= 3 {
			return -1, Info{}, ErrChanged
		}
	}
}

// notDirErr reports whether an O_DIRECTORY|O_NOFOLLOW open failed because the name is not a
// directory: ENOTDIR, or a link (ELOOP; EMLINK on the BSDs; ENOTSUP/EOPNOTSUPP as os.Root
// treats them).
func notDirErr(err error) bool {
	return errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) ||
		errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}

// statFd stats the descriptor step opened (closing it on failure).
func statFd(fd int) (int, Info, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, Info{}, err
	}
	return fd, infoOf(&st), nil
}

// readLink reads the link step found: from its O_PATH handle, or by name in dirfd, checking the
// name still is that link afterwards (a link swapped in between would be read in its place). The
// check is for consistency, not safety: an inode number reused by a new link within the
// timestamps' granularity passes it, but whatever target is read, the walk goes on from it
// component by component, and Path says where it went.
func readLink(dirfd, fd int, name string, was Info) (string, error) {
	if fd >= 0 {
		return readlinkFd(fd)
	}
	target, err := readlinkAt(dirfd, name)
	if err != nil {
		if errors.Is(err, unix.EINVAL) {
			return "", ErrChanged // no longer a link
		}
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", err
	}
	if now := infoOf(&st); !now.IsLink() || !now.Same(was) || now.Size != was.Size || !now.Ctime.Equal(was.Ctime) {
		return "", ErrChanged
	}
	return target, nil
}

// readlinkAt reads the link name in dirfd ("" with an O_PATH handle on the link itself).
func readlinkAt(dirfd int, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= 1<<16 {
			return "", unix.ENAMETOOLONG
		}
		buf = make([]byte, 2*len(buf))
	}
}

func openRetry(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
}

func closeFd(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

func infoOf(st *unix.Stat_t) Info {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	// Dev and Nlink differ in type between Linux and macOS.
	return Info{Mode: mode, Size: st.Size, Dev: uint64(st.Dev), Ino: st.Ino, Nlink: uint64(st.Nlink), Uid: st.Uid,
		Mtime: time.Unix(st.Mtim.Unix()), Atime: time.Unix(st.Atim.Unix()), Ctime: time.Unix(st.Ctim.Unix())}
}
