package filesystem

import (
	"context"
	_ "embed"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/permissions"
)

//go:embed delete_files_batch.md
var deleteFilesBatchDescription string

// The base path is written (files below it are deleted, each judged on its own); the base
// itself stays.
type deleteFilesBatchParams struct {
	BasePath        string   `json:"base_path" access:"write" required:"true"`
	IncludePatterns []string `json:"include_patterns" description:"Globs on the path relative to base_path (default [\"*\"])."`
	ExcludePatterns []string `json:"exclude_patterns" description:"Globs to keep."`
	DryRun          bool     `json:"dry_run" description:"Only report what would be deleted."`
}

func init() {
	register(tooldecl.Def[deleteFilesBatchParams]{
		Name:        "delete_files_batch",
		Description: deleteFilesBatchDescription,
		Order:       150,
		Summary:     func(p deleteFilesBatchParams) string { return tooldecl.Notes(tooldecl.If(p.DryRun, "dry run")) },
		Preview: func(_ deleteFilesBatchParams, paths []string) string {
			return describeChange("delete_files_batch", paths)
		},
	}, (*Toolset).deleteFilesBatch)
}

func (t *Toolset) deleteFilesBatch(ctx context.Context, c *call, p deleteFilesBatchParams) (any, error) {
	include, exclude, dry := patternsOr(p.IncludePatterns), p.ExcludePatterns, p.DryRun
	w, d, err := c.dirOf("base_path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	res := batchDelete{BasePath: w.Path, DryRun: dry, Deleted: []string{}, Skipped: []skipped{}, Errors: []failure{}}
	var targets []treeFile
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		p := safefs.Join(dir.Path, e.Name)
		if matchAny(exclude, rel) || !t.readable(p) {
			return false, nil
		}
		if e.Info.IsDir() {
			if x := t.excludedBelowRoot(p); x != "" {
				res.Skipped = append(res.Skipped, skipped{p, "system path (" + x + ") is never deleted"})
				return false, nil
			}
			return true, nil
		}
		if matchAny(include, rel) {
			targets = append(targets, treeFile{rel, e.Info})
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		abs := safefs.JoinRel(w.Path, f.rel)
		if x := t.excludedBelowRoot(abs); x != "" {
			res.Skipped = append(res.Skipped, skipped{abs, "system path (" + x + ") is never deleted"})
			continue
		}
		if err := t.checkEntry(ctx, c.name, abs, permissions.Delete); err != nil {
			res.Skipped = append(res.Skipped, skipped{abs, err.Error()})
			continue
		}
		if t.o.EnforceReadBeforeDelete && !t.tracker.Known(abs) {
			res.Skipped = append(res.Skipped, skipped{abs, "not read or created in this run (read it first)"})
			res.Unread = append(res.Unread, abs)
			continue
		}
		if dry {
			res.WouldDelete = append(res.WouldDelete, abs)
			continue
		}
		if err := t.deleteIn(c, d, f, abs, &res); err != nil {
			res.Errors = append(res.Errors, failure{abs, err.Error()})
			continue
		}
		res.Deleted = append(res.Deleted, abs)
		t.tracker.forget(abs)
	}
	return res, nil
}
