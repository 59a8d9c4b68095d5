package snapshots

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/safefs"
)

type kind uint8

const (
	kindDir kind = iota + 1
	kindFile
	kindSymlink
)

// entry is one workspace entry as of a save. The stat fields (including ctime, inode and device,
// which a program cannot set to old values) decide whether a file changed since the last save.
type entry struct {
	rel    string
	kind   kind
	mode   fs.FileMode // permission bits only
	size   int64
	mtime  int64 // ns
	ctime  int64 // ns
	ino    uint64
	dev    uint64
	target string // symlink target, verbatim
	readAt int64  // ns: when the content was last read (copied or compared), for the racy check
}

func (e entry) sameStat(o entry) bool {
	return e.kind == o.kind && e.mode == o.mode && e.size == o.size && e.mtime == o.mtime &&
		e.ctime == o.ctime && e.ino == o.ino && e.dev == o.dev
}

// scan lists the workspace through root, descending by descriptor and never through a link:
// directories, regular files and symlinks, parents before children. A symlink is kept (as a
// symlink) only if it resolves inside the workspace, to something that exists; dangling links
// and links that point outside (absolute targets included) are dropped, so no snapshot or temp
// workspace ever leads out of the copied tree. Other file types (fifos, sockets, devices) are
// dropped, and so is the content of a directory that vanished or was replaced (by a link, say)
// while it was listed.
func scan(ctx context.Context, root *safefs.Dir, log *zap.Logger) ([]entry, error) {
	var out []entry
	err := root.WalkEntries(func(rel string, dir *safefs.Dir, de safefs.Entry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, safefs.ErrChanged) {
				return nil // vanished or replaced while we looked
			}
			if errors.Is(err, syscall.ELOOP) {
				log.Warn("snapshot: folder deeper than massgen walks left out", zap.String("path", rel), zap.Int("max", safefs.MaxTreeDepth))
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		info := de.Info
		e := entry{rel: rel, mode: info.Mode.Perm()}
		fillStat(&e, info)
		switch t := info.Mode.Type(); {
		case t == fs.ModeDir:
			e.kind = kindDir
			e.mode |= 0o700 // the store must be able to update its copies
			e.size, e.mtime = 0, 0
		case t == 0:
			e.kind = kindFile
		case t == fs.ModeSymlink:
			e.kind = kindSymlink
			target, err := dir.Readlink(de.Name)
			if err != nil {
				log.Warn("snapshot: unreadable symlink dropped", zap.String("path", rel), zap.Error(err))
				return nil
			}
			e.target = target
			if _, err := root.StatBeneath(rel); err != nil {
				log.Info("snapshot: symlink that is dangling or leads outside the workspace dropped",
					zap.String("path", rel), zap.String("target", target), zap.Error(err))
				return nil
			}
			e.size, e.mtime, e.ctime, e.mode = 0, 0, 0, 0
		default:
			log.Info("snapshot: special file dropped", zap.String("path", rel), zap.Stringer("type", t))
			return nil
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// fillStat records the stat fields that tell whether a file changed since the last save.
func fillStat(e *entry, info safefs.Info) {
	e.size = info.Size
	e.mtime = info.Mtime.UnixNano()
	e.ctime = info.Ctime.UnixNano()
	e.ino, e.dev = info.Ino, info.Dev
}
