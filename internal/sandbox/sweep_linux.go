//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// sweeper is the clean-up after a command. Before it runs, it takes an inventory of the
// .git/.env/.massgen entries in every writable root that is not the agent's own (name and
// inode); afterwards every such entry not in the inventory (new, or another inode moved or
// linked to that name) is taken away, Keep paths that were absent and now exist are taken
// away, and Keep paths that are symbolic links are put back if the command replaced them.
// Both walks go through directory descriptors and never follow a link (internal/safefs).
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
		s.walk(r, func(dir *safefs.Dir, name, rel string, id fileID) {
			s.before[sweepKey{i, rel}] = id
		})
	}
	return s
}

// walk calls found for every entry with a system name under the root r (with the directory
// that holds it, open during the call), and descends into the other directories (opened by
// descriptor under their parent, never through a link: safefs.WalkTypes), except the skipped
// ones.
func (s *sweeper) walk(r *node, found func(dir *safefs.Dir, name, rel string, id fileID)) {
	root, err := safefs.FromFD(uintptr(r.fd), r.path)
	if err != nil {
		return
	}
	defer root.Close()
	_ = root.WalkTypes(func(rel string, dir *safefs.Dir, e safefs.Entry, err error) error {
		if !isSystemName(e.Name) {
			if err != nil || (e.Info.IsDir() && s.skip[idOf(e.Info)]) {
				return fs.SkipDir
			}
			return nil
		}
		// A system name is found whatever it is (a directory that cannot be opened, a link
		// swapped in for one), never descended into.
		info := e.Info
		if err != nil || !info.IsDir() {
			if info, err = dir.Lstat(e.Name); err != nil {
				return nil
			}
		}
		if id := idOf(info); !s.skip[id] {
			found(dir, e.Name, rel, id)
		}
		if e.Info.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
}

func idOf(info safefs.Info) fileID { return fileID{Dev: info.Dev, Ino: info.Ino} }

// after cleans up once the command has ended, and says what it did in the result.
func (s *sweeper) after(res *Result, trash func(dir *os.File, name, path string) (string, error), log *zap.Logger) {
	var notes []string
	take := func(dir *safefs.Dir, name, path string) {
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
		s.walk(r, func(dir *safefs.Dir, name, rel string, id fileID) {
			if old, ok := s.before[sweepKey{i, rel}]; ok && old == id {
				return
			}
			take(dir, name, filepath.Join(r.path, rel))
		})
	}
	for _, m := range s.missing {
		dir, name, err := walkTo(m.dir, m.rest, m.path)
		if err != nil {
			continue // still absent
		}
		if _, err := dir.Lstat(name); err == nil {
			take(dir, name, m.path)
		}
		dir.Close()
	}
	for _, l := range s.links {
		dir, err := safefs.FromFD(uintptr(l.dir), filepath.Dir(l.path))
		if err != nil {
			log.Warn("could not check a protected link", zap.String("path", l.path), zap.Error(err))
			continue
		}
		s.putBack(dir, l, res, &notes, trash, log)
		dir.Close()
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

// putBack puts the protected link l back in dir when the command replaced or removed it.
func (s *sweeper) putBack(dir *safefs.Dir, l keepLink, res *Result, notes *[]string, trash func(dir *os.File, name, path string) (string, error), log *zap.Logger) {
	info, err := dir.Lstat(l.name)
	if err == nil && idOf(info) == l.id {
		return
	}
	if err == nil {
		if _, err := takeAway(dir, l.name, l.path, trash); err != nil {
			log.Warn("could not put back a protected link", zap.String("path", l.path), zap.Error(err))
			*notes = append(*notes, fmt.Sprintf("massgen: could not put back %s: %v", l.path, err))
			return
		}
	}
	if err := dir.Symlink(l.target, l.name); err != nil {
		log.Warn("could not put back a protected link", zap.String("path", l.path), zap.Error(err))
		*notes = append(*notes, fmt.Sprintf("massgen: could not put back %s: %v", l.path, err))
		return
	}
	res.Restored = append(res.Restored, l.path)
	*notes = append(*notes, fmt.Sprintf("massgen: put back %s (protected): the command had replaced or removed it", l.path))
}

// walkTo opens the directories of rest but the last under dir (no link followed) and returns
// the last directory and the final name. The steps are O_PATH handles, as the plan's: a
// directory the command made search-only (--x) is walked through all the same.
func walkTo(dir int, rest []string, path string) (*safefs.Dir, string, error) {
	cur := dir
	for _, c := range rest[:len(rest)-1] {
		next, err := unix.Openat(cur, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if cur != dir {
			unix.Close(cur)
		}
		if err != nil {
			return nil, "", err
		}
		cur = next
	}
	d, err := safefs.FromFD(uintptr(cur), filepath.Dir(path))
	if cur != dir {
		unix.Close(cur)
	}
	return d, rest[len(rest)-1], err
}

// takeAway moves name (in dir) to the trash, or deletes it without one; it returns what it did
// ("moved to the trash (ID)", "removed").
func takeAway(dir *safefs.Dir, name, path string, trash func(dir *os.File, name, path string) (string, error)) (string, error) {
	if trash != nil {
		// Its own descriptor (an O_PATH handle from walkTo), not reopened for reading: a
		// directory the command made search-only (--x) cannot be, and the entry must still
		// go to the trash rather than be deleted.
		f, err := dir.Dup()
		if err == nil {
			var id string
			id, err = trash(f, name, path)
			f.Close()
			if err == nil {
				return fmt.Sprintf("moved to the trash (massgen trash restore %s)", id), nil
			}
		}
		// A planted .git or .env must not stay: removed all the same (the log says why the
		// trash failed).
		if rerr := dir.RemoveAll(name); rerr != nil {
			return "", errors.Join(err, rerr)
		}
		return "removed (the trash failed: " + err.Error() + ")", nil
	}
	if err := dir.RemoveAll(name); err != nil {
		return "", err
	}
	return "removed", nil
}
