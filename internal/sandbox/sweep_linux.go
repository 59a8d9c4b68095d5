//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// maxSweepDepth bounds the clean-up's descent (and the descriptors it holds at once).
const maxSweepDepth = 256

// sweeper is the clean-up after a command. Before it runs, it takes an inventory of the
// .git/.env/.massgen entries in every writable root that is not the agent's own (name and
// inode); afterwards every such entry not in the inventory (new, or another inode moved or
// linked to that name) is taken away, Keep paths that were absent and now exist are taken
// away, and Keep paths that are symbolic links are put back if the command replaced them.
// Both walks go through directory descriptors and never follow a link.
type sweeper struct {
	roots   []*node
	skip    map[fileID]bool
	before  map[sweepKey]fileID
	links   []keepLink
	missing []missing
}

type sweepKey struct {
	root int
	rel  string
}

type keepLink struct {
	dir          int // the link's directory (a handle owned by the plan)
	name, target string
	path         string
	id           fileID
}

// inventory prepares the clean-up of the plan's writable roots (before the command runs).
func (pl *plan) inventory() *sweeper {
	s := &sweeper{skip: map[fileID]bool{}, before: map[sweepKey]fileID{}}
	for _, n := range pl.nodes {
		if n.kinds&kWrite != 0 && n.kinds&kOwn == 0 && n.st == stWrite && n.isDir() {
			s.roots = append(s.roots, n)
		}
		if n.kinds != 0 {
			s.skip[n.id] = true // roots (walked on their own), Keep, private and own paths
		}
		if n.kinds&kKeep != 0 && n.isLink() && n.parent != nil && n.parent.st == stWrite {
			if t, err := confine.ReadlinkFD(n.fd); err == nil {
				s.links = append(s.links, keepLink{dir: n.parent.fd, name: n.name, target: t, path: n.path, id: n.id})
			}
		}
	}
	for _, m := range pl.missing {
		for _, r := range s.roots {
			if pathx.Within(m.path, r.path) {
				s.missing = append(s.missing, m)
				break
			}
		}
	}
	for i, r := range s.roots {
		s.walk(r.fd, 0, func(dir int, name, rel string, id fileID) {
			s.before[sweepKey{i, rel}] = id
		})
	}
	return s
}

// walk calls found for every entry with a system name under the directory handle dir, and
// descends into the other directories (opened O_NOFOLLOW under their parent's descriptor),
// except the skipped ones.
func (s *sweeper) walk(dir int, depth int, found func(dir int, name, rel string, id fileID)) {
	s.walkRel(dir, "", depth, found)
}

func (s *sweeper) walkRel(dir int, rel string, depth int, found func(dir int, name, rel string, id fileID)) {
	if depth > maxSweepDepth {
		return
	}
	ents, err := confine.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		r := filepath.Join(rel, e.Name)
		if isSystemName(e.Name) {
			var st unix.Stat_t
			if err := unix.Fstatat(dir, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && !s.skip[confine.StatID(&st)] {
				found(dir, e.Name, r, confine.StatID(&st))
			}
			continue
		}
		if e.Typ != unix.DT_DIR && e.Typ != unix.DT_UNKNOWN {
			continue
		}
		sub, err := unix.Openat(dir, e.Name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // not a directory (or a link) now
		}
		var st unix.Stat_t
		if unix.Fstat(sub, &st) == nil && !s.skip[confine.StatID(&st)] {
			s.walkRel(sub, r, depth+1, found)
		}
		unix.Close(sub)
	}
}

// after cleans up once the command has ended, and says what it did in the result.
func (s *sweeper) after(res *Result, trash func(dir *os.File, name, path string) (string, error), log *zap.Logger) {
	var notes []string
	take := func(dir int, name, path string) {
		how, err := takeAway(dir, name, path, trash)
		if err != nil {
			log.Warn("could not take away an entry a command created", zap.String("path", path), zap.Error(err))
			notes = append(notes, fmt.Sprintf("massgen: could not remove %s: %v", path, err))
			return
		}
		res.Removed = append(res.Removed, path)
		notes = append(notes, fmt.Sprintf("massgen: %s %s: .git, .env, .massgen and protected paths are never created outside your workspace", how, path))
	}
	for i, r := range s.roots {
		s.walk(r.fd, 0, func(dir int, name, rel string, id fileID) {
			if old, ok := s.before[sweepKey{i, rel}]; ok && old == id {
				return
			}
			take(dir, name, filepath.Join(r.path, rel))
		})
	}
	for _, m := range s.missing {
		dir, name, err := walkTo(m.dir, m.rest)
		if err != nil {
			continue // still absent
		}
		var st unix.Stat_t
		if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			take(dir, name, m.path)
		}
		if dir != m.dir {
			unix.Close(dir)
		}
	}
	for _, l := range s.links {
		var st unix.Stat_t
		err := unix.Fstatat(l.dir, l.name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil && confine.StatID(&st) == l.id {
			continue
		}
		if err == nil {
			if _, err := takeAway(l.dir, l.name, l.path, trash); err != nil {
				log.Warn("could not put back a protected link", zap.String("path", l.path), zap.Error(err))
				notes = append(notes, fmt.Sprintf("massgen: could not put back %s: %v", l.path, err))
				continue
			}
		}
		if err := unix.Symlinkat(l.target, l.dir, l.name); err != nil {
			log.Warn("could not put back a protected link", zap.String("path", l.path), zap.Error(err))
			notes = append(notes, fmt.Sprintf("massgen: could not put back %s: %v", l.path, err))
			continue
		}
		res.Restored = append(res.Restored, l.path)
		notes = append(notes, fmt.Sprintf("massgen: put back %s (protected): the command had replaced or removed it", l.path))
	}
	if len(notes) > 0 {
		if res.Stderr != "" && res.Stderr[len(res.Stderr)-1] != '\n' {
			res.Stderr += "\n"
		}
		for _, n := range notes {
			res.Stderr += n + "\n"
		}
	}
}

// walkTo opens the directories of rest but the last under dir (no link followed) and returns
// the last directory and the final name.
func walkTo(dir int, rest []string) (int, string, error) {
	cur := dir
	for _, c := range rest[:len(rest)-1] {
		next, err := unix.Openat(cur, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if cur != dir {
			unix.Close(cur)
		}
		if err != nil {
			return -1, "", err
		}
		cur = next
	}
	return cur, rest[len(rest)-1], nil
}

// takeAway moves name (in the directory handle dir) to the trash, or deletes it without one;
// it returns what it did ("moved to the trash (ID)", "removed").
func takeAway(dir int, name, path string, trash func(dir *os.File, name, path string) (string, error)) (string, error) {
	if trash != nil {
		d, err := unix.FcntlInt(uintptr(dir), unix.F_DUPFD_CLOEXEC, 0)
		if err == nil {
			f := os.NewFile(uintptr(d), path)
			id, terr := trash(f, name, path)
			f.Close()
			if terr == nil {
				return fmt.Sprintf("moved to the trash (massgen trash restore %s)", id), nil
			}
			err = terr
		}
		// A planted .git or .env must not stay: removed all the same (the log says why the
		// trash failed).
		if rerr := removeAt(dir, name, 0); rerr != nil {
			return "", errors.Join(err, rerr)
		}
		return "removed (the trash failed: " + err.Error() + ")", nil
	}
	if err := removeAt(dir, name, 0); err != nil {
		return "", err
	}
	return "removed", nil
}

// removeAt deletes name under the directory handle dir, recursively, never following a link.
func removeAt(dir int, name string, depth int) error {
	if depth > maxSweepDepth {
		return errors.New("too deep")
	}
	err := unix.Unlinkat(dir, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	sub, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	ents, err := confine.ReadDir(sub)
	for _, e := range ents {
		if rerr := removeAt(sub, e.Name, depth+1); rerr != nil && err == nil {
			err = rerr
		}
	}
	unix.Close(sub)
	if err != nil {
		return err
	}
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}
