package filesystem

import (
	"fmt"
	"io"
	"strings"

	"github.com/massgen-go/massgen/internal/safefs"
)

// PreviewChange is what a call would change, for the permission prompt: a unified diff for
// write_file, edit_file and copy_file of a text file, a one-line description for the other
// tools that write or delete ("" when there is nothing to preview). paths are the canonical
// paths the decision found, in the order the tool declares its path arguments. It only reads;
// the tool, if allowed, acts on its own walk.
func PreviewChange(tool string, args map[string]any, paths []string) string {
	c := &call{name: tool, args: args}
	switch tool {
	case "write_file":
		content, err := c.str("content", false)
		if err != nil || len(paths) != 1 {
			return ""
		}
		return previewDiff(paths[0], func(string) (string, error) { return content, nil })
	case "edit_file":
		edits, err := c.edits()
		if err != nil || len(paths) != 1 {
			return ""
		}
		return previewDiff(paths[0], func(cur string) (string, error) { return applyEdits(cur, edits) })
	case "copy_file":
		if len(paths) != 2 {
			return ""
		}
		src, ok := currentText(paths[0])
		if !ok {
			return fmt.Sprintf("copy %s -> %s", paths[0], paths[1])
		}
		return previewDiff(paths[1], func(string) (string, error) { return src, nil })
	case "move_file":
		if len(paths) == 2 {
			return fmt.Sprintf("move %s -> %s", paths[0], paths[1])
		}
	case "delete_file", "delete_files_batch", "create_directory", "copy_files_batch":
		if len(paths) > 0 {
			return fmt.Sprintf("%s %s", strings.TrimSuffix(tool, "_file"), strings.Join(paths, " -> "))
		}
	}
	return ""
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
	d, _, _ := unifiedDiff(nameA, path, cur, updated, 3)
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
