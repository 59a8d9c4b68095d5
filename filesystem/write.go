package filesystem

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/safefs"
)

// writeWalk writes data where a walk leads, creating the missing parent directories (without
// following links), atomically (see safefs.Dir.WriteFile), and records the change.
func (t *Toolset) writeWalk(ctx context.Context, c *call, w *safefs.Walk, src io.Reader, mode fs.FileMode) (bool, int64, error) {
	if w.Exists && w.Info.IsDir() {
		return false, 0, fmt.Errorf("%s is a directory", w.Path)
	}
	dir, made, err := w.MakeParent()
	if err != nil {
		return false, 0, pathErr(w.Path, err)
	}
	defer dir.Close()
	if made != "" {
		t.noteCreated(made)
		c.changed(made, changes.Created)
	}
	if err := t.keepOriginal(ctx, dir, w.Name, w.Path); err != nil {
		return false, 0, err
	}
	created, n, err := dir.WriteFile(w.Name, src, mode)
	if err != nil {
		return false, 0, pathErr(w.Path, err)
	}
	c.changed(w.Path, map[bool]changes.ChangeOp{true: changes.Created, false: changes.Modified}[created])
	return created, n, nil
}

// applyEdits applies each edit to the first exact occurrence of oldText, or else to the first
// run of lines equal to oldText's lines ignoring leading/trailing whitespace (keeping the
// original indentation of the first line).
func applyEdits(content string, edits []edit) (string, error) {
	crlf := strings.Contains(content, "\r\n")
	for i, e := range edits {
		old, nw := e.OldText, e.NewText
		if crlf {
			old = strings.ReplaceAll(strings.ReplaceAll(old, "\r\n", "\n"), "\n", "\r\n")
			nw = strings.ReplaceAll(strings.ReplaceAll(nw, "\r\n", "\n"), "\n", "\r\n")
		}
		if idx := strings.Index(content, old); idx >= 0 {
			content = content[:idx] + nw + content[idx+len(old):]
			continue
		}
		sep := "\n"
		if crlf {
			sep = "\r\n"
		}
		cl := strings.Split(content, sep)
		ol := strings.Split(strings.TrimRight(old, "\r\n"), sep)
		found := false
		for s := 0; s+len(ol) <= len(cl) && !found; s++ {
			match := true
			for j := range ol {
				if strings.TrimSpace(cl[s+j]) != strings.TrimSpace(ol[j]) {
					match = false
					break
				}
			}
			if !match {
				continue
			}
			nl := strings.Split(strings.TrimRight(nw, "\r\n"), sep)
			indent := cl[s][:len(cl[s])-len(strings.TrimLeft(cl[s], " \t"))]
			oldIndent := ol[0][:len(ol[0])-len(strings.TrimLeft(ol[0], " \t"))]
			for j := range nl {
				nl[j] = indent + strings.TrimPrefix(nl[j], oldIndent)
				if j == 0 {
					nl[j] = indent + strings.TrimLeft(nl[0], " \t")
				}
			}
			if nw == "" {
				nl = nil
			}
			cl = append(cl[:s], append(nl, cl[s+len(ol):]...)...)
			found = true
		}
		if !found {
			return "", fmt.Errorf("edit %d: could not find oldText in the file (it must match exactly, or line by line ignoring indentation):\n%s", i, e.OldText)
		}
		content = strings.Join(cl, sep)
	}
	return content, nil
}
