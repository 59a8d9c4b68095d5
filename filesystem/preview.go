package filesystem

import (
	"io"
	"strings"

	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/textdiff"
)

// PreviewChange is what a call would change, for the permission prompt: each built-in tool's
// declaration previews its own calls (a unified diff for write_file, edit_file and copy_file of a
// text file, a one-line description for the other tools that write or delete; "" when there is
// nothing to preview). paths are the canonical paths the decision found, in the order the tool
// declares its path arguments. It only reads; the tool, if allowed, acts on its own walk.
func PreviewChange(tool string, args map[string]any, paths []string) string {
	d, ok := Builtin(tool)
	if !ok {
		return ""
	}
	return d.Preview(args, paths)
}

// describeChange is the one-line preview of a tool that changes paths: "delete /p/a".
func describeChange(verb string, paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return verb + " " + strings.Join(paths, " -> ")
}

// previewDiff diffs the file at path (absent: empty) against what change makes of it.
func previewDiff(path string, change func(cur string) (string, error)) string {
	cur, exists := "", false
	if w, err := safefs.Resolve(path, false); err == nil {
		exists = w.Exists
		w.Close()
	}
	if exists {
		var ok bool
		if cur, ok = currentText(path); !ok {
			return "replace " + path + " (binary, large or unreadable: no preview)"
		}
	}
	updated, err := change(cur)
	if err != nil {
		return "the change cannot be applied: " + err.Error()
	}
	nameA := path
	if !exists {
		nameA = "/dev/null"
	}
	d, _, _ := textdiff.Unified(nameA, path, cur, updated, 3)
	if d == "" {
		return "no change to " + path
	}
	return d
}

// currentText reads the text file at path (through a walk: never a link at the end, never a
// special file), if it is small enough to diff.
func currentText(path string) (string, bool) {
	w, err := safefs.Resolve(path, false)
	if err != nil {
		return "", false
	}
	defer w.Close()
	if !w.Exists || !w.Info.IsRegular() || w.Info.Size > maxDiffBytes {
		return "", false
	}
	f, _, err := w.OpenFile()
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDiffBytes+1))
	if err != nil || len(b) > maxDiffBytes || binaryKind(path, b) != "" {
		return "", false
	}
	return string(b), true
}
