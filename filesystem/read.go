package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"
)

// readText reads a text file through its root, refusing binary files and directories.
func (t *Toolset) readText(tool, p string) (abs, content string, err error) {
	l, err := t.locate(p, false)
	if err != nil {
		return "", "", err
	}
	data, err := t.readLoc(tool, l)
	if err != nil {
		return l.abs, "", err
	}
	t.tracker.Mark(l.abs)
	return l.abs, string(data), nil
}

func (t *Toolset) readLoc(tool string, l loc) ([]byte, error) {
	if k := binaryKind(l.abs, nil); k != "" {
		return nil, errors.New(binaryMessage(tool, l.abs, k))
	}
	r, err := t.openRoot(l)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, fi, err := openFileNoFollow(r, l.rel)
	if err != nil {
		return nil, pathErr(l.abs, err)
	}
	defer f.Close()
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory (use list_directory or directory_tree)", l.abs)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", l.abs)
	}
	if fi.Size() > maxReadBytes {
		return nil, fmt.Errorf("%s is too large to read (%d bytes, limit %d)", l.abs, fi.Size(), maxReadBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxReadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", l.abs, err)
	}
	if k := binaryKind(l.abs, data); k != "" {
		return nil, errors.New(binaryMessage(tool, l.abs, k))
	}
	return data, nil
}

func (t *Toolset) readFile(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	head, err := c.integer("head", 0)
	if err != nil {
		return nil, err
	}
	tail, err := c.integer("tail", 0)
	if err != nil {
		return nil, err
	}
	if head > 0 && tail > 0 {
		return nil, errors.New("give head or tail, not both")
	}
	abs, content, err := t.readText(c.name, p)
	if err != nil {
		return nil, err
	}
	if head > 0 || tail > 0 {
		lines := splitLines(content)
		if head > 0 && head < len(lines) {
			lines = lines[:head]
		}
		if tail > 0 && tail < len(lines) {
			lines = lines[len(lines)-tail:]
		}
		content = strings.Join(lines, "")
	}
	return map[string]any{"path": abs, "content": content}, nil
}

type fileContent struct {
	Path    string `json:"path"`
	Content string `json:"content,omitempty"`
	Error   string `json:"error,omitempty"`
}

type multiResult struct {
	Files []fileContent `json:"files"`
	all   bool
}

func (m multiResult) failed() bool { return m.all }

func (t *Toolset) readMultipleFiles(ctx context.Context, c *call) (any, error) {
	paths, err := c.strList("paths", true)
	if err != nil {
		return nil, err
	}
	res := multiResult{all: true}
	for _, p := range paths {
		abs, content, err := t.readText(c.name, p)
		if err != nil {
			if abs == "" {
				abs = p
			}
			res.Files = append(res.Files, fileContent{Path: abs, Error: err.Error()})
			continue
		}
		res.all = false
		res.Files = append(res.Files, fileContent{Path: abs, Content: content})
	}
	return res, nil
}

type entry struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Size     int64    `json:"size,omitempty"`
	Children []*entry `json:"children,omitempty"`
}

func (t *Toolset) listDirectory(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	l, r, d, err := t.openDirAt(p, false)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r, d)
	ents, err := fs.ReadDir(d.FS(), ".")
	if err != nil {
		return nil, pathErr(l.abs, err)
	}
	var out []entry
	var sb strings.Builder
	truncated := false
	for i, e := range ents {
		if t.isPrivate(filepath.Join(l.abs, e.Name())) {
			continue
		}
		if i >= maxListItems {
			truncated = true
			break
		}
		en := entry{Name: e.Name(), Type: typeOf(e.Type())}
		if info, err := e.Info(); err == nil && en.Type == "file" {
			en.Size = info.Size()
		}
		out = append(out, en)
		tag := "[FILE]"
		if en.Type == "directory" {
			tag = "[DIR]"
		} else if en.Type == "symlink" {
			tag = "[LINK]"
		}
		fmt.Fprintf(&sb, "%s %s\n", tag, e.Name())
	}
	return map[string]any{"path": l.abs, "entries": out, "listing": sb.String(), "truncated": truncated}, nil
}

func (t *Toolset) directoryTree(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	l, r, d, err := t.openDirAt(p, false)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r, d)
	root := &entry{Name: filepath.Base(l.abs), Type: "directory"}
	nodes := map[string]*entry{".": root}
	count := 0
	truncated := false
	err = fs.WalkDir(d.FS(), ".", func(p string, de fs.DirEntry, err error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return err
		}
		if t.isPrivate(filepath.Join(l.abs, filepath.FromSlash(p))) {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if count >= maxTreeItems {
			truncated = true
			return fs.SkipAll
		}
		count++
		parent := nodes[path.Dir(p)]
		e := &entry{Name: de.Name(), Type: typeOf(de.Type())}
		if parent != nil {
			parent.Children = append(parent.Children, e)
		}
		if de.IsDir() {
			nodes[p] = e
		}
		return nil // unreadable subdirectories are listed without children
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": l.abs, "tree": root.Children, "truncated": truncated}, nil
}

func (t *Toolset) searchFiles(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	pattern, err := c.str("pattern", true)
	if err != nil {
		return nil, err
	}
	excl, err := c.strList("excludePatterns", false)
	if err != nil {
		return nil, err
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("invalid pattern %q", pattern)
	}
	l, r, d, err := t.openDirAt(p, false)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r, d)
	var hits []string
	truncated := false
	lower := strings.ToLower(pattern)
	err = fs.WalkDir(d.FS(), ".", func(rel string, de fs.DirEntry, err error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if rel == "." {
			return err
		}
		if matchAny(excl, rel) || t.isPrivate(filepath.Join(l.abs, filepath.FromSlash(rel))) {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		var ok bool
		if hasGlob(pattern) {
			ok = matchAny([]string{pattern}, rel)
		} else {
			ok = strings.Contains(strings.ToLower(de.Name()), lower)
		}
		if ok {
			if len(hits) >= maxSearchHits {
				truncated = true
				return fs.SkipAll
			}
			hits = append(hits, filepath.Join(l.abs, filepath.FromSlash(rel)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": l.abs, "pattern": pattern, "matches": hits, "truncated": truncated}, nil
}

func (t *Toolset) getFileInfo(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	l, err := t.locate(p, false)
	if err != nil {
		return nil, err
	}
	r, d, fi, err := t.openEntry(l)
	if err != nil {
		return nil, err
	}
	defer closeDirs(r, d)
	out := map[string]any{
		"path": l.abs, "size": fi.Size(), "type": typeOf(fi.Mode()),
		"isDirectory": fi.IsDir(), "isFile": fi.Mode().IsRegular(),
		"permissions": fmt.Sprintf("%04o", fi.Mode().Perm()), "modified": fi.ModTime().UTC().Format(time.RFC3339),
	}
	if st, ok := fi.Sys().(*unix.Stat_t); ok {
		out["accessed"] = time.Unix(st.Atim.Unix()).UTC().Format(time.RFC3339)
		out["changed"] = time.Unix(st.Ctim.Unix()).UTC().Format(time.RFC3339)
	}
	if fi.Mode().IsRegular() {
		out["binary"] = binaryKind(l.abs, nil) != ""
	}
	return out, nil
}

func (t *Toolset) listAllowed(ctx context.Context, c *call) (any, error) {
	w := t.pol.WritableRoots()
	ws := map[string]bool{}
	for _, x := range w {
		ws[x] = true
	}
	var ro []string
	for _, x := range t.pol.ReadableRoots() {
		if !ws[x] {
			ro = append(ro, x)
		}
	}
	all := append(append([]string{}, w...), ro...)
	return map[string]any{"directories": all, "writable": nonNil(w), "read_only": nonNil(ro), "workspace": t.pol.Spec().Workspace}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
