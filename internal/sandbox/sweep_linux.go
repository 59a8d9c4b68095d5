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
	// unlisted says which directories a walk could not list (notes for the command's result).
	unlisted []string
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
// ones. A directory it cannot list (the command made it search-only, chmod 311) is made
// listable for the walk through its own O_PATH handle and given its mode back (listAnyway);
// one that still cannot be listed is noted in s.unlisted, never skipped in silence.
func (s *sweeper) walk(r *node, found func(dir *safefs.Dir, name, rel string, id fileID)) {
	root, err := safefs.FromFD(uintptr(r.fd), r.path)
	if err != nil {
		s.unlisted = append(s.unlisted, fmt.Sprintf(cantCheck, r.path, err))
		return
	}
	defer root.Close()
	s.walkDir(root, r.fd, "", 0, found)
}

// walkDir walks d (whose O_PATH handle is fd), found under its root at prefix; depth counts
// the directories made listable on the way (a bound on the handles held).
func (s *sweeper) walkDir(d *safefs.Dir, fd int, prefix string, depth int, found func(dir *safefs.Dir, name, rel string, id fileID)) {
	visit := func(rel string, dir *safefs.Dir, e safefs.Entry, err error) error {
		if prefix != "" {
			rel = prefix + "/" + rel
		}
		if !isSystemName(e.Name) {
			if err != nil && e.Info.IsDir() {
				s.walkUnlisted(dir, e.Name, rel, depth, found, err)
				return fs.SkipDir
			}
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
	}
	err := d.WalkTypes(visit)
	if err == nil {
		return
	}
	// Only the listing of d itself fails WalkTypes (visit returns nothing else): nothing in
	// it was visited yet.
	if errors.Is(err, fs.ErrPermission) {
		restore, gerr := listAnyway(fd)
		if gerr == nil {
			err = d.WalkTypes(visit)
			if rerr := restore(); rerr != nil {
				s.unlisted = append(s.unlisted, fmt.Sprintf("could not give %s its mode back: %v", d.Path, rerr))
			}
			if err == nil {
				return
			}
		} else {
			err = fmt.Errorf("%w (%w)", err, gerr)
		}
	}
	s.unlisted = append(s.unlisted, fmt.Sprintf(cantCheck, d.Path, err))
}

// walkUnlisted walks the directory name in dir that WalkTypes could not enter (werr): opened
// as an O_PATH handle without following a link, then walked by walkDir (which makes it
// listable if it can).
func (s *sweeper) walkUnlisted(dir *safefs.Dir, name, rel string, depth int, found func(dir *safefs.Dir, name, rel string, id fileID), werr error) {
	path := filepath.Join(dir.Path, name)
	if !errors.Is(werr, fs.ErrPermission) || depth >= safefs.MaxTreeDepth {
		s.unlisted = append(s.unlisted, fmt.Sprintf(cantCheck, path, werr))
		return
	}
	pf, err := dir.Dup()
	if err != nil {
		s.unlisted = append(s.unlisted, fmt.Sprintf(cantCheck, path, errors.Join(werr, err)))
		return
	}
	fd, err := unix.Openat(int(pf.Fd()), name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	pf.Close()
	if err != nil {
		s.unlisted = append(s.unlisted, fmt.Sprintf(cantCheck, path, errors.Join(werr, err)))
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		s.unlisted = append(s.unlisted, fmt.Sprintf(cantCheck, path, errors.Join(werr, err)))
		return
	}
	if s.skip[fileID{Dev: uint64(st.Dev), Ino: st.Ino}] {
		return
	}
	sub, err := safefs.FromFD(uintptr(fd), path)
	if err != nil {
		s.unlisted = append(s.unlisted, fmt.Sprintf(cantCheck, path, errors.Join(werr, err)))
		return
	}
	defer sub.Close()
	s.walkDir(sub, fd, rel, depth+1, found)
}

// listAnyway gives the directory held by the O_PATH handle fd owner read, write and search
// permission (write: what was planted in it is taken away), and returns what gives its mode
// back. The command ran as the user massgen runs
// as, so a directory it made unlistable is that user's. The chmod goes through
// /proc/self/fd (the handle itself: no name resolved again, no link followed); fchmod refuses
// an O_PATH handle.
func listAnyway(fd int) (restore func() error, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, unix.ENOTDIR
	}
	if int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("owned by uid %d, not by massgen's user", st.Uid)
	}
	proc := fmt.Sprintf("/proc/self/fd/%d", fd)
	mode := st.Mode & 0o7777
	if err := unix.Chmod(proc, mode|unix.S_IRWXU); err != nil {
		return nil, fmt.Errorf("chmod: %w", err)
	}
	return func() error { return unix.Chmod(proc, mode) }, nil
}

// cantCheck is the note for a directory the clean-up could not list (path, error).
const cantCheck = "could not check for .git, .env and .massgen entries in %s: %v"

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
	seen := map[string]bool{}
	for _, u := range s.unlisted {
		if seen[u] {
			continue // found by both walks
		}
		seen[u] = true
		log.Warn("the clean-up could not check a directory", zap.String("note", u))
		notes = append(notes, "massgen: "+u)
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
