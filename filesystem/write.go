package filesystem

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// atomicWrite replaces name in dir with the content of src: a temp file in the same directory,
// fsync, rename. A killed run never leaves a half-written file. The mode of a replaced file is
// kept; a new file gets mode (0644 when zero). It reports whether the file was new.
func atomicWrite(dir *os.Root, name string, src io.Reader, mode fs.FileMode) (created bool, n int64, err error) {
	if mode == 0 {
		mode = 0o644
	}
	created = true
	if li, err := dir.Lstat(name); err == nil {
		switch {
		case li.Mode()&fs.ModeSymlink != 0:
			return false, 0, fmt.Errorf("%s: %w", name, errChanged)
		case li.IsDir():
			return false, 0, fmt.Errorf("%s is a directory", name)
		case !li.Mode().IsRegular():
			return false, 0, fmt.Errorf("%s is not a regular file", name)
		}
		created = false
		// Permissions are kept; setuid/setgid are not, as the kernel clears them when a file's
		// content is written: new content under an old setuid bit (of a root-owned file, when
		// massgen runs as root) would be a privilege escalation.
		mode = li.Mode() & (fs.ModePerm | fs.ModeSticky)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, 0, err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	short := name
	if len(short) > 100 {
		short = short[:100]
	}
	tmp := "." + short + ".massgen-tmp-" + hex.EncodeToString(rnd[:])
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode&fs.ModePerm)
	if err != nil {
		return false, 0, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = dir.Remove(tmp)
		}
	}()
	if n, err = io.Copy(f, src); err != nil {
		return false, 0, err
	}
	if err = f.Chmod(mode); err != nil { // umask, and setuid & co.
		return false, 0, err
	}
	if err = f.Sync(); err != nil {
		return false, 0, err
	}
	if err = f.Close(); err != nil {
		return false, 0, err
	}
	if err = dir.Rename(tmp, name); err != nil {
		return false, 0, err
	}
	ok = true
	if d, err := dir.Open("."); err == nil { // persist the rename
		_ = d.Sync()
		d.Close()
	}
	return created, n, nil
}

// writeAt writes data at l (a writable location), creating parent directories.
func (t *Toolset) writeAt(l loc, src io.Reader, mode fs.FileMode) (bool, int64, error) {
	r, dir, err := t.makeParent(l)
	if err != nil {
		return false, 0, err
	}
	defer closeDirs(r, dir)
	created, n, err := atomicWrite(dir, l.base(), src, mode)
	if err != nil {
		return false, 0, pathErr(l.abs, err)
	}
	return created, n, nil
}

func (t *Toolset) writeFile(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	content, err := c.str("content", false)
	if err != nil {
		return nil, err
	}
	if _, ok := c.args["content"]; !ok {
		return nil, errors.New(`missing argument "content"`)
	}
	l, err := t.locate(p, true)
	if err != nil {
		return nil, err
	}
	created, n, err := t.writeAt(l, strings.NewReader(content), 0)
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(l.abs)
	return map[string]any{"path": l.abs, "bytes_written": n, "created": created}, nil
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
	p, err := c.str("path", true)
	if err != nil {
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
	l, err := t.locate(p, !dry)
	if err != nil {
		return nil, err
	}
	data, err := t.readLoc(c.name, l)
	if err != nil {
		return nil, err
	}
	t.tracker.Mark(l.abs)
	updated, err := applyEdits(string(data), edits)
	if err != nil {
		return nil, err
	}
	diff, added, removed := unifiedDiff(l.abs, l.abs, string(data), updated, 3)
	if !dry && updated != string(data) {
		if _, _, err := t.writeAt(l, strings.NewReader(updated), 0); err != nil {
			return nil, err
		}
	}
	return map[string]any{"path": l.abs, "diff": diff, "added": added, "removed": removed, "dryRun": dry, "changed": updated != string(data)}, nil
}

func (t *Toolset) createDirectory(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	l, err := t.locate(p, true)
	if err != nil {
		return nil, err
	}
	r, err := t.openRoot(l)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// The first directory that does not exist yet is the one the agent creates: only that
	// tree counts as its own for read-before-delete (re-creating an existing directory, such
	// as a context path's root, must not make the user's files in it deletable).
	firstNew := ""
	if l.rel != "." {
		cur := ""
		for _, c := range strings.Split(filepath.ToSlash(l.rel), "/") {
			cur = filepath.Join(cur, c)
			if _, err := r.Lstat(cur); err != nil {
				firstNew = cur
				break
			}
		}
	}
	d, err := mkdirAllNoFollow(r, l.rel)
	if err != nil {
		return nil, pathErr(l.abs, err)
	}
	if d != r {
		d.Close()
	}
	if firstNew != "" {
		t.tracker.MarkTree(filepath.Join(l.rootDir, firstNew))
	}
	return map[string]any{"path": l.abs, "created": firstNew != ""}, nil
}
