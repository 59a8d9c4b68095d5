//go:build !linux && !darwin && !windows

package safefs

import (
	"io"
	"io/fs"
	"os"
)

// On other systems the file tools fail closed: there is no descriptor walk, and resolving by
// string between the decision and the action is what this package exists to prevent.

// Sep separates the names of a canonical path.
const Sep = '/'

type sysHandle = int

// Close does nothing here.
func (w *Walk) Close() {}

// Resolve fails closed on this platform.
func Resolve(abs string, entry bool) (*Walk, error) {
	return nil, &Error{Path: abs, At: abs, Err: ErrUnsupported}
}

// OpenDir fails closed on this platform.
func (w *Walk) OpenDir() (*Dir, error) { return nil, ErrUnsupported }

// OpenFile fails closed on this platform.
func (w *Walk) OpenFile() (*os.File, Info, error) { return nil, Info{}, ErrUnsupported }

// MakeParent fails closed on this platform.
func (w *Walk) MakeParent() (*Dir, string, error) { return nil, "", ErrUnsupported }

// Dir: see the Unix implementation (dir_unix.go).
type Dir struct{ Path string }

// Entry is one directory entry with its lstat.
type Entry struct {
	Name string
	Info Info
}

// OpenDirPath fails closed on this platform.
func OpenDirPath(p string) (*Dir, error) { return nil, ErrUnsupported }

// FromFD fails closed on this platform.
func FromFD(fd uintptr, path string) (*Dir, error) { return nil, ErrUnsupported }

// FromFile fails closed on this platform.
func FromFile(f *os.File, path string) (*Dir, error) { return nil, ErrUnsupported }

func (d *Dir) Close() error                                  { return nil }
func (d *Dir) File() (*os.File, error)                       { return nil, ErrUnsupported }
func (d *Dir) Dup() (*os.File, error)                        { return nil, ErrUnsupported }
func (d *Dir) Lstat(name string) (Info, error)               { return Info{}, ErrUnsupported }
func (d *Dir) Stat() (Info, error)                           { return Info{}, ErrUnsupported }
func (d *Dir) Sub(name string) (*Dir, error)                 { return nil, ErrUnsupported }
func (d *Dir) SubSame(name string, want Info) (*Dir, error)  { return nil, ErrUnsupported }
func (d *Dir) Entries(max int) ([]Entry, bool, error)        { return nil, false, ErrUnsupported }
func (d *Dir) Readlink(name string) (string, error)          { return "", ErrUnsupported }
func (d *Dir) OpenFile(name string) (*os.File, Info, error)  { return nil, Info{}, ErrUnsupported }
func (d *Dir) Mkdir(name string, perm fs.FileMode) error     { return ErrUnsupported }
func (d *Dir) MkdirAll(names []string) (*Dir, string, error) { return nil, "", ErrUnsupported }
func (d *Dir) Sync()                                         {}
func (d *Dir) Remove(name string) error                      { return ErrUnsupported }
func (d *Dir) RemoveSame(name string, want Info) error       { return ErrUnsupported }
func (d *Dir) SubPath(rel string) (*Dir, error)              { return nil, ErrUnsupported }
func (d *Dir) WalkEntries(fn WalkFunc) error                 { return ErrUnsupported }
func (d *Dir) RemoveAll(name string) error                   { return ErrUnsupported }
func (d *Dir) RemoveContents(depth int) error                { return ErrUnsupported }
func (d *Dir) OpenFileSame(name string, want Info) (*os.File, Info, error) {
	return nil, Info{}, ErrUnsupported
}
func (d *Dir) WriteFile(name string, src io.Reader, mode fs.FileMode) (bool, int64, error) {
	return false, 0, ErrUnsupported
}

// Rename fails closed on this platform.
func Rename(from *Dir, fromName string, to *Dir, toName string) error { return ErrUnsupported }

// Symlink fails closed on this platform.
func (d *Dir) Symlink(target, name string) error { return ErrUnsupported }

// TempName is a hidden name beside name for an entry being built.
func TempName(name string) string { return "." + name + ".massgen-tmp-000000000000" }

func (d *Dir) OpenFileAt(rel string) (*os.File, Info, error) { return nil, Info{}, ErrUnsupported }
func (d *Dir) StatBeneath(rel string) (Info, error)          { return Info{}, ErrUnsupported }
func (d *Dir) WalkTypes(fn WalkFunc) error                   { return ErrUnsupported }
