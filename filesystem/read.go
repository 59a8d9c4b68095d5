package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/massgen-go/massgen/filesystem/internal/fsx"
)

// readWalk reads the text file a walk found, refusing binary files and directories.
func (t *Toolset) readWalk(tool string, w *fsx.Walk) ([]byte, error) {
	if k := binaryKind(w.Path, nil); k != "" {
		return nil, errors.New(binaryMessage(tool, w.Path, k))
	}
	if !w.Exists {
		return nil, fmt.Errorf("%s does not exist", w.Path)
	}
	if w.Info.IsDir() {
		return nil, fmt.Errorf("%s is a directory (use list_directory or directory_tree)", w.Path)
	}
	f, fi, err := w.OpenFile()
	if err != nil {
		return nil, pathErr(w.Path, err)
	}
	defer f.Close()
	if fi.Size > maxReadBytes {
		return nil, fmt.Errorf("%s is too large to read (%d bytes, limit %d)", w.Path, fi.Size, maxReadBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxReadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", w.Path, err)
	}
	if k := binaryKind(w.Path, data); k != "" {
		return nil, errors.New(binaryMessage(tool, w.Path, k))
	}
	return data, nil
}

// readText reads the text file of a path argument and marks it read.
func (t *Toolset) readText(c *call, arg string) (abs, content string, err error) {
	w, err := c.walk(arg)
	if err != nil {
		return "", "", err
	}
	data, err := t.readWalk(c.name, w)
	if err != nil {
		return w.Path, "", err
	}
	t.tracker.Mark(w.Path)
	return w.Path, string(data), nil
}

func (t *Toolset) readFile(ctx context.Context, c *call) (any, error) {
	if _, err := c.str("path", true); err != nil {
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
	abs, content, err := t.readText(c, "path")
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

func (m multiResult) failure() string {
	if m.all {
		return "no file could be read"
	}
	return ""
}

func (t *Toolset) readMultipleFiles(ctx context.Context, c *call) (any, error) {
	paths, err := c.strList("paths", true)
	if err != nil {
		return nil, err
	}
	res := multiResult{all: true, Files: []fileContent{}}
	for i, p := range paths {
		abs, content, err := t.readText(c, fmt.Sprintf("paths[%d]", i))
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
	w, d, err := c.dirOf("path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, _, err := d.Entries(0)
	if err != nil {
		return nil, pathErr(w.Path, err)
	}
	out := []entry{}
	var sb strings.Builder
	truncated := false
	for _, e := range ents {
		if !t.visible(d.Path, e) {
			continue
		}
		if len(out) >= maxListItems {
			truncated = true
			break
		}
		en := entry{Name: e.Name, Type: typeOf(e.Info.Mode)}
		if en.Type == "file" {
			en.Size = e.Info.Size
		}
		out = append(out, en)
		tag := "[FILE]"
		switch en.Type {
		case "directory":
			tag = "[DIR]"
		case "symlink":
			tag = "[LINK]"
		}
		fmt.Fprintf(&sb, "%s %s\n", tag, e.Name)
	}
	return map[string]any{"path": w.Path, "entries": out, "listing": sb.String(), "truncated": truncated}, nil
}

func (t *Toolset) directoryTree(ctx context.Context, c *call) (any, error) {
	w, d, err := c.dirOf("path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	root := &entry{Name: w.Name, Children: []*entry{}}
	nodes := map[string]*entry{"": root}
	count := 0
	truncated := false
	err = walkTree(ctx, d, func(dir *fsx.Dir, rel string, e fsx.Entry) (bool, error) {
		if !t.visible(dir.Path, e) {
			return false, nil
		}
		if count >= maxTreeItems {
			truncated = true
			return false, errStop
		}
		count++
		parentRel := ""
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			parentRel = rel[:i]
		}
		n := &entry{Name: e.Name, Type: typeOf(e.Info.Mode)}
		if parent := nodes[parentRel]; parent != nil {
			parent.Children = append(parent.Children, n)
		}
		if e.Info.IsDir() {
			n.Children = []*entry{}
			nodes[rel] = n
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": w.Path, "tree": root.Children, "truncated": truncated}, nil
}

func (t *Toolset) searchFiles(ctx context.Context, c *call) (any, error) {
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
	w, d, err := c.dirOf("path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	hits := []string{}
	truncated := false
	lower := strings.ToLower(pattern)
	err = walkTree(ctx, d, func(dir *fsx.Dir, rel string, e fsx.Entry) (bool, error) {
		if matchAny(excl, rel) || !t.visible(dir.Path, e) {
			return false, nil
		}
		var ok bool
		if hasGlob(pattern) {
			ok = matchAny([]string{pattern}, rel)
		} else {
			ok = strings.Contains(strings.ToLower(e.Name), lower)
		}
		if ok {
			if len(hits) >= maxSearchHits {
				truncated = true
				return false, errStop
			}
			hits = append(hits, fsx.Join(dir.Path, e.Name))
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": w.Path, "pattern": pattern, "matches": hits, "truncated": truncated}, nil
}

func (t *Toolset) getFileInfo(ctx context.Context, c *call) (any, error) {
	w, err := c.existing("path")
	if err != nil {
		return nil, err
	}
	fi := w.Info
	out := map[string]any{
		"path": w.Path, "size": fi.Size, "type": typeOf(fi.Mode),
		"isDirectory": fi.IsDir(), "isFile": fi.IsRegular(),
		"permissions": fmt.Sprintf("%04o", fi.Mode.Perm()), "modified": fi.Mtime.UTC().Format(time.RFC3339),
		"accessed": fi.Atime.UTC().Format(time.RFC3339), "changed": fi.Ctime.UTC().Format(time.RFC3339),
	}
	if fi.IsRegular() {
		out["binary"] = binaryKind(w.Path, nil) != ""
	}
	return out, nil
}

func (t *Toolset) listAllowed(ctx context.Context, c *call) (any, error) {
	roots := t.pol.Roots()
	var all, w, ro []string
	for _, r := range roots {
		all = append(all, r.Path)
		if r.Write {
			w = append(w, r.Path)
		} else {
			ro = append(ro, r.Path)
		}
	}
	return map[string]any{"directories": nonNil(all), "writable": nonNil(w), "read_only": nonNil(ro),
		"roots": roots, "workspace": t.pol.Spec().Workspace, "description": t.pol.DescribeRoots()}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
