package changes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/internal/textdiff"
)

// ChangeSet is what one turn changed in context paths (Journal.Finish), as kept in the session
// (turn_N/changes.json): every path with its state before the turn's first change and after the
// turn, and where the copies of those states are kept.
type ChangeSet struct {
	Version int `json:"version"`
	// Dir is the journal's folder; TrashRoot the trash folder every kept copy lies in.
	Dir       string         `json:"dir"`
	TrashRoot string         `json:"trash_root"`
	Records   []ChangeRecord `json:"changes"`
	// Incomplete says why some change may be missing (a change recorded after it happened
	// failed to be recorded); "" when the record is complete.
	Incomplete string `json:"incomplete,omitempty"`
	// Recovered says the set was rebuilt from the journal of a run that ended before its turn
	// was saved: the state "after" each path is what stood there at the recovery.
	Recovered bool `json:"recovered,omitempty"`
}

// LoadChangeSet reads a changes.json written by Journal.Finish and checks it names only
// absolute, clean paths, with every kept copy inside its trash folder.
func LoadChangeSet(path string) (*ChangeSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	var cs ChangeSet
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("changes: %s: %w", path, err)
	}
	if cs.Version != 1 {
		return nil, fmt.Errorf("changes: %s: unknown version %d", path, cs.Version)
	}
	if !filepath.IsAbs(cs.TrashRoot) || filepath.Clean(cs.TrashRoot) != cs.TrashRoot {
		return nil, fmt.Errorf("changes: %s: bad trash_root %q", path, cs.TrashRoot)
	}
	for i, r := range cs.Records {
		if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
			return nil, fmt.Errorf("changes: %s: changes[%d]: bad path %q", path, i, r.Path)
		}
		for _, k := range []string{r.Before.Kept, r.After.Kept} {
			if k != "" && !cs.within(k) {
				return nil, fmt.Errorf("changes: %s: changes[%d]: kept copy %q is outside %s", path, i, k, cs.TrashRoot)
			}
		}
	}
	return &cs, nil
}

// Files are the changed files and links (directories left out), sorted by path.
func (cs *ChangeSet) Files() []ChangeRecord {
	if cs == nil {
		return nil
	}
	var out []ChangeRecord
	for _, r := range cs.Records {
		if r.Before.Type != EntryDir && r.After.Type != EntryDir {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b ChangeRecord) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// File is one file a turn changed in a context path, as a script and a session read it: the
// files_changed of `--output json` and of a session's metadata.json.
type File struct {
	Path    string   `json:"path"`
	Change  ChangeOp `json:"change"` // created, modified, deleted
	Added   int      `json:"added"`
	Removed int      `json:"removed"`
	Binary  bool     `json:"binary,omitempty"`
}

// FilesChanged lists the changed files (Files) as File records; [] (never nil) when nothing
// changed or cs is nil.
func (cs *ChangeSet) FilesChanged() []File {
	out := []File{}
	for _, r := range cs.Files() {
		out = append(out, File{Path: r.Path, Change: r.Op(), Added: r.Added, Removed: r.Removed, Binary: r.Binary})
	}
	return out
}

// Summary is the end-of-turn report of the changed files: one line each with its line counts,
// and how to review and take them back. "" when nothing changed. Names are cleaned for the
// terminal (an agent chose them).
func (cs *ChangeSet) Summary() string {
	files := cs.Files()
	if len(files) == 0 {
		return ""
	}
	n := map[ChangeOp]int{}
	for _, r := range files {
		n[r.Op()]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Changed in context paths: %d added, %d modified, %d deleted\n", n[Created], n[Modified], n[Deleted])
	for _, r := range files {
		fmt.Fprintf(&b, "  %-8s  %s  %s\n", opWord(r.Op()), termtext.Line(r.Path), r.LineCounts())
	}
	if cs.Incomplete != "" {
		fmt.Fprintf(&b, "Warning: the record of changes is incomplete: %s\n", termtext.Line(cs.Incomplete))
	}
	b.WriteString("Review with `massgen diff`; take back with `massgen undo`.\n")
	return b.String()
}

func opWord(op ChangeOp) string {
	if op == Created {
		return "added"
	}
	return string(op)
}

// LineCounts is "+3 -1" (binary files: "binary"; links: "symlink").
func (r ChangeRecord) LineCounts() string {
	switch {
	case r.Before.Type == EntrySymlink || r.After.Type == EntrySymlink:
		return "symlink"
	case r.Binary:
		return "binary"
	}
	var parts []string
	if r.Added > 0 || r.Op() == Created {
		parts = append(parts, fmt.Sprintf("+%d", r.Added))
	}
	if r.Removed > 0 || r.Op() == Deleted {
		parts = append(parts, fmt.Sprintf("-%d", r.Removed))
	}
	if len(parts) == 0 {
		return "mode"
	}
	return strings.Join(parts, " ")
}

// ANSI colours of the diff (on a terminal, unless NO_COLOR).
const (
	colorBold  = "\x1b[1m"
	colorRed   = "\x1b[31m"
	colorGreen = "\x1b[32m"
	colorCyan  = "\x1b[36m"
	colorReset = "\x1b[0m"
)

// WriteDiff writes the unified diff of every changed file, before the turn against after it,
// sorted by path; color adds ANSI colours. Binary files and links are named, not diffed. Names,
// link targets and content lines are cleaned for the terminal (termtext) before colours are
// added, so the diff is for reading, not for `git apply` when a line holds control characters.
func (cs *ChangeSet) WriteDiff(w io.Writer, color bool) error {
	paint := func(c, s string) string {
		if !color || s == "" {
			return s
		}
		return c + s + colorReset
	}
	for _, r := range cs.Files() {
		var out strings.Builder
		path := termtext.Line(r.Path)
		header := fmt.Sprintf("massgen diff %s (%s)", path, opWord(r.Op()))
		out.WriteString(paint(colorBold, header) + "\n")
		before, okB := textOf(r.Before)
		after, okA := textOf(r.After)
		switch {
		case r.Before.Type == EntrySymlink || r.After.Type == EntrySymlink:
			out.WriteString(termtext.Line(fmt.Sprintf("symlink: %s -> %s", describeState(r.Before), describeState(r.After))) + "\n")
		case (!okB && r.Before.Size > textdiff.MaxBytes) || (!okA && r.After.Size > textdiff.MaxBytes):
			fmt.Fprintf(&out, "File %s is too large to diff (%s -> %s)\n", path, describeState(r.Before), describeState(r.After))
		case !okB || !okA:
			fmt.Fprintf(&out, "Binary file %s differs (%s -> %s)\n", path, describeState(r.Before), describeState(r.After))
		default:
			nameA, nameB := path, path // cleaned: a line break in a name must not start a line of the diff
			if r.Before.Type == EntryAbsent {
				nameA = "/dev/null"
			}
			if r.After.Type == EntryAbsent {
				nameB = "/dev/null"
			}
			d, _, _ := textdiff.Unified(nameA, nameB, before, after, 3)
			if d == "" {
				fmt.Fprintf(&out, "(mode %v -> %v)\n", r.Before.Mode, r.After.Mode)
			}
			for _, line := range strings.SplitAfter(d, "\n") {
				body := termtext.Text(strings.TrimSuffix(line, "\n"))
				switch {
				case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
					body = paint(colorBold, body)
				case strings.HasPrefix(line, "@@"):
					body = paint(colorCyan, body)
				case strings.HasPrefix(line, "-"):
					body = paint(colorRed, body)
				case strings.HasPrefix(line, "+"):
					body = paint(colorGreen, body)
				}
				out.WriteString(body)
				if strings.HasSuffix(line, "\n") {
					out.WriteString("\n")
				}
			}
		}
		if _, err := io.WriteString(w, out.String()); err != nil {
			return err
		}
	}
	return nil
}

func describeState(s EntryState) string {
	switch s.Type {
	case EntryAbsent:
		return "absent"
	case EntrySymlink:
		return "symlink to " + s.Target
	case EntryDir:
		return "directory"
	}
	return fmt.Sprintf("%d bytes", s.Size)
}

// UndoOptions configure ChangeSet.Undo.
type UndoOptions struct {
	// Force puts back paths changed since the turn too (what stands there goes to the trash).
	Force bool
	// TrashDir is where what undo removes goes (<.massgen>/trash/undo_<time>).
	TrashDir string
}

// UndoSkip is a path undo left alone, and why.
type UndoSkip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// UndoReport says what undo did.
type UndoReport struct {
	Restored []string   `json:"restored"` // put back as before the turn
	Removed  []string   `json:"removed"`  // created by the turn: moved to the trash (files) or removed (empty directories)
	TrashIDs []string   `json:"trash_ids,omitempty"`
	Skipped  []UndoSkip `json:"skipped"`
}

// Undo puts every path the turn changed back as it was before the turn: overwritten and deleted
// files come back from their kept copies, created ones go to the trash (and the turn's version
// of a modified file too, so undo loses nothing). A path changed since the turn (by the user or
// a later turn) is left alone and reported, unless Force. Paths are reached by walks that never
// follow a link: a path that now leads elsewhere through a link is never touched.
func (cs *ChangeSet) Undo(ctx context.Context, o UndoOptions) (UndoReport, error) {
	rep := UndoReport{Restored: []string{}, Removed: []string{}, Skipped: []UndoSkip{}}
	if o.TrashDir == "" {
		return rep, errors.New("undo: no trash folder")
	}
	type item struct {
		r   ChangeRecord
		cur EntryState
	}
	var items []item
	for _, r := range cs.Records {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		cur, redirected, err := stateForUndo(r.Path)
		switch {
		case err != nil:
			rep.Skipped = append(rep.Skipped, UndoSkip{r.Path, err.Error()})
			continue
		case redirected:
			rep.Skipped = append(rep.Skipped, UndoSkip{r.Path, "a symbolic link now stands on the way to it; not touched"})
			continue
		case cur.same(r.Before):
			continue // already as before the turn (put back by hand, or by an earlier undo)
		case r.Before.Type == EntryFile && !keptExists(cs, r.Before.Kept):
			rep.Skipped = append(rep.Skipped, UndoSkip{r.Path, "its original is no longer kept in the trash (restored or emptied?)"})
			continue
		case !cur.same(r.After) && !r.After.unknown() && !o.Force:
			// (An "after" the journal could not read is unknown: undo cannot tell a later change
			// from the turn's own, and never claims one; what stands there goes to the trash.)
			rep.Skipped = append(rep.Skipped, UndoSkip{r.Path, fmt.Sprintf("changed since the turn (now %s, the turn left %s); use --force to put it back anyway", describeState(cur), describeState(r.After))})
			continue
		}
		items = append(items, item{r, cur})
	}
	depth := func(p string) int { return strings.Count(p, string(filepath.Separator)) }
	// What stands there now goes first, deepest first (a created directory empties before it
	// goes), then what was there comes back, shallowest first (a directory before its files).
	slices.SortStableFunc(items, func(a, b item) int { return depth(b.r.Path) - depth(a.r.Path) })
	var failed = map[string]bool{}
	for _, it := range items {
		if it.cur.Type == EntryAbsent || it.cur.same(it.r.Before) || (it.cur.Type == EntryDir && it.r.Before.Type == EntryDir) {
			continue
		}
		id, err := removeForUndo(it.r.Path, it.cur, o)
		if err != nil {
			failed[it.r.Path] = true
			rep.Skipped = append(rep.Skipped, UndoSkip{it.r.Path, err.Error()})
			continue
		}
		if it.r.Before.Type == EntryAbsent {
			rep.Removed = append(rep.Removed, it.r.Path)
		}
		if id != "" {
			rep.TrashIDs = append(rep.TrashIDs, id)
		}
	}
	slices.SortStableFunc(items, func(a, b item) int { return depth(a.r.Path) - depth(b.r.Path) })
	var dirs []ChangeRecord // directories put back: their exact modes are set last, deepest first
	for _, it := range items {
		if failed[it.r.Path] || it.r.Before.Type == EntryAbsent || it.cur.same(it.r.Before) {
			continue
		}
		if it.r.Before.Type == EntryDir {
			if it.cur.Type != EntryDir {
				if err := restoreForUndo(it.r.Path, it.r.Before); err != nil {
					rep.Skipped = append(rep.Skipped, UndoSkip{it.r.Path, err.Error()})
					continue
				}
			}
			dirs = append(dirs, it.r)
			continue
		}
		if err := restoreForUndo(it.r.Path, it.r.Before); err != nil {
			rep.Skipped = append(rep.Skipped, UndoSkip{it.r.Path, err.Error()})
			continue
		}
		rep.Restored = append(rep.Restored, it.r.Path)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		r := dirs[i]
		if err := chmodForUndo(r.Path, r.Before.Mode); err != nil {
			rep.Skipped = append(rep.Skipped, UndoSkip{r.Path, err.Error()})
			continue
		}
		rep.Restored = append(rep.Restored, r.Path)
	}
	slices.Sort(rep.Restored)
	slices.Sort(rep.Removed)
	return rep, nil
}

func keptExists(cs *ChangeSet, kept string) bool {
	if kept == "" || !cs.within(kept) {
		return false
	}
	fi, err := os.Lstat(kept)
	return err == nil && fi.Mode().IsRegular()
}

// stateForUndo is what stands at path now, its content hashed; redirected is true when the
// walk to it went through a link (the path now leads elsewhere).
func stateForUndo(path string) (st EntryState, redirected bool, err error) {
	w, err := safefs.Resolve(path, true)
	if err != nil {
		var fe *safefs.Error
		if errors.As(err, &fe) && (errors.Is(fe.Err, fs.ErrNotExist) || errors.Is(fe.Err, syscall.ENOTDIR)) {
			return EntryState{Type: EntryAbsent}, false, nil // a parent is gone, or a file now
		}
		return EntryState{}, false, safefs.PathError(path, err)
	}
	defer w.Close()
	if w.Path != path {
		return EntryState{}, true, nil
	}
	if !w.Exists {
		return EntryState{Type: EntryAbsent}, false, nil
	}
	switch {
	case w.Info.IsDir():
		return EntryState{Type: EntryDir, Mode: w.Info.Mode.Perm()}, false, nil
	case w.Info.IsLink():
		target, err := w.Dir.Readlink(w.Name)
		if err != nil {
			return EntryState{}, false, safefs.PathError(path, err)
		}
		return EntryState{Type: EntrySymlink, Target: target}, false, nil
	case w.Info.IsRegular():
		f, fi, err := w.OpenFile()
		if err != nil {
			return EntryState{}, false, safefs.PathError(path, err)
		}
		defer f.Close()
		h := sha256.New()
		n, err := io.Copy(h, f)
		if err != nil {
			return EntryState{}, false, safefs.PathError(path, err)
		}
		return EntryState{Type: EntryFile, Size: n, Mode: fi.Mode.Perm(), SHA256: hex.EncodeToString(h.Sum(nil))}, false, nil
	}
	return EntryState{}, false, fmt.Errorf("%s is a special file; not touched", path)
}

// removeForUndo takes away what stands at path: an empty directory is removed, anything else
// (a non-empty directory only with Force) is moved to the undo trash, from the directory the
// walk holds. It returns the trash id ("" for a removed directory).
func removeForUndo(path string, cur EntryState, o UndoOptions) (string, error) {
	w, err := safefs.Resolve(path, true)
	if err != nil {
		return "", safefs.PathError(path, err)
	}
	defer w.Close()
	if w.Path != path || !w.Exists {
		return "", fmt.Errorf("%s changed during undo; not touched", path)
	}
	if w.Info.IsDir() {
		err := w.Dir.Remove(w.Name)
		if err == nil {
			return "", nil
		}
		if !o.Force {
			return "", fmt.Errorf("the directory holds files the turn did not make; kept (use --force to move it to the trash)")
		}
	}
	e, err := MoveEntryToTrash(o.TrashDir, w.Dir, w.Name, w.Path, w.Info, "massgen undo", nil)
	if err != nil {
		return "", err
	}
	return e.ID, nil
}

// restoreForUndo puts back what stood at path before the turn (the path is free now), creating
// missing parent directories; it never follows a link on the way.
func restoreForUndo(path string, before EntryState) error {
	w, err := safefs.Resolve(path, true)
	if err != nil {
		return safefs.PathError(path, err)
	}
	defer w.Close()
	if w.Path != path {
		return fmt.Errorf("a symbolic link now stands on the way to %s; not restored", path)
	}
	if w.Exists {
		return fmt.Errorf("%s exists (it could not be moved away); not restored", path)
	}
	dir, _, err := w.MakeParent()
	if err != nil {
		return safefs.PathError(path, err)
	}
	defer dir.Close()
	switch before.Type {
	case EntryDir: // owner-writable until its files are back; chmodForUndo sets its mode then
		return pathErr2(path, dir.Mkdir(w.Name, 0o700))
	case EntrySymlink:
		return pathErr2(path, dir.Symlink(before.Target, w.Name))
	case EntryFile:
		f, err := os.Open(before.Kept)
		if err != nil {
			return fmt.Errorf("reading the kept original of %s: %w", path, err)
		}
		defer f.Close()
		mode := before.Mode
		if mode == 0 {
			mode = 0o644
		}
		_, _, err = dir.WriteFile(w.Name, f, mode)
		return pathErr2(path, err)
	}
	return nil
}

// chmodForUndo gives the directory at path its mode before the turn, exactly (0: not recorded,
// 0755), through the walk's handle on it; a path that is no longer that directory is reported.
func chmodForUndo(path string, mode fs.FileMode) error {
	if mode == 0 {
		mode = 0o755
	}
	w, err := safefs.Resolve(path, true)
	if err != nil {
		return safefs.PathError(path, err)
	}
	defer w.Close()
	if w.Path != path || !w.Exists || !w.Info.IsDir() {
		return fmt.Errorf("%s changed during undo; its mode was not restored", path)
	}
	d, err := w.OpenDir()
	if err != nil {
		return safefs.PathError(path, err)
	}
	defer d.Close()
	return pathErr2(path, chmodDir(d, mode))
}

func pathErr2(p string, err error) error {
	if err == nil {
		return nil
	}
	return safefs.PathError(p, err)
}
