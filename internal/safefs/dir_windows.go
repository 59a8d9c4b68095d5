//go:build windows

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
	"strings"
	"syscall"
	"unicode/utf16"

	"github.com/massgen-go/massgen/internal/winpath"
	"golang.org/x/sys/windows"
)

// Dir is an open directory and the canonical path it was reached by. Every operation names one
// entry in it (opened relative to the handle): nothing is resolved again by string. The handle
// does not share deletion, so the directory cannot be renamed or removed while it is held.
type Dir struct {
	h    windows.Handle
	Path string
}

// validName is ValidName plus winpath's rules: no reserved device name, stream, trailing dot or
// space, nothing Windows reads as another name.
func validName(name string) bool {
	return ValidName(name) && winpath.CheckName(name) == nil
}

// Close releases the handle.
func (d *Dir) Close() error {
	if d == nil || d.h == windows.InvalidHandle {
		return nil
	}
	err := windows.CloseHandle(d.h)
	d.h = windows.InvalidHandle
	return err
}

func (d *Dir) nameErr(op, name string) error {
	if err := winpath.CheckName(name); err != nil {
		return d.pathErr(op, name, err)
	}
	return d.pathErr(op, name, syscall.EINVAL)
}

// File hands the directory over as an *os.File (a duplicate handle); d stays open and the
// caller closes both.
func (d *Dir) File() (*os.File, error) {
	h, err := dupHandle(d.h)
	if err != nil {
		return nil, d.pathErr("dup", ".", err)
	}
	return os.NewFile(uintptr(h), d.Path), nil
}

// Dup hands over a duplicate of d's own handle (the same access), as File does here.
func (d *Dir) Dup() (*os.File, error) { return d.File() }

// FromFile is a Dir on the directory f has open (a duplicate handle), reached by path; f stays
// the caller's.
func FromFile(f *os.File, path string) (*Dir, error) {
	h, err := dupHandle(windows.Handle(f.Fd()))
	if err != nil {
		return nil, &fs.PathError{Op: "dup", Path: path, Err: err}
	}
	return &Dir{h: h, Path: path}, nil
}

// Lstat describes name in d without following it.
func (d *Dir) Lstat(name string) (Info, error) {
	if !validName(name) {
		return Info{}, d.nameErr("lstat", name)
	}
	h, err := ntOpen(d.h, name, accessAttrs, shareAll, windows.FILE_OPEN, 0, 0)
	if err != nil {
		return Info{}, d.pathErr("lstat", name, err)
	}
	defer closeH(h)
	info, err := statHandle(h)
	if err != nil {
		return Info{}, d.pathErr("lstat", name, err)
	}
	return info, nil
}

// Stat describes d itself.
func (d *Dir) Stat() (Info, error) {
	info, err := statHandle(d.h)
	if err != nil {
		return Info{}, d.pathErr("stat", ".", err)
	}
	return info, nil
}

// Sub opens the directory name in d; a link (or other reparse point) there is refused
// (ErrChanged).
func (d *Dir) Sub(name string) (*Dir, error) {
	if !validName(name) {
		return nil, d.nameErr("open", name)
	}
	h, err := ntOpen(d.h, name, accessDir, shareHeld, windows.FILE_OPEN, windows.FILE_DIRECTORY_FILE, 0)
	if err != nil {
		return nil, d.pathErr("open", name, err)
	}
	info, err := statHandle(h)
	if err != nil {
		closeH(h)
		return nil, d.pathErr("stat", name, err)
	}
	if !info.IsDir() {
		closeH(h)
		return nil, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
	}
	return &Dir{h: h, Path: Join(d.Path, name)}, nil
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
	// A handle of its own: the listing position belongs to the handle.
	h, err := ntOpen(d.h, "", windows.FILE_LIST_DIRECTORY|accessAttrs, shareAll, windows.FILE_OPEN, windows.FILE_DIRECTORY_FILE, 0)
	if err != nil {
		return nil, false, d.pathErr("open", ".", err)
	}
	defer closeH(h)
	names, err := listNames(h)
	if err != nil {
		return nil, false, d.pathErr("readdir", ".", err)
	}
	sort.Strings(names)
	for _, n := range names {
		if max > 0 && len(ents) >= max {
			return ents, true, nil
		}
		var info Info
		if validName(n) {
			if info, err = d.Lstat(n); err != nil {
				continue
			}
		} else {
			// A name no Windows path can spell (made by another system): listed, with what
			// the directory says of it; every use of it is refused.
			info = Info{Mode: fs.ModeIrregular}
		}
		ents = append(ents, Entry{Name: n, Info: info})
	}
	return ents, false, nil
}

// Readlink reads the link (symbolic link or junction) name in d.
func (d *Dir) Readlink(name string) (string, error) {
	if !validName(name) {
		return "", d.nameErr("readlink", name)
	}
	h, err := ntOpen(d.h, name, accessAttrs, shareAll, windows.FILE_OPEN, 0, 0)
	if err != nil {
		return "", d.pathErr("readlink", name, err)
	}
	defer closeH(h)
	target, err := readReparse(h)
	if err != nil {
		return "", d.pathErr("readlink", name, err)
	}
	return target, nil
}

// OpenFile opens the regular file name in d for reading; a link, directory or other entry there
// is refused.
func (d *Dir) OpenFile(name string) (*os.File, Info, error) {
	if !validName(name) {
		return nil, Info{}, d.nameErr("open", name)
	}
	h, err := ntOpen(d.h, name, windows.GENERIC_READ, shareAll, windows.FILE_OPEN, windows.FILE_NON_DIRECTORY_FILE, 0)
	if errors.Is(err, syscall.EISDIR) {
		info, _ := d.Lstat(name)
		if info.IsLink() {
			return nil, info, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
		}
		return nil, info, fmt.Errorf("%s is a directory", Join(d.Path, name))
	}
	if err != nil {
		return nil, Info{}, d.pathErr("open", name, err)
	}
	info, err := statHandle(h)
	if err != nil {
		closeH(h)
		return nil, Info{}, d.pathErr("stat", name, err)
	}
	switch {
	case info.IsLink():
		closeH(h)
		return nil, info, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
	case !info.IsRegular():
		closeH(h)
		return nil, info, fmt.Errorf("%s is not a regular file", Join(d.Path, name))
	}
	return os.NewFile(uintptr(h), Join(d.Path, name)), info, nil
}

// typedEntries: the listing gives no types here; every entry is lstat'ed.
func (d *Dir) typedEntries() ([]Entry, error) {
	ents, _, err := d.Entries(0)
	return ents, err
}

// FromFD is a Dir on the directory handle fd (its own duplicate), reached by path; fd stays the
// caller's.
func FromFD(fd uintptr, path string) (*Dir, error) {
	h, err := dupHandle(windows.Handle(fd))
	if err != nil {
		return nil, &fs.PathError{Op: "dup", Path: path, Err: err}
	}
	return &Dir{h: h, Path: path}, nil
}

// lexicalDotDot: Windows applies ".." to the path as written, before following links.
const lexicalDotDot = true

// openFileBeneath: no one-call open here; the caller walks.
func (d *Dir) openFileBeneath(string) (*os.File, Info, bool, error) { return nil, Info{}, false, nil }

// Mkdir creates the directory name in d (FILE_CREATE: never an existing one). Windows has no
// permission bits: perm is not used.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	if !validName(name) {
		return d.nameErr("mkdir", name)
	}
	h, err := ntOpen(d.h, name, accessAttrs, shareAll, windows.FILE_CREATE, windows.FILE_DIRECTORY_FILE, windows.FILE_ATTRIBUTE_NORMAL)
	if err != nil {
		return d.pathErr("mkdir", name, err)
	}
	closeH(h)
	return nil
}

// Sync does nothing: flushing a directory needs write access to it, and NTFS journals its
// metadata.
func (d *Dir) Sync() {}

// Remove removes the file, link or empty directory name in d, through a handle on it (a link is
// removed, never followed).
func (d *Dir) Remove(name string) error { return d.removeChecked(name, nil) }

// RemoveSame removes the file or link name in d only if it is still the entry described by want
// (a directory is refused): the entry is opened, checked and deleted through one handle.
func (d *Dir) RemoveSame(name string, want Info) error {
	return d.removeChecked(name, func(got Info) error {
		if !got.Same(want) {
			return fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
		}
		if got.IsDir() {
			return d.pathErr("remove", name, syscall.EISDIR)
		}
		return nil
	})
}

// removeChecked opens name for deletion, lets check (when set) refuse what it holds, and
// deletes it through that handle.
func (d *Dir) removeChecked(name string, check func(Info) error) error {
	if !validName(name) {
		return d.nameErr("remove", name)
	}
	h, err := ntOpen(d.h, name, windows.DELETE|windows.FILE_READ_ATTRIBUTES, shareAll, windows.FILE_OPEN, 0, 0)
	if err != nil {
		return d.pathErr("remove", name, err)
	}
	defer closeH(h)
	if check != nil {
		got, err := statHandle(h)
		if err != nil {
			return d.pathErr("remove", name, err)
		}
		if err := check(got); err != nil {
			return err
		}
	}
	if err := deleteHandle(h); err != nil {
		return d.pathErr("remove", name, err)
	}
	return nil
}

// maxDepth bounds RemoveAll and tree walks (each level holds a handle).
const maxDepth = 512

func (d *Dir) removeAll(name string, depth int) error {
	if !validName(name) {
		return d.nameErr("remove", name)
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
		return d.pathErr("remove", name, syscall.ELOOP)
	}
	sub, err := d.SubSame(name, info)
	if err != nil {
		return err
	}
	if err := sub.RemoveContents(depth + 1); err != nil {
		sub.Close()
		return err
	}
	sub.Close()
	if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Rename moves fromName in from to toName in to, refusing to replace an existing entry: the
// entry is opened in from (not followed) and renamed relative to to's handle.
func Rename(from *Dir, fromName string, to *Dir, toName string) error {
	if !validName(fromName) {
		return from.nameErr("rename", fromName)
	}
	if !validName(toName) {
		return to.nameErr("rename", toName)
	}
	h, err := ntOpen(from.h, fromName, windows.DELETE|windows.FILE_READ_ATTRIBUTES, shareAll, windows.FILE_OPEN, 0, 0)
	if err == nil {
		err = renameHandle(h, to.h, toName, false)
		closeH(h)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: Join(from.Path, fromName), New: Join(to.Path, toName), Err: err}
	}
	return nil
}

// WriteFile creates or replaces the regular file name in d with what src yields, atomically:
// the data goes to a hidden temp file created in d (FILE_CREATE), is flushed, and the handle is
// then renamed to name (replacing only a file that was there), so a killed run never leaves a
// half-written file. Windows has no permission bits: a mode without owner write makes the file
// read-only; a replaced file keeps its read-only attribute. A link, directory or other entry at
// name is refused.
func (d *Dir) WriteFile(name string, src io.Reader, mode fs.FileMode) (created bool, n int64, err error) {
	if !validName(name) {
		return false, 0, d.nameErr("write", name)
	}
	if mode == 0 {
		mode = 0o644
	}
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
		mode = li.Mode
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, 0, err
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if mode&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	tmp := tempName(name)
	h, err := ntOpen(d.h, tmp, windows.GENERIC_WRITE|windows.DELETE, windows.FILE_SHARE_READ, windows.FILE_CREATE, windows.FILE_NON_DIRECTORY_FILE, attrs)
	if err != nil {
		return false, 0, d.pathErr("create", tmp, err)
	}
	f := os.NewFile(uintptr(h), Join(d.Path, tmp))
	ok := false
	defer func() {
		if !ok {
			_ = deleteHandle(h)
		}
		f.Close()
	}()
	if n, err = io.Copy(f, src); err != nil {
		return false, 0, d.pathErr("write", name, err)
	}
	if err = f.Sync(); err != nil {
		return false, 0, d.pathErr("sync", name, err)
	}
	err = renameHandle(h, d.h, name, !created)
	if created && errors.Is(err, fs.ErrExist) {
		// Someone made it meanwhile: replace it like any other (after the same checks).
		if li, lerr := d.Lstat(name); lerr != nil || !li.IsRegular() {
			return false, 0, fmt.Errorf("%s: %w", Join(d.Path, name), ErrChanged)
		}
		created = false
		err = renameHandle(h, d.h, name, true)
	}
	if err != nil {
		return false, 0, d.pathErr("rename", name, err)
	}
	ok = true
	return created, n, nil
}

func tempName(name string) string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	if len(name) > 100 {
		name = name[:100]
	}
	return "." + strings.TrimRight(name, ". ") + ".massgen-tmp-" + hex.EncodeToString(rnd[:])
}

// Symlink creates the symbolic link name in d pointing at target (undo puts a link back as it
// was); an existing entry is never replaced. A link to a directory must say so on Windows: the
// target is looked at (by string, from d's path) only to choose the kind of link. Creating links
// needs the SeCreateSymbolicLinkPrivilege (or developer mode).
func (d *Dir) Symlink(target, name string) error {
	if !validName(name) {
		return d.nameErr("symlink", name)
	}
	relative := true
	if _, err := winpath.Parse(target); err == nil {
		relative = false
	}
	full := target
	if relative {
		full = Join(d.Path, target)
	}
	isDir := false
	if fi, err := os.Stat(full); err == nil && fi.IsDir() {
		isDir = true
	}
	options := uint32(windows.FILE_NON_DIRECTORY_FILE)
	if isDir {
		options = windows.FILE_DIRECTORY_FILE
	}
	h, err := ntOpen(d.h, name, windows.FILE_WRITE_ATTRIBUTES|windows.DELETE, 0, windows.FILE_CREATE, options, windows.FILE_ATTRIBUTE_NORMAL)
	if err != nil {
		return d.pathErr("symlink", name, err)
	}
	defer closeH(h)
	sub := strings.ReplaceAll(target, "/", `\`)
	if !relative {
		sub = `\??\` + sub
		if strings.HasPrefix(target, `\\`) {
			sub = `\??\UNC\` + target[2:]
		}
	}
	if err := setSymlink(h, sub, target, relative); err != nil {
		_ = deleteHandle(h)
		return d.pathErr("symlink", name, err)
	}
	return nil
}

// setSymlink writes a symbolic-link reparse point on h.
func setSymlink(h windows.Handle, substitute, print string, relative bool) error {
	buf := symlinkData(substitute, print, relative)
	var n uint32
	return windows.DeviceIoControl(h, windows.FSCTL_SET_REPARSE_POINT, &buf[0], uint32(len(buf)), nil, 0, &n, nil)
}

// symlinkData is the REPARSE_DATA_BUFFER of a symbolic link.
func symlinkData(substitute, print string, relative bool) []byte {
	s16 := utf16.Encode([]rune(substitute))
	p16 := utf16.Encode([]rune(print))
	const hdr = 20 // tag, length, reserved, 4 offsets/lengths, flags
	buf := make([]byte, hdr+2*len(s16)+2*len(p16))
	put16 := func(off int, v uint16) { buf[off], buf[off+1] = byte(v), byte(v>>8) }
	put32 := func(off int, v uint32) { put16(off, uint16(v)); put16(off+2, uint16(v>>16)) }
	put32(0, windows.IO_REPARSE_TAG_SYMLINK)
	put16(4, uint16(len(buf)-8))
	put16(8, 0)                   // SubstituteNameOffset
	put16(10, uint16(2*len(s16))) // SubstituteNameLength
	put16(12, uint16(2*len(s16))) // PrintNameOffset
	put16(14, uint16(2*len(p16))) // PrintNameLength
	if relative {
		put32(16, symlinkFlagRelative)
	}
	for i, c := range s16 {
		put16(hdr+2*i, c)
	}
	for i, c := range p16 {
		put16(hdr+2*len(s16)+2*i, c)
	}
	return buf
}

// OpenDir opens the walked entry (a directory) for listing and relative operations: the very
// directory the walk reached (a new handle on it), whatever its name leads to now.
func (w *Walk) OpenDir() (*Dir, error) {
	if !w.Exists {
		return nil, &fs.PathError{Op: "open", Path: w.Path, Err: fs.ErrNotExist}
	}
	if !w.Info.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: w.Path, Err: syscall.ENOTDIR}
	}
	if w.entry == windows.InvalidHandle {
		return nil, fmt.Errorf("%s: %w", w.Path, ErrChanged)
	}
	h, err := ntOpen(w.entry, "", accessDir, shareHeld, windows.FILE_OPEN, windows.FILE_DIRECTORY_FILE, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: w.Path, Err: err}
	}
	return &Dir{h: h, Path: w.Path}, nil
}

// MakeParent creates the missing directories on the way to the entry and returns the directory
// that holds it (a new handle: the caller closes it) and the first directory created ("" when
// none was).
func (w *Walk) MakeParent() (*Dir, string, error) {
	if w.Name == "" {
		return nil, "", &fs.PathError{Op: "create", Path: w.Path, Err: syscall.EINVAL}
	}
	return w.Dir.MkdirAll(w.Missing)
}

// reopen returns a second Dir on the same directory (its own handle).
func (d *Dir) reopen() (*Dir, error) {
	h, err := dupHandle(d.h)
	if err != nil {
		return nil, d.pathErr("dup", ".", err)
	}
	return &Dir{h: h, Path: d.Path}, nil
}
