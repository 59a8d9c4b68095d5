// Package safefs resolves a path once, from the root, component by component, never following a
// symbolic link implicitly, and acts on the descriptors that walk found. A permission decision
// made on the walk's canonical path and the operation it allows then refer to the same opened
// directories: a link or rename swapped in between cannot redirect the operation. The file tools
// act through it; it sits in internal/ so that any package acting on a managed root (snapshots,
// the sandbox, sessions, sweeps) can use the same walk instead of its own O_NOFOLLOW code.
package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// MaxLinks bounds the symbolic links one walk follows (the kernel's limit).
const MaxLinks = 40

// ErrChanged is returned when an entry changed between the walk and its use (a link or another
// file swapped in at the name the walk found).
var ErrChanged = errors.New("the path changed during the operation (symbolic link swapped in?); refusing")

// ErrUnsupported is returned where the walker has no implementation (systems other than Linux,
// macOS and Windows): the file tools refuse rather than resolve by string.
var ErrUnsupported = errors.New("file tools are not supported on this system")

// Error says where a walk stopped: At is the canonical path whose lookup failed, so a caller can
// tell a failure inside a managed root from one outside it (which must not be shown).
type Error struct {
	Path string // the path walked, as given
	At   string // canonical path of the failing component
	Err  error  // ENOTDIR when a file was used as a directory
}

func (e *Error) Error() string {
	return fmt.Sprintf("cannot resolve %q: %s: %v", e.Path, e.At, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Info is what a walk or an Lstat learned about an entry (not following it).
type Info struct {
	Mode         fs.FileMode
	Size         int64
	Dev, Ino     uint64
	Nlink        uint64
	Mtime, Atime time.Time
	Ctime        time.Time
	Uid          uint32 // the owner's user id (Unix; 0 elsewhere)
}

// IsDir, IsRegular and IsLink classify the entry.
func (i Info) IsDir() bool     { return i.Mode.IsDir() }
func (i Info) IsRegular() bool { return i.Mode.IsRegular() }
func (i Info) IsLink() bool    { return i.Mode&fs.ModeSymlink != 0 }

// WalkFunc is called by Dir.WalkEntries and Dir.WalkTypes for each entry below the directory walked, parents before
// children: rel is the entry's path relative to it (names joined with '/'), dir the open
// directory that holds the entry (valid during the call only) and e the entry with its lstat.
// err is not nil in a second call for a directory that could not be opened or listed (it
// vanished, or a link or another directory was swapped in since it was listed): return nil to
// go on without it. fs.SkipDir skips a directory (or, for a file, the rest of its directory);
// any other error stops the walk and is returned.
type WalkFunc func(rel string, dir *Dir, e Entry, err error) error

// Same reports whether both describe the same file.
func (i Info) Same(o Info) bool { return i.Dev == o.Dev && i.Ino == o.Ino }

// Walk is one resolution of an absolute path and what it holds: the directory that contains the
// entry (or, when components are missing, the deepest one that exists), and the entry itself.
// Close releases the descriptors.
type Walk struct {
	// Path is the canonical path as traversed: symlink-free, ".." applied to the directories
	// actually reached, missing components appended as given.
	Path string
	// Dir holds the entry; when Missing is not empty it is the deepest existing ancestor and
	// Missing are the directories to create below it before Name.
	Dir     *Dir
	Missing []string
	// Name is the last component ("" when Path is "/").
	Name   string
	Exists bool
	Info   Info      // the entry's lstat, when it exists
	entry  sysHandle // the entry itself (O_PATH; without O_PATH only directories), or noHandle
}

// Join appends name to a canonical directory path (written with the system's separator).
func Join(dir, name string) string {
	if dir != "" && dir[len(dir)-1] == Sep {
		return dir + name // a root: "/", C:\
	}
	return dir + string(Sep) + name
}

// JoinRel appends rel, a relative path written with '/' (as tree walks build them), to a
// canonical directory path, with the system's separator.
func JoinRel(dir, rel string) string {
	if Sep != '/' {
		rel = strings.ReplaceAll(rel, "/", string(Sep))
	}
	return dir + string(Sep) + rel
}

// splitFirst cuts the first component off a slash path: slash reports whether a '/' followed it.
func splitFirst(s string) (comp, rest string, slash bool) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// hasDotDot reports whether a slash path has a ".." component.
func hasDotDot(p string) bool {
	for rest := p; rest != ""; {
		var c string
		c, rest, _ = splitFirst(rest)
		if c == ".." {
			return true
		}
	}
	return false
}

// ValidName reports whether name is one directory entry name (not empty, ".", ".." or with a
// slash or NUL).
func ValidName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}
