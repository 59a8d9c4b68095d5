// Package pathx holds the one containment rule every package uses: whether a clean absolute
// path lies at or below a root, compared component by component (so /a/bc is not under /a/b).
package pathx

import (
	"path/filepath"
	"strings"
)

// Within reports whether p is root or lies below it. Both must be clean and absolute in the
// same form (both from filepath.Clean, or both resolved); nothing is resolved here.
func Within(p, root string) bool {
	if p == root {
		return true
	}
	sep := string(filepath.Separator)
	if root == sep || (filepath.VolumeName(root) != "" && root == filepath.VolumeName(root)+sep) {
		return strings.HasPrefix(p, root)
	}
	return strings.HasPrefix(p, root) && strings.HasPrefix(p[len(root):], sep)
}

// WithinAny reports whether p is within one of roots.
func WithinAny(p string, roots []string) bool {
	for _, r := range roots {
		if Within(p, r) {
			return true
		}
	}
	return false
}
