package snapshots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/private"
	"github.com/massgen-go/massgen/internal/safefs"
)

// cloneMode is how a file already in a snapshot reaches another tree of ours.
type cloneMode uint8

const (
	modeLink    cloneMode = iota // hard link (the default: same filesystem)
	modeReflink                  // FICLONE: own inode, shared blocks (btrfs, xfs, ...)
	modeCopy                     // different filesystems
)

func (m cloneMode) String() string {
	return [...]string{"hardlink", "reflink", "copy"}[m]
}

// probe decides once per store how files reach temp workspaces and log copies. Temp workspaces
// prefer reflinks (a separate inode, so even a write that got past the permission layer could
// not reach the snapshot), then hard links, then copies; log copies use hard links, then copies.
func (s *Store) probe() {
	s.probeOnce.Do(func() {
		s.tempMode, s.logMode = modeCopy, modeCopy
		src := filepath.Join(s.stagingRoot(), "probe")
		if err := os.MkdirAll(s.stagingRoot(), private.DirMode); err != nil {
			return
		}
		if err := os.WriteFile(src, []byte("probe"), private.FileMode); err != nil {
			return
		}
		defer os.Remove(src)
		try := func(dir string, reflinkToo bool) cloneMode {
			if err := os.MkdirAll(dir, private.DirMode); err != nil {
				return modeCopy
			}
			dst := filepath.Join(dir, ".massgen-probe")
			_ = os.Remove(dst)
			defer os.Remove(dst)
			if reflinkToo {
				if reflink(src, dst, private.FileMode) == nil {
					return modeReflink
				}
				_ = os.Remove(dst)
			}
			if os.Link(src, dst) == nil {
				return modeLink
			}
			return modeCopy
		}
		s.tempMode = try(s.o.TempRoot, true)
		if s.o.LogDir != "" {
			s.logMode = try(s.o.LogDir, false)
		}
		s.log.Debug("snapshot clone modes", zap.Stringer("temp", s.tempMode), zap.Stringer("log", s.logMode))
	})
}

// cloneFile makes dst a copy of the snapshot file src (never a workspace file: a hard link to a
// workspace file would let the agent change the snapshot later by writing the shared inode).
func cloneFile(src, dst string, m cloneMode) error {
	switch m {
	case modeLink:
		err := os.Link(src, dst)
		if err == nil || !linkUnsupported(err) {
			return err
		}
	case modeReflink:
		fi, err := os.Lstat(src)
		if err != nil {
			return err
		}
		if reflink(src, dst, fi.Mode().Perm()) == nil {
			return chtimes(dst, fi.ModTime())
		}
		if err := os.Link(src, dst); err == nil {
			return nil
		}
	}
	in, err := safefs.OpenNoFollow(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	return copyOpen(in, safefs.Info{Mode: fi.Mode(), Size: fi.Size(), Mtime: fi.ModTime()}, dst, nil)
}

// createCopy creates dst, a copy of a file with mode, writable by massgen while it fills it.
func createCopy(dst string, mode fs.FileMode) (*os.File, error) {
	return safefs.CreateNew(dst, mode.Perm()|0o200)
}

func chtimes(p string, t time.Time) error { return os.Chtimes(p, t, t) }

func removeFile(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// WriteError is a failure to write massgen's own copy (a full disk, a read-only or failing
// filesystem), as opposed to a workspace file that could not be read: the copy is incomplete, so
// whatever was being saved is not saved.
type WriteError struct{ Err error }

// Error names the cause only (no space left on device, read-only file system): the path is
// massgen's staging copy, which says nothing to the user.
func (e *WriteError) Error() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		return "could not write the copy: " + errno.Error()
	}
	return "could not write the copy: " + e.Err.Error()
}
func (e *WriteError) Unwrap() error { return e.Err }

// copyOpen copies the open regular file in, whose stat is fi, to the new file dst, keeping mode,
// mtime and holes (copyData). Once in is open and stat'ed, any failure is a *WriteError: an
// agent can make its file unreadable or vanish before that, not after. The file's apparent size
// is taken from b (nil: no cap) before anything is written.
func copyOpen(in *os.File, fi safefs.Info, dst string, b *copyBudget) error {
	if err := b.take(in.Name(), fi.Size); err != nil {
		return &WriteError{Err: err}
	}
	out, err := createCopy(dst, fi.Mode)
	if err != nil {
		return &WriteError{Err: err}
	}
	err = copyData(out, in, fi.Size)
	if err == nil {
		err = out.Chmod(fi.Mode.Perm())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = chtimes(dst, fi.Mtime)
	}
	if err != nil {
		_ = removeFile(dst)
		return &WriteError{Err: err}
	}
	return nil
}

// copyFromWorkspace copies the workspace file rel (opened below root by descriptor, never
// through a link, so it cannot lead outside the workspace) to the new file dst, within the
// budget b. It returns the stat of what it copied.
func copyFromWorkspace(root *safefs.Dir, rel, dst string, b *copyBudget) (safefs.Info, error) {
	in, fi, err := root.OpenFileAt(rel)
	if err != nil {
		return fi, err
	}
	defer in.Close()
	return fi, copyOpen(in, fi, dst, b)
}

// sameContent compares the workspace file rel with the snapshot file snap byte for byte.
func sameContent(root *safefs.Dir, rel, snap string) (bool, error) {
	a, _, err := root.OpenFileAt(rel)
	if err != nil {
		return false, err
	}
	defer a.Close()
	b, err := safefs.OpenNoFollow(snap)
	if err != nil {
		return false, err
	}
	defer b.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			if (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF) {
				return true, nil
			}
			return false, errors.Join(ignoreEOF(ea), ignoreEOF(eb))
		}
	}
}

func ignoreEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	return err
}

// workers is how many file operations run at once: file copies and links spend most of their
// time in the kernel, so a few more than the CPUs overlap well.
func workers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// firstError shortens the errors parallel joined to the first one and a count (a full disk
// fails every file alike); errors.As still finds the first.
func firstError(err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || len(j.Unwrap()) < 2 {
		return err
	}
	errs := j.Unwrap()
	return fmt.Errorf("%w (and %d more)", errs[0], len(errs)-1)
}

// parallel runs fn for every item on a few goroutines and returns the errors joined.
func parallel[T any](ctx context.Context, items []T, fn func(T) error) error {
	if len(items) == 0 {
		return nil
	}
	n := min(workers(), len(items))
	ch := make(chan T)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			for it := range ch {
				if err := fn(it); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		ch <- it
	}
	close(ch)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// cloneTree makes dst (which must not exist) a copy of the snapshot tree src: directories made,
// files cloned with m, symlinks recreated verbatim (they were checked when the snapshot was made).
func cloneTree(ctx context.Context, src, dst string, m cloneMode) error {
	var files [][2]string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch d.Type() {
		case fs.ModeDir:
			info, err := d.Info()
			if err != nil {
				return err
			}
			return mkdir(to, info.Mode().Perm())
		case fs.ModeSymlink:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(t, to)
		case 0:
			files = append(files, [2]string{p, to})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return parallel(ctx, files, func(f [2]string) error { return cloneFile(f[0], f[1], m) })
}

// mkdir creates p with mode perm exactly (umask aside); an existing directory just gets the mode.
func mkdir(p string, perm fs.FileMode) error {
	perm |= 0o700
	if err := os.Mkdir(p, perm); err != nil {
		if fi, lerr := os.Lstat(p); lerr != nil || !fi.IsDir() {
			return err
		}
	}
	return os.Chmod(p, perm)
}

// renameErr is err (from renaming a to b) in the form os.Rename reports, nil when err is nil.
func renameErr(a, b string, err error) error {
	if err == nil {
		return nil
	}
	return &os.LinkError{Op: "rename", Old: a, New: b, Err: err}
}
