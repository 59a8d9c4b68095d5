//go:build linux

package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

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

const pathFlags = unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC

// Resolve walks abs (absolute; "." and ".." allowed) once. entry: when the last component is a
// symbolic link, the link itself is the result (delete, move), unless the path ends in "/".
// A failure is an *Error naming where the walk stopped; a missing component is not a failure.
func Resolve(abs string, entry bool) (*Walk, error) {
	if !strings.HasPrefix(abs, "/") {
		return nil, fmt.Errorf("not an absolute path: %q", abs)
	}
	if strings.IndexByte(abs, 0) >= 0 {
		return nil, errors.New("path contains a NUL byte")
	}
	if w, done, err := fastWalk(abs, entry); done {
		return w, err
	}
	return slowWalk(abs, entry)
}

// fastWalk resolves a plain path (no "..", no trailing slash) with one openat2 that refuses
// every link on the way to the parent; any surprise leaves the work to slowWalk.
func fastWalk(abs string, entry bool) (*Walk, bool, error) {
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
	dfd, err := openat2(unix.AT_FDCWD, parent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC,
		unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return nil, false, nil
	}
	fd, info, err := step(dfd, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return &Walk{Path: clean, Dir: &Dir{fd: dfd, Path: parent}, Name: name, entry: -1}, true, nil
	case err != nil:
		unix.Close(dfd)
		return nil, true, &Error{Path: abs, At: clean, Err: err}
	case info.IsLink() && !entry:
		unix.Close(fd)
		unix.Close(dfd)
		return nil, false, nil
	}
	return &Walk{Path: clean, Dir: &Dir{fd: dfd, Path: parent}, Name: name, Exists: true, Info: info, entry: fd}, true, nil
}

type frame struct {
	name string
	fd   int // -1: missing
	info Info
}

// slowWalk is the component-by-component walk: each step opens one name with O_PATH|O_NOFOLLOW
// in the directory held from the step before; a link is read from its own descriptor and its
// target walked in turn; ".." returns to the descriptor it came from.
func slowWalk(abs string, entry bool) (w *Walk, err error) {
	root, err := openRetry(unix.AT_FDCWD, "/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC)
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
	cur := func() int {
		if n := len(stack); n > 0 {
			return stack[n-1].fd
		}
		return root
	}
	pop := func() {
		if n := len(stack); n > 0 {
			if fd := stack[n-1].fd; fd >= 0 {
				unix.Close(fd)
			}
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
		fd, info, err := step(cur(), comp)
		if errors.Is(err, unix.ENOENT) {
			stack = append(stack, frame{name: comp, fd: -1})
			continue
		}
		if err != nil {
			return nil, &Error{Path: abs, At: Join(canon(len(stack)), comp), Err: err}
		}
		if info.IsLink() {
			if entry && rest == "" && !slash {
				stack = append(stack, frame{name: comp, fd: fd, info: info})
				break
			}
			links++
			target, lerr := readlinkFd(fd)
			unix.Close(fd)
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
			unix.Close(fd)
			return nil, &Error{Path: abs, At: Join(canon(len(stack)), comp), Err: unix.ENOTDIR}
		}
		stack = append(stack, frame{name: comp, fd: fd, info: info})
	}
	n := len(stack)
	if n == 0 {
		var st unix.Stat_t
		if err := unix.Fstat(root, &st); err != nil {
			return nil, &Error{Path: abs, At: "/", Err: err}
		}
		fd, err := openRetry(unix.AT_FDCWD, "/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC)
		if err != nil {
			return nil, &Error{Path: abs, At: "/", Err: err}
		}
		kept[root] = true
		return &Walk{Path: "/", Dir: &Dir{fd: root, Path: "/"}, Exists: true, Info: infoOf(&st), entry: fd}, nil
	}
	// The stack is existing frames, then missing ones.
	k := n - 1
	for k >= 0 && stack[k].fd < 0 {
		k--
	}
	dirFd, dirPath := root, "/"
	last := stack[n-1]
	w = &Walk{Path: canon(n), Name: last.name, entry: -1}
	if last.fd >= 0 {
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
	w.Dir = &Dir{fd: dirFd, Path: dirPath}
	return w, nil
}

// step opens one name in dirfd without following it and stats what it opened.
func step(dirfd int, name string) (int, Info, error) {
	fd, err := openat2(dirfd, name, pathFlags, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return -1, Info{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, Info{}, err
	}
	return fd, infoOf(&st), nil
}

// openat2 falls back to openat on kernels before 5.6 (ENOSYS) and under seccomp profiles that
// refuse it (EPERM), for one component only: flags then hold O_NOFOLLOW, and a multi-component
// open, which would follow links, is refused so that the caller walks step by step.
func openat2(dirfd int, name string, flags int, resolve uint64) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, name, &unix.OpenHow{Flags: uint64(flags), Resolve: resolve})
		switch {
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			if strings.Contains(name, "/") {
				return -1, unix.ENOSYS
			}
			return openRetry(dirfd, name, flags)
		}
		return fd, err
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

// readlinkFd reads the target of the link held by an O_PATH descriptor.
func readlinkFd(fd int) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(fd, "", buf)
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
	return Info{Mode: mode, Size: st.Size, Dev: st.Dev, Ino: st.Ino, Nlink: uint64(st.Nlink),
		Mtime: time.Unix(st.Mtim.Unix()), Atime: time.Unix(st.Atim.Unix()), Ctime: time.Unix(st.Ctim.Unix())}
}
