package filesystem

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"path"

	"github.com/massgen-go/massgen/internal/textdiff"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed compare_directories.md
var compareDirectoriesDescription string

type compareDirectoriesParams struct {
	Dir1            string `json:"dir1" access:"read" required:"true"`
	Dir2            string `json:"dir2" access:"read" required:"true"`
	ShowContentDiff bool   `json:"show_content_diff" description:"Include unified diffs."`
}

func init() {
	register(tooldecl.Def[compareDirectoriesParams]{
		Name:        "compare_directories",
		Description: compareDirectoriesDescription,
		Order:       160,
	}, (*Toolset).compareDirectories)
}

func (t *Toolset) compareDirectories(ctx context.Context, c *call, p compareDirectoriesParams) (any, error) {
	show := p.ShowContentDiff
	w1, d1, err := c.dirOf("dir1")
	if err != nil {
		return nil, err
	}
	defer d1.Close()
	w2, d2, err := c.dirOf("dir2")
	if err != nil {
		return nil, err
	}
	defer d2.Close()
	t1, _, err := t.readableFiles(ctx, d1, nil)
	if err != nil {
		return nil, pathErr(w1.Path, err)
	}
	t2, _, err := t.readableFiles(ctx, d2, nil)
	if err != nil {
		return nil, pathErr(w2.Path, err)
	}
	f1, f2 := map[string]treeFile{}, map[string]treeFile{}
	for _, f := range t2 {
		f2[f.rel] = f
	}
	only1, only2, different, identical := []string{}, []string{}, []string{}, []string{}
	diffs := map[string]string{}
	var errs []failure
	for _, tf := range t1 {
		f := tf.rel
		f1[f] = tf
		if _, ok := f2[f]; !ok {
			only1 = append(only1, f)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, bin1, err1 := readRelForDiff(d1, f, tf.info)
		b, bin2, err2 := readRelForDiff(d2, f, f2[f].info)
		if err1 != nil || err2 != nil {
			errs = append(errs, failure{f, errors.Join(err1, err2).Error()})
			continue
		}
		if bytes.Equal(a, b) {
			identical = append(identical, f)
			continue
		}
		different = append(different, f)
		if show && len(diffs) < maxDiffs {
			if bin1 || bin2 {
				diffs[f] = "Binary files differ"
			} else {
				diffs[f], _, _ = textdiff.Unified(path.Join("dir1", f), path.Join("dir2", f), string(a), string(b), 3)
			}
		}
	}
	for _, tf := range t2 {
		if _, ok := f1[tf.rel]; !ok {
			only2 = append(only2, tf.rel)
		}
	}
	out := map[string]any{"dir1": w1.Path, "dir2": w2.Path, "only_in_dir1": only1, "only_in_dir2": only2,
		"different": different, "identical": identical}
	if show {
		out["content_diff"] = diffs
		if len(different) > maxDiffs {
			out["content_diff_truncated"] = true
		}
	}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	return out, nil
}
