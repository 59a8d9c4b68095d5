package filesystem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/permissions"
)

// errExists is the refusal to replace a file without overwrite.
var errExists = errors.New("exists (set overwrite=true to replace it)")

// copyInto copies the open regular file src to name in dir and records it.
func (t *Toolset) copyInto(ctx context.Context, c *call, src *os.File, info safefs.Info, dir *safefs.Dir, name string, overwrite bool) error {
	p := safefs.Join(dir.Path, name)
	if !overwrite {
		if _, err := dir.Lstat(name); err == nil {
			return fmt.Errorf("%s %w", p, errExists)
		}
	}
	if err := t.keepOriginal(ctx, dir, name, p); err != nil {
		return err
	}
	created, _, err := dir.WriteFile(name, src, info.Mode.Perm())
	if err != nil {
		return err
	}
	t.tracker.Mark(p)
	c.changed(p, map[bool]changes.ChangeOp{true: changes.Created, false: changes.Modified}[created])
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

func (r copyResult) failure() string {
	if r.fail {
		return "nothing was copied"
	}
	return ""
}

// copyEnds are the walks of a copy's source (which must exist) and destination, refusing a
// destination inside the source.
func (c *call) copyEnds(srcArg, dstArg string) (src, dst *safefs.Walk, err error) {
	if src, err = c.existing(srcArg); err != nil {
		return nil, nil, err
	}
	if dst, err = c.walk(dstArg); err != nil {
		return nil, nil, err
	}
	if withinCanonical(dst.Path, src.Path) {
		return nil, nil, fmt.Errorf("cannot copy %s into itself (%s)", src.Path, dst.Path)
	}
	return src, dst, nil
}

// destDir opens the directory a walk leads to, creating it (and missing parents) when missing.
func (t *Toolset) destDir(c *call, w *safefs.Walk) (*safefs.Dir, error) {
	if w.Exists {
		if !w.Info.IsDir() {
			return nil, fmt.Errorf("%s exists and is not a directory", w.Path)
		}
		d, err := w.OpenDir()
		if err != nil {
			return nil, pathErr(w.Path, err)
		}
		return d, nil
	}
	if w.Name == "" {
		return nil, fmt.Errorf("cannot create %s", w.Path)
	}
	names := append(append([]string(nil), w.Missing...), w.Name)
	d, made, err := w.Dir.MkdirAll(names)
	if made != "" {
		t.noteCreated(made)
		c.changed(made, changes.Created)
	}
	if err != nil {
		return nil, pathErr(w.Path, err)
	}
	return d, nil
}

// treeFile is a regular file found below a directory: its slash path and its lstat.
type treeFile struct {
	rel  string
	info safefs.Info
}

// readableFiles lists the regular files and links below d that the agent may read (through
// descriptors, never entering a link), skipping what matches exclude.
func (t *Toolset) readableFiles(ctx context.Context, d *safefs.Dir, exclude []string) (files, links []treeFile, err error) {
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		if matchAny(exclude, rel) || !t.readable(safefs.Join(dir.Path, e.Name)) {
			return false, nil
		}
		switch {
		case e.Info.IsDir():
			return true, nil
		case e.Info.IsLink():
			links = append(links, treeFile{rel, e.Info})
		case e.Info.IsRegular():
			files = append(files, treeFile{rel, e.Info})
		}
		return false, nil
	})
	slices.SortFunc(files, func(a, b treeFile) int { return strings.Compare(a.rel, b.rel) })
	return files, links, err
}

// copyTree copies the files under src to the same relative places under dst, judging every
// destination file on its own (protected files inside a writable tree).
func (t *Toolset) copyTree(ctx context.Context, c *call, src, dst *safefs.Dir, include, exclude []string, overwrite bool) (copyResult, error) {
	res := copyResult{Source: src.Path, Destination: dst.Path, Copied: []string{}, Skipped: []skipped{}, Errors: []failure{}}
	files, links, err := t.readableFiles(ctx, src, exclude)
	if err != nil {
		return res, pathErr(src.Path, err)
	}
	for _, l := range links {
		if len(include) == 0 || matchAny(include, l.rel) {
			res.Skipped = append(res.Skipped, skipped{safefs.JoinRel(src.Path, l.rel), "symbolic link (not copied)"})
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if len(include) > 0 && !matchAny(include, f.rel) {
			continue
		}
		target := safefs.JoinRel(dst.Path, f.rel)
		if err := t.checkEntry(ctx, c.name, target, permissions.Write); err != nil {
			res.Skipped = append(res.Skipped, skipped{target, err.Error()})
			continue
		}
		if err := t.copyRel(ctx, c, src, dst, f, overwrite); err != nil {
			if errors.Is(err, errExists) {
				res.Skipped = append(res.Skipped, skipped{target, "exists (overwrite is false)"})
			} else {
				res.Errors = append(res.Errors, failure{safefs.JoinRel(src.Path, f.rel), pathErr(target, err).Error()})
			}
			continue
		}
		res.Copied = append(res.Copied, target)
	}
	return res, nil
}

// copyRel copies the file f below src to the same place below dst, both reached through
// descriptors; the source must still be the file listed.
func (t *Toolset) copyRel(ctx context.Context, c *call, src, dst *safefs.Dir, f treeFile, overwrite bool) error {
	sdir, name, err := dirRel(src, f.rel, false)
	if err != nil {
		return err
	}
	defer sdir.Close()
	in, info, err := sdir.OpenFileSame(name, f.info)
	if err != nil {
		return err
	}
	defer in.Close()
	ddir, dname, made, err := dirRelMade(dst, f.rel)
	if err != nil {
		return err
	}
	defer ddir.Close()
	t.noteCreated(made)
	return t.copyInto(ctx, c, in, info, ddir, dname, overwrite)
}

// sameEntry checks the walked entry is still what stands at its name (not swapped since).
func sameEntry(w *safefs.Walk) error {
	cur, err := w.Dir.Lstat(w.Name)
	if err != nil {
		return pathErr(w.Path, err)
	}
	if !cur.Same(w.Info) || cur.IsLink() != w.Info.IsLink() {
		return pathErr(w.Path, errChanged)
	}
	return nil
}

// moveAcrossDevices copies then deletes.
func (t *Toolset) moveAcrossDevices(ctx context.Context, c *call, src *safefs.Walk, dir *safefs.Dir, name string) error {
	if _, err := dir.Lstat(name); err == nil {
		return os.ErrExist
	}
	if src.Info.IsDir() {
		sd, err := src.Dir.SubSame(src.Name, src.Info)
		if err != nil {
			return err
		}
		defer sd.Close()
		if err := dir.Mkdir(name, src.Info.Mode.Perm()|0o700); err != nil {
			return err
		}
		dd, err := dir.Sub(name)
		if err != nil {
			return err
		}
		defer dd.Close()
		res, err := t.copyTree(ctx, c, sd, dd, nil, nil, false)
		if err != nil {
			return err
		}
		if len(res.Errors) > 0 || len(res.Skipped) > 0 {
			return fmt.Errorf("move across filesystems incomplete (source kept): %d errors, %d skipped", len(res.Errors), len(res.Skipped))
		}
		return src.Dir.RemoveAll(src.Name)
	}
	f, info, err := src.OpenFile()
	if err != nil {
		return err
	}
	defer f.Close()
	if err := t.copyInto(ctx, c, f, info, dir, name, false); err != nil {
		return err
	}
	return src.Dir.Remove(src.Name)
}

// checkTreeOf checks that every entry below the walked directory may go (moved or deleted with
// it): never a system path, each judged as a deletion on its canonical path.
func (t *Toolset) checkTreeOf(ctx context.Context, tool string, w *safefs.Walk) error {
	d, err := w.Dir.SubSame(w.Name, w.Info)
	if err != nil {
		return pathErr(w.Path, err)
	}
	defer d.Close()
	var bad []string
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		p := safefs.Join(dir.Path, e.Name)
		if x := excludedIn(rel); x != "" {
			bad = append(bad, p+" (system path "+x+")")
			return false, nil
		}
		if err := t.checkEntry(ctx, tool, p, permissions.Delete); err != nil {
			bad = append(bad, p)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return pathErr(w.Path, err)
	}
	if len(bad) > 0 {
		if len(bad) > 20 {
			bad = append(bad[:20], fmt.Sprintf("... and %d more", len(bad)-20))
		}
		return fmt.Errorf("%s contains paths you may not change: %s", w.Path, strings.Join(bad, ", "))
	}
	return nil
}
