package filesystem

import (
	"context"
	_ "embed"

	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed copy_files_batch.md
var copyFilesBatchDescription string

type copyFilesBatchParams struct {
	SourceBasePath      string   `json:"source_base_path" access:"read" required:"true"`
	DestinationBasePath string   `json:"destination_base_path" access:"write" required:"true"`
	IncludePatterns     []string `json:"include_patterns" description:"Globs on the path relative to source_base_path (default [\"*\"]: everything)."`
	ExcludePatterns     []string `json:"exclude_patterns" description:"Globs to skip."`
	Overwrite           bool     `json:"overwrite" description:"Replace existing files (default false)."`
}

func init() {
	register(tooldecl.Def[copyFilesBatchParams]{
		Name:        "copy_files_batch",
		Description: copyFilesBatchDescription,
		Order:       130,
		Summary:     func(p copyFilesBatchParams) string { return tooldecl.Notes(tooldecl.If(p.Overwrite, "overwrite")) },
		Preview:     func(_ copyFilesBatchParams, paths []string) string { return describeChange("copy_files_batch", paths) },
	}, (*Toolset).copyFilesBatch)
}

func (t *Toolset) copyFilesBatch(ctx context.Context, c *call, p copyFilesBatchParams) (any, error) {
	include, exclude, overwrite := patternsOr(p.IncludePatterns), p.ExcludePatterns, p.Overwrite
	src, dst, err := c.copyEnds("source_base_path", "destination_base_path")
	if err != nil {
		return nil, err
	}
	sd, err := src.OpenDir()
	if err != nil {
		return nil, pathErr(src.Path, err)
	}
	defer sd.Close()
	dd, err := t.destDir(c, dst)
	if err != nil {
		return nil, err
	}
	defer dd.Close()
	res, err := t.copyTree(ctx, c, sd, dd, include, exclude, overwrite)
	if err != nil {
		return nil, err
	}
	res.fail = len(res.Copied) == 0 && len(res.Errors) > 0
	return res, nil
}
