package filesystem

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"
)

// Limits that keep results model-sized.
const (
	maxReadBytes  = 10 << 20 // text tools refuse larger files
	maxDiffBytes  = 5 << 20
	maxTreeItems  = 5000
	maxListItems  = 5000
	maxSearchHits = 1000
	maxDiffs      = 50
)

// defaultExcluded are never deleted (spec 001 UNDELETABLE + spec 000 defaults), wherever they are.
var defaultExcluded = map[string]bool{".massgen": true, ".env": true, ".git": true, "node_modules": true,
	"__pycache__": true, ".venv": true, "venv": true, ".pytest_cache": true, ".mypy_cache": true,
	".ruff_cache": true, ".DS_Store": true, "massgen_logs": true}

// excludedIn returns the first default-excluded component of rel, or "".
func excludedIn(rel string) string {
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if defaultExcluded[c] {
			return c
		}
	}
	return ""
}

// ---- reading ----

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

// pathErr turns OS errors into short messages naming the path.
func pathErr(p string, err error) error {
	switch {
	case errors.Is(err, errChanged):
		return fmt.Errorf("%s: %w", p, errChanged)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s already exists", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s: %v", p, pe.Op, pe.Err)
	}
	return fmt.Errorf("%s: %w", p, err)
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

// ---- writing ----

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
		mode = li.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
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
	r, err := t.openRoot(l)
	if err != nil {
		return false, 0, err
	}
	defer r.Close()
	dir, err := mkdirAllNoFollow(r, l.parentRel())
	if err != nil {
		return false, 0, pathErr(filepath.Dir(l.abs), err)
	}
	if dir != r {
		defer dir.Close()
	}
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
	_, statErr := r.Lstat(l.rel)
	d, err := mkdirAllNoFollow(r, l.rel)
	if err != nil {
		return nil, pathErr(l.abs, err)
	}
	if d != r {
		d.Close()
	}
	t.tracker.MarkTree(l.abs)
	return map[string]any{"path": l.abs, "created": statErr != nil}, nil
}

// ---- listing ----

type entry struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Size     int64    `json:"size,omitempty"`
	Children []*entry `json:"children,omitempty"`
}

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

// openDirLoc opens the directory at l (refusing links), returning the root to close and the dir.
func (t *Toolset) openDirLoc(l loc) (*os.Root, *os.Root, error) {
	if l.rootDir != l.managed { // a single-file context path
		return nil, nil, fmt.Errorf("%s is a file, not a directory", l.abs)
	}
	r, err := t.openRoot(l)
	if err != nil {
		return nil, nil, err
	}
	d, err := openDirNoFollow(r, l.rel)
	if err != nil {
		r.Close()
		return nil, nil, pathErr(l.abs, err)
	}
	return r, d, nil
}

func closeDirs(r, d *os.Root) {
	if d != nil && d != r {
		d.Close()
	}
	if r != nil {
		r.Close()
	}
}

func (t *Toolset) listDirectory(ctx context.Context, c *call) (any, error) {
	p, err := c.str("path", true)
	if err != nil {
		return nil, err
	}
	l, err := t.locate(p, false)
	if err != nil {
		return nil, err
	}
	r, d, err := t.openDirLoc(l)
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
	l, err := t.locate(p, false)
	if err != nil {
		return nil, err
	}
	r, d, err := t.openDirLoc(l)
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

// matchAny matches a slash path relative to a base against globs: the whole relative path, the
// base name for patterns without a slash (so "*.py" finds files at any depth, like MassGen's
// fnmatch), and a directory pattern covers everything under it.
func matchAny(patterns []string, rel string) bool {
	for _, p := range patterns {
		p = strings.TrimPrefix(filepath.ToSlash(p), "./")
		if p == "" {
			continue
		}
		if ok, _ := doublestar.Match(p, rel); ok {
			return true
		}
		if !strings.Contains(strings.TrimSuffix(p, "/"), "/") {
			if ok, _ := doublestar.Match(strings.TrimSuffix(p, "/"), path.Base(rel)); ok {
				return true
			}
		}
		if ok, _ := doublestar.Match(strings.TrimSuffix(p, "/")+"/**", rel); ok {
			return true
		}
	}
	return false
}

// hasGlob reports whether s has glob syntax.
func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[{") }

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
	l, err := t.locate(p, false)
	if err != nil {
		return nil, err
	}
	r, d, err := t.openDirLoc(l)
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
	r, err := t.openRoot(l)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	d, err := openDirNoFollow(r, l.parentRel())
	if err != nil {
		return nil, pathErr(l.abs, err)
	}
	if d != r {
		defer d.Close()
	}
	fi, err := d.Lstat(l.base())
	if err != nil {
		return nil, pathErr(l.abs, err)
	}
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

// ---- copy and move ----

// walkFiles lists the regular files and links under the directory d, relative slash paths, not
// descending into links; skip (may be nil) leaves entries out (directories with their content).
func walkFiles(d *os.Root, skip func(rel string) bool) (files []string, links []string, err error) {
	err = fs.WalkDir(d.FS(), ".", func(rel string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if skip != nil && skip(rel) {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case de.IsDir():
		case de.Type()&fs.ModeSymlink != 0:
			links = append(links, rel)
		case de.Type().IsRegular():
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files, links, err
}

// copyOne copies the regular file srcRel under src to dst (a writable location).
func (t *Toolset) copyOne(src *os.Root, srcRel string, dst loc, overwrite bool) error {
	f, fi, err := openFileNoFollow(src, srcRel)
	if err != nil {
		return err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", srcRel)
	}
	if !overwrite {
		if _, err := os.Lstat(dst.abs); err == nil {
			return fmt.Errorf("%s exists (set overwrite=true to replace it)", dst.abs)
		}
	}
	if _, _, err := t.writeAt(dst, f, fi.Mode()&(fs.ModePerm)); err != nil {
		return err
	}
	t.tracker.Mark(dst.abs)
	return nil
}

type skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

type failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

type copyResult struct {
	Source      string    `json:"source"`
	Destination string    `json:"destination"`
	Copied      []string  `json:"copied"`
	Skipped     []skipped `json:"skipped"`
	Errors      []failure `json:"errors"`
	fail        bool
}

func (r copyResult) failed() bool { return r.fail }

func (t *Toolset) copyFile(ctx context.Context, c *call) (any, error) {
	sp, err := c.str("source_path", true)
	if err != nil {
		return nil, err
	}
	dp, err := c.str("destination_path", true)
	if err != nil {
		return nil, err
	}
	overwrite, err := c.boolean("overwrite")
	if err != nil {
		return nil, err
	}
	src, err := t.locate(sp, false)
	if err != nil {
		return nil, err
	}
	dst, err := t.locate(dp, true)
	if err != nil {
		return nil, err
	}
	if under(dst.abs, src.abs) {
		return nil, fmt.Errorf("cannot copy %s into itself (%s)", src.abs, dst.abs)
	}
	r, err := t.openRoot(src)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fi, err := statNoFollow(r, src.rel)
	if err != nil {
		return nil, pathErr(src.abs, err)
	}
	if !fi.IsDir() {
		if di, err := os.Stat(dst.abs); err == nil && di.IsDir() {
			// Copying a file onto a directory puts it inside, under its own name.
			into := filepath.Join(dst.abs, filepath.Base(src.abs))
			if err := t.checkPath(ctx, c.name, into, true); err != nil {
				return nil, err
			}
			if dst, err = t.locateAbs(into, true); err != nil {
				return nil, err
			}
		}
		if err := t.copyOne(r, src.rel, dst, overwrite); err != nil {
			return nil, pathErr(src.abs, err)
		}
		return map[string]any{"source": src.abs, "destination": dst.abs, "copied": []string{dst.abs}}, nil
	}
	res, err := t.copyTree(ctx, c.name, src, dst, nil, nil, overwrite)
	if err != nil {
		return nil, err
	}
	if len(res.Copied) == 0 && (len(res.Errors) > 0 || len(res.Skipped) > 0) {
		res.fail = true
	}
	t.tracker.MarkTree(dst.abs)
	return res, nil
}

// statNoFollow is Lstat of rel under r, refusing links in the leading components.
func statNoFollow(r *os.Root, rel string) (fs.FileInfo, error) {
	d, err := openDirNoFollow(r, filepath.Dir(rel))
	if err != nil {
		return nil, err
	}
	if d != r {
		defer d.Close()
	}
	fi, err := d.Lstat(filepath.Base(rel))
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errChanged
	}
	return fi, nil
}

// copyTree copies the files under the directory src to the same relative places under dst,
// checking every destination file with the Guard (protected files inside a writable tree).
func (t *Toolset) copyTree(ctx context.Context, tool string, src, dst loc, include, exclude []string, overwrite bool) (copyResult, error) {
	res := copyResult{Source: src.abs, Destination: dst.abs, Copied: []string{}, Skipped: []skipped{}, Errors: []failure{}}
	r, d, err := t.openDirLoc(src)
	if err != nil {
		return res, err
	}
	defer closeDirs(r, d)
	files, links, err := walkFiles(d, func(rel string) bool {
		return matchAny(exclude, rel) || t.isPrivate(filepath.Join(src.abs, filepath.FromSlash(rel)))
	})
	if err != nil {
		return res, pathErr(src.abs, err)
	}
	for _, rel := range links {
		if len(include) == 0 || matchAny(include, rel) {
			res.Skipped = append(res.Skipped, skipped{filepath.Join(src.abs, rel), "symbolic link (not copied)"})
		}
	}
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if len(include) > 0 && !matchAny(include, rel) || matchAny(exclude, rel) {
			continue
		}
		target := filepath.Join(dst.abs, filepath.FromSlash(rel))
		if err := t.checkPath(ctx, tool, target, true); err != nil {
			res.Skipped = append(res.Skipped, skipped{target, err.Error()})
			continue
		}
		tl, err := t.locateAbs(target, true)
		if err != nil {
			res.Skipped = append(res.Skipped, skipped{target, err.Error()})
			continue
		}
		if err := t.copyOne(d, rel, tl, overwrite); err != nil {
			if strings.Contains(err.Error(), "overwrite=true") {
				res.Skipped = append(res.Skipped, skipped{target, "exists (overwrite is false)"})
			} else {
				res.Errors = append(res.Errors, failure{filepath.Join(src.abs, rel), pathErr(target, err).Error()})
			}
			continue
		}
		res.Copied = append(res.Copied, target)
	}
	return res, nil
}

func (t *Toolset) copyFilesBatch(ctx context.Context, c *call) (any, error) {
	sp, err := c.str("source_base_path", true)
	if err != nil {
		return nil, err
	}
	dp, err := c.str("destination_base_path", true)
	if err != nil {
		return nil, err
	}
	include, err := c.strList("include_patterns", false)
	if err != nil {
		return nil, err
	}
	exclude, err := c.strList("exclude_patterns", false)
	if err != nil {
		return nil, err
	}
	overwrite, err := c.boolean("overwrite")
	if err != nil {
		return nil, err
	}
	if len(include) == 0 {
		include = []string{"*"}
	}
	src, err := t.locate(sp, false)
	if err != nil {
		return nil, err
	}
	dst, err := t.locate(dp, true)
	if err != nil {
		return nil, err
	}
	if under(dst.abs, src.abs) {
		return nil, fmt.Errorf("cannot copy %s into itself (%s)", src.abs, dst.abs)
	}
	res, err := t.copyTree(ctx, c.name, src, dst, include, exclude, overwrite)
	if err != nil {
		return nil, err
	}
	res.fail = len(res.Copied) == 0 && len(res.Errors) > 0
	return res, nil
}

// renameNoReplace moves (fromDir, fromName) to (toDir, toName) with renameat2(NOREPLACE): the
// directories are already-verified handles, so no path is re-resolved.
func renameNoReplace(fromDir *os.Root, fromName string, toDir *os.Root, toName string) error {
	fd1, err := fromDir.Open(".")
	if err != nil {
		return err
	}
	defer fd1.Close()
	fd2, err := toDir.Open(".")
	if err != nil {
		return err
	}
	defer fd2.Close()
	err = unix.Renameat2(int(fd1.Fd()), fromName, int(fd2.Fd()), toName, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// Filesystem without RENAME_NOREPLACE: check, then rename (a small window).
		if _, lerr := toDir.Lstat(toName); lerr == nil {
			return fs.ErrExist
		}
		err = unix.Renameat(int(fd1.Fd()), fromName, int(fd2.Fd()), toName)
	}
	if err != nil {
		return &fs.PathError{Op: "rename", Path: fromName, Err: err}
	}
	return nil
}

// isRootPath reports whether abs is a managed root or contains one (never deleted or moved).
func (t *Toolset) isRootPath(abs string) (string, bool) {
	var all []string
	all = append(all, t.roots(false)...)
	sp := t.pol.Spec()
	all = append(all, sp.Workspace)
	all = append(all, sp.TempWorkspaces...)
	all = append(all, sp.ReadOnly...)
	for _, cp := range sp.ContextPaths {
		all = append(all, cp.Path)
	}
	for _, r := range all {
		if r == "" {
			continue
		}
		rr := resolveRoot(r)
		if under(rr, abs) || under(filepath.Clean(r), abs) {
			return r, true
		}
	}
	return "", false
}

func (t *Toolset) moveFile(ctx context.Context, c *call) (any, error) {
	sp, err := c.str("source", true)
	if err != nil {
		return nil, err
	}
	dp, err := c.str("destination", true)
	if err != nil {
		return nil, err
	}
	src, err := t.locateEntry(sp, true)
	if err != nil {
		return nil, err
	}
	if root, ok := t.isRootPath(src.abs); ok {
		return nil, fmt.Errorf("cannot move %s: it is (or contains) the managed directory %s", src.abs, root)
	}
	if x := excludedIn(src.rel); x != "" && src.managed != resolveRoot(t.pol.Spec().Workspace) {
		return nil, fmt.Errorf("cannot move %s: %s is a protected system path", src.abs, x)
	}
	if src.abs != resolvedOr(t.pol, sp) {
		// The entry itself (a link) differs from what the Guard checked: check it too.
		if err := t.checkPath(ctx, c.name, src.abs, true); err != nil {
			return nil, err
		}
	}
	dst, err := t.locate(dp, true)
	if err != nil {
		return nil, err
	}
	if under(dst.abs, src.abs) {
		return nil, fmt.Errorf("cannot move %s into itself", src.abs)
	}
	sr, err := t.openRoot(src)
	if err != nil {
		return nil, err
	}
	defer sr.Close()
	sd, err := openDirNoFollow(sr, src.parentRel())
	if err != nil {
		return nil, pathErr(src.abs, err)
	}
	if sd != sr {
		defer sd.Close()
	}
	fi, err := sd.Lstat(src.base())
	if err != nil {
		return nil, pathErr(src.abs, err)
	}
	if fi.IsDir() {
		// Protected files inside a moved directory would leave their place.
		if err := t.checkTree(ctx, c.name, sd, src); err != nil {
			return nil, err
		}
	}
	dr, err := t.openRoot(dst)
	if err != nil {
		return nil, err
	}
	defer dr.Close()
	dd, err := mkdirAllNoFollow(dr, dst.parentRel())
	if err != nil {
		return nil, pathErr(filepath.Dir(dst.abs), err)
	}
	if dd != dr {
		defer dd.Close()
	}
	err = renameNoReplace(sd, src.base(), dd, dst.base())
	if errors.Is(err, unix.EXDEV) {
		err = t.moveAcrossDevices(ctx, src, dst, fi.IsDir(), sd)
	}
	if err != nil {
		return nil, pathErr(dst.abs, err)
	}
	// The agent created the destination.
	t.tracker.forget(src.abs)
	if fi.IsDir() {
		t.tracker.MarkTree(dst.abs)
	} else {
		t.tracker.Mark(dst.abs)
	}
	return map[string]any{"source": src.abs, "destination": dst.abs}, nil
}

func resolvedOr(p interface{ Resolve(string) (string, error) }, s string) string {
	r, err := p.Resolve(s)
	if err != nil {
		return ""
	}
	return r
}

// moveAcrossDevices copies then deletes.
func (t *Toolset) moveAcrossDevices(ctx context.Context, src, dst loc, isDir bool, srcDir *os.Root) error {
	if _, err := os.Lstat(dst.abs); err == nil {
		return fs.ErrExist
	}
	if isDir {
		res, err := t.copyTree(ctx, "move_file", src, dst, nil, nil, false)
		if err != nil {
			return err
		}
		if len(res.Errors) > 0 || len(res.Skipped) > 0 {
			return fmt.Errorf("move across filesystems incomplete (source kept): %d errors, %d skipped", len(res.Errors), len(res.Skipped))
		}
		return srcDir.RemoveAll(src.base())
	}
	if err := t.copyOne(srcDir, src.base(), dst, false); err != nil {
		return err
	}
	return srcDir.Remove(src.base())
}

// checkTree checks write access to every entry under the directory (dir, l.base()).
func (t *Toolset) checkTree(ctx context.Context, tool string, dir *os.Root, l loc) error {
	sub, err := openSubdirNoFollow(dir, l.base())
	if err != nil {
		return pathErr(l.abs, err)
	}
	defer sub.Close()
	var bad []string
	err = fs.WalkDir(sub.FS(), ".", func(rel string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		p := filepath.Join(l.abs, filepath.FromSlash(rel))
		if x := excludedIn(rel); x != "" {
			bad = append(bad, p+" (system path "+x+")")
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if cerr := t.checkPath(ctx, tool, p, true); cerr != nil {
			bad = append(bad, p)
			if de.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return pathErr(l.abs, err)
	}
	if len(bad) > 0 {
		if len(bad) > 20 {
			bad = append(bad[:20], fmt.Sprintf("... and %d more", len(bad)-20))
		}
		return fmt.Errorf("%s contains paths you may not change: %s", l.abs, strings.Join(bad, ", "))
	}
	return nil
}

// ---- compare ----

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
