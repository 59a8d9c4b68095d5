package filesystem

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/textdiff"
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
	if k := binaryKind(w.Path, []byte(data[:min(len(data), textdiff.SniffLen)])); k != "" {
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
