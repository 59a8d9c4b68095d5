package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// copyOne copies the regular file srcRel under src to dst (a writable location).
func (t *Toolset) copyOne(src *os.Root, srcRel string, dst loc, overwrite bool) error {
	f, fi, err := openFileNoFollow(src, srcRel)
	if err != nil {
		return err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", srcRel)
	}
	if !overwrite {
		if _, err := os.Lstat(dst.abs); err == nil {
			return fmt.Errorf("%s exists (set overwrite=true to replace it)", dst.abs)
		}
	}
	if _, _, err := t.writeAt(dst, f, fi.Mode()&(fs.ModePerm)); err != nil {
		return err
	}
	t.tracker.Mark(dst.abs)
	return nil
}

type skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

type failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

type copyResult struct {
	Source      string    `json:"source"`
	Destination string    `json:"destination"`
	Copied      []string  `json:"copied"`
	Skipped     []skipped `json:"skipped"`
	Errors      []failure `json:"errors"`
	fail        bool
}

func (r copyResult) failed() bool { return r.fail }

func (t *Toolset) copyFile(ctx context.Context, c *call) (any, error) {
	sp, err := c.str("source_path", true)
	if err != nil {
		return nil, err
	}
	dp, err := c.str("destination_path", true)
	if err != nil {
		return nil, err
	}
	overwrite, err := c.boolean("overwrite")
	if err != nil {
		return nil, err
	}
	src, dst, err := t.copyEnds(sp, dp)
	if err != nil {
		return nil, err
	}
	r, sd, fi, err := t.openEntry(src)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r, sd)
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, pathErr(src.abs, errChanged)
	}
	if !fi.IsDir() {
		if di, err := os.Stat(dst.abs); err == nil && di.IsDir() {
			// Copying a file onto a directory puts it inside, under its own name.
			into := filepath.Join(dst.abs, filepath.Base(src.abs))
			if err := t.checkPath(ctx, c.name, into, true); err != nil {
				return nil, err
			}
			if dst, err = t.locateAbs(into, true); err != nil {
				return nil, err
			}
		}
		if err := t.copyOne(r, src.rel, dst, overwrite); err != nil {
			return nil, pathErr(src.abs, err)
		}
		return map[string]any{"source": src.abs, "destination": dst.abs, "copied": []string{dst.abs}}, nil
	}
	_, dstErr := os.Lstat(dst.abs)
	res, err := t.copyTree(ctx, c.name, src, dst, nil, nil, overwrite)
	if err != nil {
		return nil, err
	}
	if len(res.Copied) == 0 && (len(res.Errors) > 0 || len(res.Skipped) > 0) {
		res.fail = true
	}
	if dstErr != nil {
		// A directory the copy created is the agent's. An existing one (a context path's root)
		// is not: only the copied files (marked one by one) become deletable.
		t.tracker.MarkTree(dst.abs)
	}
	return res, nil
}

// copyEnds locates the source (readable) and destination (writable) of a copy, refusing a
// destination inside the source.
func (t *Toolset) copyEnds(sp, dp string) (src, dst loc, err error) {
	if src, err = t.locate(sp, false); err != nil {
		return loc{}, loc{}, err
	}
	if dst, err = t.locate(dp, true); err != nil {
		return loc{}, loc{}, err
	}
	if under(dst.abs, src.abs) {
		return loc{}, loc{}, fmt.Errorf("cannot copy %s into itself (%s)", src.abs, dst.abs)
	}
	return src, dst, nil
}

// copyTree copies the files under the directory src to the same relative places under dst,
// checking every destination file with the Guard (protected files inside a writable tree).
func (t *Toolset) copyTree(ctx context.Context, tool string, src, dst loc, include, exclude []string, overwrite bool) (copyResult, error) {
	res := copyResult{Source: src.abs, Destination: dst.abs, Copied: []string{}, Skipped: []skipped{}, Errors: []failure{}}
	r, d, err := t.openDirLoc(src)
	if err != nil {
		return res, err
	}
	defer closeDirs(r, d)
	files, links, err := walkFiles(d, func(rel string) bool {
		return matchAny(exclude, rel) || t.isPrivate(filepath.Join(src.abs, filepath.FromSlash(rel)))
	})
	if err != nil {
		return res, pathErr(src.abs, err)
	}
	for _, rel := range links {
		if len(include) == 0 || matchAny(include, rel) {
			res.Skipped = append(res.Skipped, skipped{filepath.Join(src.abs, rel), "symbolic link (not copied)"})
		}
	}
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if len(include) > 0 && !matchAny(include, rel) || matchAny(exclude, rel) {
			continue
		}
		target := filepath.Join(dst.abs, filepath.FromSlash(rel))
		if err := t.checkPath(ctx, tool, target, true); err != nil {
			res.Skipped = append(res.Skipped, skipped{target, err.Error()})
			continue
		}
		tl, err := t.locateAbs(target, true)
		if err != nil {
			res.Skipped = append(res.Skipped, skipped{target, err.Error()})
			continue
		}
		if err := t.copyOne(d, rel, tl, overwrite); err != nil {
			if strings.Contains(err.Error(), "overwrite=true") {
				res.Skipped = append(res.Skipped, skipped{target, "exists (overwrite is false)"})
			} else {
				res.Errors = append(res.Errors, failure{filepath.Join(src.abs, rel), pathErr(target, err).Error()})
			}
			continue
		}
		res.Copied = append(res.Copied, target)
	}
	return res, nil
}

func (t *Toolset) copyFilesBatch(ctx context.Context, c *call) (any, error) {
	sp, err := c.str("source_base_path", true)
	if err != nil {
		return nil, err
	}
	dp, err := c.str("destination_base_path", true)
	if err != nil {
		return nil, err
	}
	include, exclude, err := c.patterns()
	if err != nil {
		return nil, err
	}
	overwrite, err := c.boolean("overwrite")
	if err != nil {
		return nil, err
	}
	src, dst, err := t.copyEnds(sp, dp)
	if err != nil {
		return nil, err
	}
	res, err := t.copyTree(ctx, c.name, src, dst, include, exclude, overwrite)
	if err != nil {
		return nil, err
	}
	res.fail = len(res.Copied) == 0 && len(res.Errors) > 0
	return res, nil
}

// renameNoReplace moves (fromDir, fromName) to (toDir, toName) with renameat2(NOREPLACE): the
// directories are already-verified handles, so no path is re-resolved.
func renameNoReplace(fromDir *os.Root, fromName string, toDir *os.Root, toName string) error {
	fd1, err := fromDir.Open(".")
	if err != nil {
		return err
	}
	defer fd1.Close()
	fd2, err := toDir.Open(".")
	if err != nil {
		return err
	}
	defer fd2.Close()
	err = unix.Renameat2(int(fd1.Fd()), fromName, int(fd2.Fd()), toName, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// Filesystem without RENAME_NOREPLACE: check, then rename (a small window).
		if _, lerr := toDir.Lstat(toName); lerr == nil {
			return fs.ErrExist
		}
		err = unix.Renameat(int(fd1.Fd()), fromName, int(fd2.Fd()), toName)
	}
	if err != nil {
		return &fs.PathError{Op: "rename", Path: fromName, Err: err}
	}
	return nil
}

// isRootPath reports whether abs is a managed root or contains one (never deleted or moved).
func (t *Toolset) isRootPath(abs string) (string, bool) {
	all := append(t.roots(false), t.configuredRoots()...)
	for _, r := range all {
		if r == "" {
			continue
		}
		rr := resolveRoot(r)
		if under(rr, abs) || under(filepath.Clean(r), abs) {
			return r, true
		}
	}
	return "", false
}

func (t *Toolset) moveFile(ctx context.Context, c *call) (any, error) {
	sp, err := c.str("source", true)
	if err != nil {
		return nil, err
	}
	dp, err := c.str("destination", true)
	if err != nil {
		return nil, err
	}
	src, err := t.locateEntry(sp, true)
	if err != nil {
		return nil, err
	}
	if root, ok := t.isRootPath(src.abs); ok {
		return nil, fmt.Errorf("cannot move %s: it is (or contains) the managed directory %s", src.abs, root)
	}
	if x := excludedIn(src.rel); x != "" && src.managed != resolveRoot(t.pol.Spec().Workspace) {
		return nil, fmt.Errorf("cannot move %s: %s is a protected system path", src.abs, x)
	}
	if src.abs != resolvedOr(t.pol, sp) {
		// The entry itself (a link) differs from what the Guard checked: check it too.
		if err := t.checkPath(ctx, c.name, src.abs, true); err != nil {
			return nil, err
		}
	}
	dst, err := t.locate(dp, true)
	if err != nil {
		return nil, err
	}
	if under(dst.abs, src.abs) {
		return nil, fmt.Errorf("cannot move %s into itself", src.abs)
	}
	sr, sd, fi, err := t.openEntry(src)
	if err != nil {
		return nil, err
	}
	defer closeDirs(sr, sd)
	if fi.IsDir() {
		// Protected files inside a moved directory would leave their place.
		if err := t.checkTree(ctx, c.name, sd, src); err != nil {
			return nil, err
		}
	}
	dr, dd, err := t.makeParent(dst)
	if err != nil {
		return nil, err
	}
	defer closeDirs(dr, dd)
	err = renameNoReplace(sd, src.base(), dd, dst.base())
	if errors.Is(err, unix.EXDEV) {
		err = t.moveAcrossDevices(ctx, src, dst, fi.IsDir(), sd)
	}
	if err != nil {
		return nil, pathErr(dst.abs, err)
	}
	// What the agent had read or created moves with the entry; files it never read stay
	// unread under their new name (a move must not make the user's files deletable).
	t.tracker.move(src.abs, dst.abs)
	return map[string]any{"source": src.abs, "destination": dst.abs}, nil
}

func resolvedOr(p interface{ Resolve(string) (string, error) }, s string) string {
	r, err := p.Resolve(s)
	if err != nil {
		return ""
	}
	return r
}

// moveAcrossDevices copies then deletes.
func (t *Toolset) moveAcrossDevices(ctx context.Context, src, dst loc, isDir bool, srcDir *os.Root) error {
	if _, err := os.Lstat(dst.abs); err == nil {
		return fs.ErrExist
	}
	if isDir {
		res, err := t.copyTree(ctx, "move_file", src, dst, nil, nil, false)
		if err != nil {
			return err
		}
		if len(res.Errors) > 0 || len(res.Skipped) > 0 {
			return fmt.Errorf("move across filesystems incomplete (source kept): %d errors, %d skipped", len(res.Errors), len(res.Skipped))
		}
		return srcDir.RemoveAll(src.base())
	}
	if err := t.copyOne(srcDir, src.base(), dst, false); err != nil {
		return err
	}
	return srcDir.Remove(src.base())
}

// checkTree checks write access to every entry under the directory (dir, l.base()).
func (t *Toolset) checkTree(ctx context.Context, tool string, dir *os.Root, l loc) error {
	sub, err := openSubdirNoFollow(dir, l.base())
	if err != nil {
		return pathErr(l.abs, err)
	}
	defer sub.Close()
	var bad []string
	err = fs.WalkDir(sub.FS(), ".", func(rel string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		p := filepath.Join(l.abs, filepath.FromSlash(rel))
		if x := excludedIn(rel); x != "" {
			bad = append(bad, p+" (system path "+x+")")
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if cerr := t.checkPath(ctx, tool, p, true); cerr != nil {
			bad = append(bad, p)
			if de.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return pathErr(l.abs, err)
	}
	if len(bad) > 0 {
		if len(bad) > 20 {
			bad = append(bad[:20], fmt.Sprintf("... and %d more", len(bad)-20))
		}
		return fmt.Errorf("%s contains paths you may not change: %s", l.abs, strings.Join(bad, ", "))
	}
	return nil
}
