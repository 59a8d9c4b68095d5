package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

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
		c.changed(made, Created)
	}
	if err := t.keepOriginal(ctx, dir, w.Name, w.Path); err != nil {
		return false, 0, err
	}
	created, n, err := dir.WriteFile(w.Name, src, mode)
	if err != nil {
		return false, 0, pathErr(w.Path, err)
	}
	c.changed(w.Path, map[bool]ChangeOp{true: Created, false: Modified}[created])
	return created, n, nil
}

func (t *Toolset) writeFile(ctx context.Context, c *call) (any, error) {
	if _, err := c.str("path", true); err != nil {
		return nil, err
	}
	content, err := c.str("content", false)
	if err != nil {
		return nil, err
	}
	if _, ok := c.args["content"]; !ok {
		return nil, errors.New(`missing argument "content"`)
	}
	w, err := c.walk("path")
	if err != nil {
		return nil, err
	}
	created, n, err := t.writeWalk(ctx, c, w, strings.NewReader(content), 0)
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(w.Path)
	return map[string]any{"path": w.Path, "bytes_written": n, "created": created}, nil
}

type edit struct{ oldText, newText string }

func (c *call) edits() ([]edit, error) {
	raw, ok := c.args["edits"].([]any)
	if !ok || len(raw) == 0 {
		return nil, errors.New(`argument "edits" must be a non-empty list of {oldText, newText}`)
	}
	var out []edit
	for i, e := range raw {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("edits[%d] must be an object {oldText, newText}", i)
		}
		o, ok1 := m["oldText"].(string)
		n, ok2 := m["newText"].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("edits[%d] needs string oldText and newText", i)
		}
		if o == "" {
			return nil, fmt.Errorf("edits[%d].oldText is empty", i)
		}
		out = append(out, edit{o, n})
	}
	return out, nil
}

// applyEdits applies each edit to the first exact occurrence of oldText, or else to the first
// run of lines equal to oldText's lines ignoring leading/trailing whitespace (keeping the
// original indentation of the first line).
func applyEdits(content string, edits []edit) (string, error) {
	crlf := strings.Contains(content, "\r\n")
	for i, e := range edits {
		old, nw := e.oldText, e.newText
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
			return "", fmt.Errorf("edit %d: could not find oldText in the file (it must match exactly, or line by line ignoring indentation):\n%s", i, e.oldText)
		}
		content = strings.Join(cl, sep)
	}
	return content, nil
}

func (t *Toolset) editFile(ctx context.Context, c *call) (any, error) {
	if _, err := c.str("path", true); err != nil {
		return nil, err
	}
	edits, err := c.edits()
	if err != nil {
		return nil, err
	}
	dry, err := c.boolean("dryRun")
	if err != nil {
		return nil, err
	}
	w, err := c.walk("path")
	if err != nil {
		return nil, err
	}
	data, err := t.readWalk(c.name, w)
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(w.Path)
	updated, err := applyEdits(data, edits)
	if err != nil {
		return nil, err
	}
	diff, added, removed := unifiedDiff(w.Path, w.Path, data, updated, 3)
	if !dry && updated != data {
		if _, _, err := t.writeWalk(ctx, c, w, strings.NewReader(updated), 0); err != nil {
			return nil, err
		}
	}
	return map[string]any{"path": w.Path, "diff": diff, "added": added, "removed": removed, "dryRun": dry, "changed": updated != string(data)}, nil
}

func (t *Toolset) createDirectory(ctx context.Context, c *call) (any, error) {
	if _, err := c.str("path", true); err != nil {
		return nil, err
	}
	w, err := c.walk("path")
	if err != nil {
		return nil, err
	}
	if w.Exists {
		if !w.Info.IsDir() {
			return nil, fmt.Errorf("%s exists and is not a directory", w.Path)
		}
		return map[string]any{"path": w.Path, "created": false}, nil
	}
	if w.Name == "" {
		return nil, fmt.Errorf("cannot create %s", w.Path)
	}
	d, made, err := w.Dir.MkdirAll(append(slices.Clone(w.Missing), w.Name))
	if err != nil {
		return nil, pathErr(w.Path, err)
	}
	d.Close()
	if made != "" {
		// The first directory that did not exist is the one the agent creates: only that tree
		// counts as its own for read-before-delete (re-creating an existing directory, such
		// as a context path's root, must not make the user's files in it deletable).
		t.tracker.MarkTree(made)
		t.noteCreated(made)
		c.changed(made, Created)
	}
	return map[string]any{"path": w.Path, "created": made != ""}, nil
}
