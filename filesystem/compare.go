package filesystem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
)

func (t *Toolset) readForDiff(l loc) (data []byte, binary bool, err error) {
	r, err := t.openRoot(l)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	return readForDiffIn(r, l.rel, l.abs)
}

func readForDiffIn(r *os.Root, rel, abs string) ([]byte, bool, error) {
	f, fi, err := openFileNoFollow(r, rel)
	if err != nil {
		return nil, false, pathErr(abs, err)
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", abs)
	}
	if fi.Size() > maxDiffBytes {
		return nil, false, fmt.Errorf("%s is too large to compare (%d bytes, limit %d)", abs, fi.Size(), maxDiffBytes)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, false, pathErr(abs, err)
	}
	return data, binaryKind(abs, data) != "", nil
}

func (t *Toolset) compareFiles(ctx context.Context, c *call) (any, error) {
	p1, err := c.str("file1", true)
	if err != nil {
		return nil, err
	}
	p2, err := c.str("file2", true)
	if err != nil {
		return nil, err
	}
	n, err := c.integer("context_lines", 3)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > 1000 {
		return nil, fmt.Errorf("context_lines must be between 0 and 1000, got %d", n)
	}
	l1, err := t.locate(p1, false)
	if err != nil {
		return nil, err
	}
	l2, err := t.locate(p2, false)
	if err != nil {
		return nil, err
	}
	a, bin1, err := t.readForDiff(l1)
	if err != nil {
		return nil, err
	}
	b, bin2, err := t.readForDiff(l2)
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(l1.abs)
	t.tracker.Mark(l2.abs)
	if bin1 || bin2 {
		return map[string]any{"file1": l1.abs, "file2": l2.abs, "identical": bytes.Equal(a, b), "binary": true,
			"diff": "", "message": "binary files are compared by content only, not diffed",
			"stats": map[string]int{"added": 0, "removed": 0}}, nil
	}
	diff, added, removed := unifiedDiff(l1.abs, l2.abs, string(a), string(b), n)
	return map[string]any{"file1": l1.abs, "file2": l2.abs, "identical": bytes.Equal(a, b), "binary": false,
		"diff": diff, "stats": map[string]int{"added": added, "removed": removed, "changed": min(added, removed)}}, nil
}

func (t *Toolset) compareDirectories(ctx context.Context, c *call) (any, error) {
	p1, err := c.str("dir1", true)
	if err != nil {
		return nil, err
	}
	p2, err := c.str("dir2", true)
	if err != nil {
		return nil, err
	}
	show, err := c.boolean("show_content_diff")
	if err != nil {
		return nil, err
	}
	l1, err := t.locate(p1, false)
	if err != nil {
		return nil, err
	}
	l2, err := t.locate(p2, false)
	if err != nil {
		return nil, err
	}
	r1, d1, err := t.openDirLoc(l1)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r1, d1)
	r2, d2, err := t.openDirLoc(l2)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r2, d2)
	f1, _, err := walkFiles(d1, func(rel string) bool { return t.isPrivate(filepath.Join(l1.abs, filepath.FromSlash(rel))) })
	if err != nil {
		return nil, pathErr(l1.abs, err)
	}
	f2, _, err := walkFiles(d2, func(rel string) bool { return t.isPrivate(filepath.Join(l2.abs, filepath.FromSlash(rel))) })
	if err != nil {
		return nil, pathErr(l2.abs, err)
	}
	in2 := map[string]bool{}
	for _, f := range f2 {
		in2[f] = true
	}
	in1 := map[string]bool{}
	only1, only2, different, identical := []string{}, []string{}, []string{}, []string{}
	diffs := map[string]string{}
	var errs []failure
	for _, f := range f1 {
		in1[f] = true
		if !in2[f] {
			only1 = append(only1, f)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, bin1, err1 := readForDiffIn(d1, f, filepath.Join(l1.abs, f))
		b, bin2, err2 := readForDiffIn(d2, f, filepath.Join(l2.abs, f))
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
	for _, f := range f2 {
		if !in1[f] {
			only2 = append(only2, f)
		}
	}
	out := map[string]any{"dir1": l1.abs, "dir2": l2.abs, "only_in_dir1": only1, "only_in_dir2": only2,
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
