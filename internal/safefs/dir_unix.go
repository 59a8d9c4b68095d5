//go:build linux || darwin

package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"

	"golang.org/x/sys/unix"
)

// Dir is an open directory and the canonical path it was reached by. Every operation names one
// entry in it (*at system calls): nothing is resolved again by string.
type Dir struct {
	fd   int
	f    feat // the walk's strategy (walk_unix.go)
	Path string
}

// Close releases the descriptor.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// File hands the directory over as an *os.File opened for reading (for a child process's
// working directory); d stays open and the caller closes both.
func (d *Dir) File() (*os.File, error) {
	fd, err := openRetry(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, d.pathErr("open", ".", err)
	}
	return os.NewFile(uintptr(fd), d.Path), nil
}

// Dup hands over a duplicate of d's own descriptor as an *os.File (an O_PATH handle stays one):
// unlike File it needs no read permission on the directory, so one the owner made search-only
// (--x) is handed over all the same. The *at calls work on it; listing it may not.
func (d *Dir) Dup() (*os.File, error) {
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, d.pathErr("dup", ".", err)
	}
	return os.NewFile(uintptr(fd), d.Path), nil
}

// FromFile is a Dir on the directory f has open (its own descriptor, a duplicate), reached by
// path; f stays the caller's.
func FromFile(f *os.File, path string) (*Dir, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "dup", Path: path, Err: err}
	}
	return &Dir{fd: fd, f: native, Path: path}, nil
}

// Lstat describes name in d without following it.
func (d *Dir) Lstat(name string) (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, d.pathErr("lstat", name, err)
	}
	return infoOf(&st), nil
}

// Stat describes d itself.
func (d *Dir) Stat() (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return Info{}, d.pathErr("stat", ".", err)
	}
	return infoOf(&st), nil
}

// Sub opens the directory name in d; a link there is refused (ErrChanged).
func (d *Dir) Sub(name string) (*Dir, error) {
	if !ValidName(name) {
		return nil, d.pathErr("open", name, unix.EINVAL)
	}
	fd, err := openDirAt(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if notDirErr(err) {
		if li, lerr := d.Lstat(name); lerr == nil && li.IsLink() {
			return nil, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
		}
	}
	if err != nil {
		return nil, d.pathErr("open", name, err)
	}
	return &Dir{fd: fd, f: d.f, Path: Join(d.Path, name)}, nil
}

// Entry is one directory entry with its lstat.
type Entry struct {
	Name string
	Info Info
}

// Entries lists d (sorted by name) with each entry's lstat; entries that vanish while listing
// are left out. At most max entries are returned (max <= 0: all); more reports whether some were
// left out.
func (d *Dir) Entries(max int) (ents []Entry, more bool, err error) {
	fd, err := openRetry(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, false, d.pathErr("open", ".", err)
	}
	dir := os.NewFile(uintptr(fd), d.Path)
	defer dir.Close()
	var names []string
	if d.f&featGetdents != 0 {
		names, err = getdents(fd)
	} else {
		names, err = dir.Readdirnames(-1)
	}
	if err != nil {
		return nil, false, d.pathErr("readdir", ".", err)
	}
	sort.Strings(names)
	for _, n := range names {
		if max > 0 && len(ents) >= max {
			return ents, true, nil
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		ents = append(ents, Entry{Name: n, Info: infoOf(&st)})
	}
	return ents, false, nil
}

// typedEntries lists d (sorted by name) with each entry's type alone (Info.Mode's type bits)
// where the listing tells it (getdents' d_type); elsewhere, and for an entry of unknown type,
// with its lstat.
func (d *Dir) typedEntries() ([]Entry, error) {
	if d.f&featGetdents == 0 {
		ents, _, err := d.Entries(0)
		return ents, err
	}
	fd, err := openRetry(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, d.pathErr("open", ".", err)
	}
	defer unix.Close(fd)
	ents, known, err := getdentsTyped(fd)
	if err != nil {
		return nil, d.pathErr("readdir", ".", err)
	}
	out := ents[:0]
	for i, e := range ents {
		if !known[i] {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue // vanished
			}
			e.Info = infoOf(&st)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FromFD is a Dir on the directory descriptor fd (an O_PATH handle will do), reached by path: its
// own duplicate; fd stays the caller's.
func FromFD(fd uintptr, path string) (*Dir, error) {
	nfd, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "dup", Path: path, Err: err}
	}
	return &Dir{fd: nfd, f: native, Path: path}, nil
}

// Readlink reads the link name in d.
func (d *Dir) Readlink(name string) (string, error) {
	target, err := readlinkAt(d.fd, name)
	if err != nil {
		return "", d.pathErr("readlink", name, err)
	}
	return target, nil
}

// OpenFile opens the regular file name in d for reading; a link, directory or special file there
// is refused. O_NONBLOCK: a FIFO swapped in must not block the call.
func (d *Dir) OpenFile(name string) (*os.File, Info, error) {
	fd, err := openRetry(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) { // EMLINK: a link, on the BSDs
		return nil, Info{}, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
	}
	if err != nil {
		return nil, Info{}, d.pathErr("open", name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, Info{}, d.pathErr("stat", name, err)
	}
	info := infoOf(&st)
	if !info.IsRegular() {
		unix.Close(fd)
		if info.IsDir() {
			return nil, info, fmt.Errorf("%s is a directory", Join(d.Path, name))
		}
		return nil, info, fmt.Errorf("%s is not a regular file", Join(d.Path, name))
	}
	// Reads block normally from here on (regular files never block anyway).
	_ = unix.SetNonblock(fd, false)
	return os.NewFile(uintptr(fd), Join(d.Path, name)), info, nil
}

// lexicalDotDot: ".." in a path is applied to the directory actually reached.
const lexicalDotDot = false

// openFileBeneath opens the regular file rel (several names) below d in one call that refuses
// every link on the way and at the end; ok is false where the system cannot (then the caller
// walks).
func (d *Dir) openFileBeneath(rel string) (f *os.File, info Info, ok bool, err error) {
	if d.f&featFast == 0 {
		return nil, Info{}, false, nil
	}
	fd, err := openBeneath(d.fd, rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC)
	switch {
	case errors.Is(err, unix.ENOSYS):
		return nil, Info{}, false, nil
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) || errors.Is(err, unix.EXDEV):
		return nil, Info{}, true, fmt.Errorf("%s: %w", JoinRel(d.Path, rel), ErrChanged)
	case err != nil:
		return nil, Info{}, true, &fs.PathError{Op: "open", Path: JoinRel(d.Path, rel), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, Info{}, true, &fs.PathError{Op: "stat", Path: JoinRel(d.Path, rel), Err: err}
	}
	info = infoOf(&st)
	if !info.IsRegular() {
		unix.Close(fd)
		if info.IsDir() {
			return nil, info, true, fmt.Errorf("%s is a directory", JoinRel(d.Path, rel))
		}
		return nil, info, true, fmt.Errorf("%s is not a regular file", JoinRel(d.Path, rel))
	}
	_ = unix.SetNonblock(fd, false)
	return os.NewFile(uintptr(fd), JoinRel(d.Path, rel)), info, true, nil
}

// Mkdir creates the directory name in d.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	if !ValidName(name) {
		return d.pathErr("mkdir", name, unix.EINVAL)
	}
	if err := unix.Mkdirat(d.fd, name, uint32(perm.Perm())); err != nil {
		return d.pathErr("mkdir", name, err)
	}
	return nil
}

func (d *Dir) reopen() (*Dir, error) {
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, d.pathErr("dup", ".", err)
	}
	return &Dir{fd: fd, f: d.f, Path: d.Path}, nil
}

// Sync flushes d's entries (after a rename or link).
func (d *Dir) Sync() {
	if fd, err := openRetry(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC); err == nil {
		_ = unix.Fsync(fd)
		unix.Close(fd)
	}
}

// Remove removes the file, link or empty directory name in d.
func (d *Dir) Remove(name string) error {
	if !ValidName(name) {
		return d.pathErr("remove", name, unix.EINVAL)
	}
	err := unix.Unlinkat(d.fd, name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		if err2 := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err2 == nil || !errors.Is(err2, unix.ENOTDIR) {
			err = err2
		}
	}
	if err != nil {
		return d.pathErr("remove", name, err)
	}
	return nil
}

// RemoveSame removes the file or link name in d only if it is still the entry described by want
// (a directory is refused): what a caller checked is what goes.
func (d *Dir) RemoveSame(name string, want Info) error {
	if !ValidName(name) {
		return d.pathErr("remove", name, unix.EINVAL)
	}
	got, err := d.Lstat(name)
	if err != nil {
		return err
	}
	if !got.Same(want) {
		return fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
	}
	if got.IsDir() {
		return d.pathErr("remove", name, unix.EISDIR)
	}
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return d.pathErr("remove", name, err)
	}
	return nil
}

// maxDepth bounds RemoveAll and tree walks (each level holds a descriptor).
const maxDepth = 512

func (d *Dir) removeAll(name string, depth int) error {
	if !ValidName(name) {
		return d.pathErr("remove", name, unix.EINVAL)
	}
	info, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return d.Remove(name)
	}
	if depth > maxDepth {
		return d.pathErr("remove", name, unix.ELOOP)
	}
	sub, err := d.Sub(name)
	if err != nil {
		return err
	}
	if err := sub.RemoveContents(depth + 1); err != nil {
		sub.Close()
		return err
	}
	sub.Close()
	if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return d.pathErr("remove", name, err)
	}
	return nil
}

// Rename moves fromName in from to toName in to, refusing to replace an existing entry.
func Rename(from *Dir, fromName string, to *Dir, toName string) error {
	if !ValidName(fromName) || !ValidName(toName) {
		return from.pathErr("rename", fromName, unix.EINVAL)
	}
	err := renameNoReplace(from.fd, fromName, to.fd, toName)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOTSUP) {
		// A filesystem without RENAME_NOREPLACE: check, then rename (a small window).
		if _, lerr := to.Lstat(toName); lerr == nil {
			return to.pathErr("rename", toName, unix.EEXIST)
		}
		err = unix.Renameat(from.fd, fromName, to.fd, toName)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: Join(from.Path, fromName), New: Join(to.Path, toName), Err: err}
	}
	return nil
}

// WriteFile creates or replaces the regular file name in d with what src yields, atomically:
// the data goes to an unnamed file (O_TMPFILE) or a hidden temp file in d, is synced, and is then
// linked or renamed to name, so a killed run never leaves a half-written file. A replaced file
// keeps its permission bits (never setuid/setgid: the kernel drops those on a write, and new
// content under an old setuid bit would be a privilege escalation); a new one gets mode (0644
// when zero). A link, directory or special file at name is refused.
func (d *Dir) WriteFile(name string, src io.Reader, mode fs.FileMode) (created bool, n int64, err error) {
	if !ValidName(name) {
		return false, 0, d.pathErr("write", name, unix.EINVAL)
	}
	if mode == 0 {
		mode = 0o644
	}
	mode &= fs.ModePerm | fs.ModeSticky
	created = true
	if li, err := d.Lstat(name); err == nil {
		switch {
		case li.IsLink():
			return false, 0, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
		case li.IsDir():
			return false, 0, fmt.Errorf("%s is a directory", Join(d.Path, name))
		case !li.IsRegular():
			return false, 0, fmt.Errorf("%s is not a regular file", Join(d.Path, name))
		}
		created = false
		mode = li.Mode & (fs.ModePerm | fs.ModeSticky)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, 0, err
	}
	f, named, err := d.tempFile(name, mode)
	if err != nil {
		return false, 0, err
	}
	ok := false
	defer func() {
		f.Close()
		if !ok && named != "" {
			_ = unix.Unlinkat(d.fd, named, 0)
		}
	}()
	if n, err = io.Copy(f, src); err != nil {
		return false, 0, d.pathErr("write", name, err)
	}
	if err = f.Chmod(mode); err != nil { // umask, sticky
		return false, 0, err
	}
	if err = f.Sync(); err != nil {
		return false, 0, err
	}
	if named == "" {
		// Unnamed: link it in. A new name gets the file directly; a replacement goes through a
		// temp name and a rename (rename is what replaces atomically).
		if created {
			err = linkTmp(int(f.Fd()), d.fd, name)
			if err == nil {
				ok = true
				d.Sync()
				return true, n, nil
			}
			if !errors.Is(err, unix.EEXIST) {
				return false, 0, d.pathErr("link", name, err)
			}
			created = false // someone made it meanwhile: replace it like any other
		}
		named = tempName(name)
		if err = linkTmp(int(f.Fd()), d.fd, named); err != nil {
			named = ""
			return false, 0, d.pathErr("link", name, err)
		}
	}
	if err = unix.Renameat(d.fd, named, d.fd, name); err != nil {
		return false, 0, d.pathErr("rename", name, err)
	}
	ok = true
	d.Sync()
	return created, n, nil
}

// tempFile makes the file data goes to: unnamed (O_TMPFILE, named == "") where the system and
// filesystem support it, otherwise a hidden name in d.
func (d *Dir) tempFile(name string, mode fs.FileMode) (f *os.File, named string, err error) {
	if d.f&featTmpfile != 0 {
		if fd, err := openTmpfile(d.fd); err == nil {
			// Created with mode 0: WriteFile sets the mode with fchmod before linking it in.
			return os.NewFile(uintptr(fd), Join(d.Path, name)), "", nil
		}
	}
	named = tempName(name)
	fd, err := openRetry(d.fd, named, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, "", d.pathErr("create", named, err)
	}
	_ = unix.Fchmod(fd, uint32(mode.Perm()))
	return os.NewFile(uintptr(fd), Join(d.Path, named)), named, nil
}

func tempName(name string) string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	if len(name) > 100 {
		name = name[:100]
	}
	return "." + name + ".massgen-tmp-" + hex.EncodeToString(rnd[:])
}

// OpenDir opens the walked entry (a directory) for listing and *at operations: the very
// directory the walk reached, whatever its name leads to now.
func (w *Walk) OpenDir() (*Dir, error) {
	if !w.Exists {
		return nil, &fs.PathError{Op: "open", Path: w.Path, Err: fs.ErrNotExist}
	}
	if !w.Info.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: w.Path, Err: unix.ENOTDIR}
	}
	if w.entry < 0 { // cannot happen: a directory found is always held
		return nil, fmt.Errorf("%s: %w", w.Path, ErrChanged)
	}
	fd, err := openRetry(w.entry, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: w.Path, Err: err}
	}
	return &Dir{fd: fd, f: w.Dir.f, Path: w.Path}, nil
}

// MakeParent creates the missing directories on the way to the entry and returns the directory
// that holds it (a new handle: the caller closes it) and the first directory created ("" when
// none was).
func (w *Walk) MakeParent() (*Dir, string, error) {
	if w.Name == "" {
		return nil, "", &fs.PathError{Op: "create", Path: w.Path, Err: unix.EINVAL}
	}
	return w.Dir.MkdirAll(w.Missing)
}
