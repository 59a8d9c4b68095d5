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
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"go.uber.org/zap"

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

// candidate is a file with a temp name, as found.
type candidate struct {
	path string
	id   fileID
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
		found, err := find(ctx, root)
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
			if open[c.id] {
				rep.Kept = append(rep.Kept, Kept{Path: c.path, Reason: "a process has it open (a write in progress)"})
				continue
			}
			if err := removeIfSame(c); errors.Is(err, fs.ErrNotExist) {
				continue // renamed into place or removed meanwhile: not abandoned after all
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

// find lists the files with a temp name under root (root's folder when it is a file).
func find(ctx context.Context, root string) ([]candidate, error) {
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []candidate
	add := func(p string) {
		if id, err := statID(p); err == nil {
			out = append(out, candidate{path: p, id: id})
		}
	}
	if !fi.IsDir() {
		// A file context path: only its own temp files, in its folder.
		dir, base := filepath.Split(root)
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		prefix := "." + base
		if len(prefix) > 101 {
			prefix = prefix[:101] // the writer keeps the first 100 bytes of the name
		}
		for _, e := range ents {
			if n := e.Name(); IsTempName(n) && len(n) > len(prefix) && n[:len(prefix)] == prefix && e.Type().IsRegular() {
				add(filepath.Join(dir, n))
			}
		}
		return out, nil
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable folder: nothing massgen could have written there either
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() && p != root && slices.Contains(permissions.DefaultExcluded, d.Name()) {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && IsTempName(d.Name()) {
			add(p)
		}
		return nil
	})
	return out, err
}
