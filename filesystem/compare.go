package filesystem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/massgen-go/massgen/internal/safefs"
)

// readForDiff reads a regular file opened through descriptors, bounded.
func readForDiff(f *os.File, info safefs.Info, abs string) ([]byte, bool, error) {
	defer f.Close()
	if info.Size > maxDiffBytes {
		return nil, false, fmt.Errorf("%s is too large to compare (%d bytes, limit %d)", abs, info.Size, maxDiffBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDiffBytes+1))
	if err != nil {
		return nil, false, pathErr(abs, err)
	}
	return data, binaryKind(abs, data) != "", nil
}

// readWalkForDiff reads the file of a path argument for a comparison.
func (c *call) readWalkForDiff(arg string) (string, []byte, bool, error) {
	w, err := c.existing(arg)
	if err != nil {
		return "", nil, false, err
	}
	f, info, err := w.OpenFile()
	if err != nil {
		return "", nil, false, pathErr(w.Path, err)
	}
	data, bin, err := readForDiff(f, info, w.Path)
	return w.Path, data, bin, err
}

func (t *Toolset) compareFiles(ctx context.Context, c *call) (any, error) {
	if _, err := c.str("file1", true); err != nil {
		return nil, err
	}
	if _, err := c.str("file2", true); err != nil {
		return nil, err
	}
	n, err := c.integer("context_lines", 3)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > 1000 {
		return nil, fmt.Errorf("context_lines must be between 0 and 1000, got %d", n)
	}
	a1, a, bin1, err := c.readWalkForDiff("file1")
	if err != nil {
		return nil, err
	}
	a2, b, bin2, err := c.readWalkForDiff("file2")
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(a1)
	t.tracker.Mark(a2)
	if bin1 || bin2 {
		return map[string]any{"file1": a1, "file2": a2, "identical": bytes.Equal(a, b), "binary": true,
			"diff": "", "message": "binary files are compared by content only, not diffed",
			"stats": map[string]int{"added": 0, "removed": 0}}, nil
	}
	diff, added, removed := unifiedDiff(a1, a2, string(a), string(b), n)
	return map[string]any{"file1": a1, "file2": a2, "identical": bytes.Equal(a, b), "binary": false,
		"diff": diff, "stats": map[string]int{"added": added, "removed": removed, "changed": min(added, removed)}}, nil
}

func (t *Toolset) compareDirectories(ctx context.Context, c *call) (any, error) {
	if _, err := c.str("dir1", true); err != nil {
		return nil, err
	}
	if _, err := c.str("dir2", true); err != nil {
		return nil, err
	}
	show, err := c.boolean("show_content_diff")
	if err != nil {
		return nil, err
	}
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
				diffs[f], _, _ = unifiedDiff(path.Join("dir1", f), path.Join("dir2", f), string(a), string(b), 3)
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

// readRelForDiff reads the file rel below d, which must still be the one listed.
func readRelForDiff(d *safefs.Dir, rel string, want safefs.Info) ([]byte, bool, error) {
	abs := safefs.JoinRel(d.Path, rel)
	dir, name, err := dirRel(d, rel, false)
	if err != nil {
		return nil, false, pathErr(abs, err)
	}
	defer dir.Close()
	f, info, err := dir.OpenFileSame(name, want)
	if err != nil {
		return nil, false, pathErr(abs, err)
	}
	return readForDiff(f, info, abs)
}
