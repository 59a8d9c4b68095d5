// Package tmpsweep removes the temp files that writes killed half-way leave in context paths
// (the user's folders). Massgen writes a file by writing a temp file beside it and renaming it
// into place; where the filesystem supports O_TMPFILE the temp file has no name and vanishes with
// the process, elsewhere it is named ".<name>.massgen-tmp-<12 hex digits>" and a kill leaves it
// behind. Sweep runs at the start and the end of every run (under the project's run lock) and
// removes only the files it can tell are massgen's and abandoned: that exact name, a regular file
// with one link, owned by this user, and open in no process (a writer holds its temp file open
// until the rename). Anything else is left in place.
package tmpsweep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/permissions"
)

// namePattern is the name of a temp file of filesystem's atomic write (filesystem/write.go).
var namePattern = regexp.MustCompile(`^\..+\.massgen-tmp-[0-9a-f]{12}$`)

// IsTempName reports whether name is the name of a massgen temp file.
func IsTempName(name string) bool { return namePattern.MatchString(name) }

// Report is what a sweep did.
type Report struct {
	Removed []string // absolute paths
	Kept    []Kept   // temp-file names that were left in place, with why
}

// Kept is a file with a temp file's name that Sweep left in place.
type Kept struct {
	Path   string
	Reason string
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// candidate is a file with a temp name, as found: its folder is reached again from dir (a folder
// held open from the start of the sweep) through rel, one folder at a time and never through a
// link, and the file is removed only if it is still the one found.
type candidate struct {
	path string // as shown: the root as given and the names below it
	dir  *safefs.Dir
	rel  string // the folder below dir that holds the file ("" for dir itself)
	name string
	info safefs.Info
}

// Sweep removes abandoned temp files under roots (files or folders; a file's temp files are
// beside it, in its folder). Folders agents can never write in a context path
// (permissions.DefaultExcluded: .git, node_modules, ...) are not walked.
func Sweep(ctx context.Context, roots []string, log *zap.Logger) (Report, error) {
	if log == nil {
		log = zap.NewNop()
	}
	var rep Report
	var cands []candidate
	var errs []error
	for _, root := range roots {
		found, dir, err := find(ctx, root)
		if dir != nil {
			defer dir.Close()
		}
		if err != nil {
			errs = append(errs, err)
		}
		for _, c := range found {
			if reason := notOurs(c); reason != "" {
				rep.Kept = append(rep.Kept, Kept{Path: c.path, Reason: reason})
				continue
			}
			cands = append(cands, c)
		}
	}
	if len(cands) > 0 {
		open, err := openFiles()
		if err != nil {
			for _, c := range cands {
				rep.Kept = append(rep.Kept, Kept{Path: c.path, Reason: "cannot tell whether a process is writing it: " + err.Error()})
			}
			cands = nil
		}
		for _, c := range cands {
			if open[fileID{dev: c.info.Dev, ino: c.info.Ino}] {
				rep.Kept = append(rep.Kept, Kept{Path: c.path, Reason: "a process has it open (a write in progress)"})
				continue
			}
			if err := removeIfSame(c); errors.Is(err, fs.ErrNotExist) || errors.Is(err, safefs.ErrChanged) {
				// Renamed into place or removed meanwhile (not abandoned after all), or its
				// folder moved: left for the next sweep.
				continue
			} else if err != nil {
				errs = append(errs, fmt.Errorf("removing %s: %w", c.path, err))
				continue
			}
			rep.Removed = append(rep.Removed, c.path)
			log.Info("removed a temp file left by an interrupted write", zap.String("path", c.path))
		}
	}
	for _, k := range rep.Kept {
		log.Info("temp-file name left in place", zap.String("path", k.Path), zap.String("reason", k.Reason))
	}
	slices.Sort(rep.Removed)
	return rep, errors.Join(errs...)
}

// find lists the files with a temp name under root (root's folder when it is a file), walking
// from one descriptor on root (or its folder) that it returns for the removal to start from.
func find(ctx context.Context, root string) ([]candidate, *safefs.Dir, error) {
	w, err := safefs.Resolve(root, true)
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()
	if !w.Exists {
		return nil, nil, nil
	}
	var out []candidate
	if !w.Info.IsDir() {
		// A file context path: only its own temp files, in its folder.
		dir, err := w.Dir.SubPath("")
		if err != nil {
			return nil, nil, err
		}
		ents, _, err := dir.Entries(0)
		if err != nil {
			return nil, dir, err
		}
		prefix := "." + w.Name
		if len(prefix) > 101 {
			prefix = prefix[:101] // the writer keeps the first 100 bytes of the name
		}
		parent := filepath.Dir(root)
		for _, e := range ents {
			if n := e.Name; IsTempName(n) && len(n) > len(prefix) && n[:len(prefix)] == prefix && e.Info.IsRegular() {
				out = append(out, candidate{path: filepath.Join(parent, n), dir: dir, name: n, info: e.Info})
			}
		}
		return out, dir, nil
	}
	dir, err := w.OpenDir()
	if err != nil {
		return nil, nil, err
	}
	// WalkTypes: a stat for directories and temp-named files only, as filepath.WalkDir did.
	err = dir.WalkTypes(func(rel string, in *safefs.Dir, e safefs.Entry, err error) error {
		if err != nil {
			return nil // unreadable or replaced folder: nothing massgen could have written there either
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if e.Info.IsDir() && slices.Contains(permissions.DefaultExcluded, e.Name) {
			return fs.SkipDir
		}
		if e.Info.IsRegular() && IsTempName(e.Name) {
			if e.Info, err = in.Lstat(e.Name); err != nil || !e.Info.IsRegular() {
				return nil // vanished or replaced meanwhile
			}
			out = append(out, candidate{path: filepath.Join(root, filepath.FromSlash(rel)), dir: dir,
				rel: path.Dir(rel), name: e.Name, info: e.Info})
		}
		return nil
	})
	return out, dir, err
}

// removeIfSame removes c's file if it is still the file that was checked, reaching its folder
// again from the sweep's descriptor.
func removeIfSame(c candidate) error {
	rel := c.rel
	if rel == "." {
		rel = ""
	}
	d, err := c.dir.SubPath(rel)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.RemoveSame(c.name, c.info)
}
