package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/massgen-go/massgen/internal/safefs"
)

// readWalk reads the text file a walk found, refusing binary files and directories.
func (t *Toolset) readWalk(tool string, w *safefs.Walk) (string, error) {
	return t.readWalkUpTo(tool, w, maxReadBytes)
}

// errSameFile: the file was returned under another name.
var errSameFile = errors.New("same file")

// errOverBudget: the file is larger than what is left of the call's budget.
var errOverBudget = errors.New("over the call's budget")

// readWalkUpTo is readWalk reading at most limit bytes (at most maxReadBytes): a larger file is
// refused with errOverBudget when limit is the smaller, before anything is read. The content is
// read into one buffer of the file's size, which becomes the string returned (no copies: a
// call's cost is what it returns).
func (t *Toolset) readWalkUpTo(tool string, w *safefs.Walk, limit int64) (string, error) {
	limit = min(limit, maxReadBytes)
	if k := binaryKind(w.Path, nil); k != "" {
		return "", errors.New(binaryMessage(tool, w.Path, k))
	}
	if !w.Exists {
		return "", fmt.Errorf("%s does not exist", w.Path)
	}
	if w.Info.IsDir() {
		return "", fmt.Errorf("%s is a directory (use list_directory or directory_tree)", w.Path)
	}
	f, fi, err := w.OpenFile()
	if err != nil {
		return "", pathErr(w.Path, err)
	}
	defer f.Close()
	tooLarge := func(size int64) error {
		if limit < maxReadBytes {
			return errOverBudget
		}
		return fmt.Errorf("%s is too large to read (%d bytes, limit %d)", w.Path, size, maxReadBytes)
	}
	if fi.Size > limit {
		return "", tooLarge(fi.Size)
	}
	var sb strings.Builder
	sb.Grow(int(fi.Size) + 1)
	n, err := io.Copy(&sb, io.LimitReader(f, limit+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", w.Path, err)
	}
	if n > limit { // grew since the stat
		return "", tooLarge(n)
	}
	data := sb.String()
	if k := binaryKind(w.Path, []byte(data[:min(len(data), sniffLen)])); k != "" {
		return "", errors.New(binaryMessage(tool, w.Path, k))
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
	return w.Path, data, nil
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
	// SameAs names the entry above that carries this file's content: the same file named again
	// (or another name of it, a hard link) is read and returned once.
	SameAs string `json:"same_as,omitempty"`
}

type multiResult struct {
	Files []fileContent `json:"files"`
	// Duplicates counts the paths left out because they name, canonically, a path already
	// returned above.
	Duplicates int `json:"duplicates,omitempty"`
	// Truncated: the call's budget (maxReadTotal) was spent; Note says how many paths were not
	// read and NotRead names the first of them.
	Truncated bool     `json:"truncated,omitempty"`
	Note      string   `json:"note,omitempty"`
	NotRead   []string `json:"not_read,omitempty"`
	all       bool
	size      int // what the budget counted: about the size of the JSON
}

func (m multiResult) sizeHint() int { return m.size + 4<<10 }

func (m multiResult) failure() string {
	if m.all {
		return "no file could be read"
	}
	return ""
}

// readMultipleFiles reads each file once: a path naming, canonically, one returned above is left
// out (counted in duplicates), and another name of a file returned (a hard link) gets a same_as
// entry instead of a second copy. What is returned is bounded by the call's budget (maxReadTotal:
// content as JSON, paths and messages): the first file that does not fit ends the reading, and
// the rest are counted in a "truncated: N more" note, so a call naming 4,096 large files costs
// massgen one budget, not 4,096 files.
func (t *Toolset) readMultipleFiles(ctx context.Context, c *call) (any, error) {
	paths, err := c.strList("paths", true)
	if err != nil {
		return nil, err
	}
	type fileKey struct{ dev, ino uint64 }
	res := multiResult{all: true, Files: []fileContent{}}
	seen := map[fileKey]string{} // file -> the path its content was returned under
	given := map[string]bool{}   // canonical paths returned (content or error)
	left := t.budget.readTotal
	for i, p := range paths {
		arg := fmt.Sprintf("paths[%d]", i)
		w, err := c.walk(arg)
		if err == nil && given[w.Path] {
			res.Duplicates++
			continue
		}
		var fc fileContent
		var data string
		if err == nil && w.Exists && w.Info.IsRegular() {
			if first, ok := seen[fileKey{w.Info.Dev, w.Info.Ino}]; ok {
				fc = fileContent{Path: w.Path, SameAs: first} // another name of a file returned
				err = errSameFile
			}
		}
		if err == nil {
			// What is left, less this entry's path and the JSON around it.
			data, err = t.readWalkUpTo(c.name, w, left-int64(jsonLen(w.Path)+32))
		}
		if errors.Is(err, errOverBudget) {
			res.truncate(paths[i:], i, t.budget.readTotal)
			break
		}
		switch {
		case errors.Is(err, errSameFile):
			t.tracker.Mark(w.Path)
		case err != nil:
			fc.Path = p
			if w != nil {
				fc.Path = w.Path
			}
			fc.Error = err.Error()
		default:
			fc = fileContent{Path: w.Path, Content: data}
			t.tracker.Mark(w.Path)
			seen[fileKey{w.Info.Dev, w.Info.Ino}] = w.Path
			res.all = false
		}
		cost := int64(jsonLen(fc.Path) + jsonLen(fc.Content) + jsonLen(fc.Error) + jsonLen(fc.SameAs) + 32)
		if cost > left {
			res.truncate(paths[i:], i, t.budget.readTotal)
			break
		}
		left -= cost
		res.Files = append(res.Files, fc)
		if w != nil {
			given[w.Path] = true
		}
	}
	res.size = int(t.budget.readTotal - left)
	return res, nil
}

// truncate records that the paths from index from on were not read: the budget is spent.
func (m *multiResult) truncate(rest []string, from int, budget int64) {
	m.Truncated = true
	m.Note = fmt.Sprintf("truncated: %d more path(s) not read (paths[%d] on): this call's budget of %s for file content is spent; read them in another call", len(rest), from, sizeText(budget))
	seen := map[string]bool{}
	for _, p := range rest {
		if len(m.NotRead) == maxNotRead {
			break
		}
		if !seen[p] {
			seen[p] = true
			m.NotRead = append(m.NotRead, p)
		}
	}
	m.all = false // not a failure: the rest was not tried
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

// overBudget counts what a walking tool leaves out once its budget is spent: the entries it
// would have returned (more), looking at no more than maxCountMore further entries.
type overBudget struct {
	limit   int // maxCountMore
	on      bool
	more    int // entries left out
	visited int // entries looked at since the budget was spent
	stopped bool
}

// visit counts one entry looked at past the budget (hit: it would have been returned); false
// once maxCountMore entries were looked at.
func (o *overBudget) visit(hit bool) bool {
	o.on = true
	o.visited++
	if hit {
		o.more++
	}
	if o.visited >= o.limit {
		o.stopped = true
		return false
	}
	return true
}

// note is the "truncated: N more" line ("" when nothing was left out).
func (o *overBudget) note(what, budget, hint string) string {
	if !o.on {
		return ""
	}
	n := fmt.Sprint(o.more)
	if o.stopped {
		n = "at least " + n
	}
	return fmt.Sprintf("truncated: %s more %s not shown (this call's budget: %s); %s", n, what, budget, hint)
}

func (t *Toolset) directoryTree(ctx context.Context, c *call) (any, error) {
	w, d, err := c.dirOf("path")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	root := &entry{Name: w.Name, Children: []*entry{}}
	nodes := map[string]*entry{"": root}
	count, size := 0, 0
	over := overBudget{limit: t.budget.countMore}
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		if !t.visible(dir.Path, e) {
			return false, nil
		}
		cost := jsonLen(e.Name) + 48 // the name and the JSON of an entry
		if over.on || count >= t.budget.treeItems || size+cost > t.budget.treeBytes {
			if !over.visit(true) {
				return false, errStop
			}
			return true, nil // counted; its subtree too
		}
		count++
		size += cost
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
	out := map[string]any{"path": w.Path, "tree": root.Children, "truncated": over.on}
	if over.on {
		out["more"] = over.more
		out["note"] = over.note("entries", fmt.Sprintf("%d entries, %s of names", t.budget.treeItems, sizeText(int64(t.budget.treeBytes))),
			"call directory_tree on a subfolder, or use search_files")
	}
	return out, nil
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
	size := 0
	over := overBudget{limit: t.budget.countMore}
	lower := strings.ToLower(pattern)
	err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
		if matchAny(excl, rel) || !t.visible(dir.Path, e) {
			return false, nil
		}
		var ok bool
		if hasGlob(pattern) {
			ok = matchAny([]string{pattern}, rel)
		} else {
			ok = strings.Contains(strings.ToLower(e.Name), lower)
		}
		if over.on {
			return true, boolStop(over.visit(ok))
		}
		if ok {
			p := safefs.Join(dir.Path, e.Name)
			cost := jsonLen(p) + 4
			if len(hits) >= t.budget.searchHits || size+cost > t.budget.searchBytes {
				return true, boolStop(over.visit(true))
			}
			size += cost
			hits = append(hits, p)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"path": w.Path, "pattern": pattern, "matches": hits, "truncated": over.on}
	if over.on {
		out["more"] = over.more
		out["note"] = over.note("matches", fmt.Sprintf("%d matches, %s of paths", t.budget.searchHits, sizeText(int64(t.budget.searchBytes))),
			"narrow the pattern or search a subfolder")
	}
	return out, nil
}

// sizeText writes a byte count for a note: "16 MiB", "1 MiB", "512 KiB", "300 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// boolStop is errStop when a walk must end (ok is false).
func boolStop(ok bool) error {
	if ok {
		return nil
	}
	return errStop
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
