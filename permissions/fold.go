package permissions

import (
	"runtime"
)

// caseInsensitiveNames: on macOS (APFS and HFS+ by default) and Windows, .Git and .git name one
// file, so protected paths, managed roots and excluded names match without case there.
const caseInsensitiveNames = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// foldIndex maps each key of m, folded by key (the flavour's foldKey), to the key itself. When
// two keys fold to one, the first in sorted order wins; either way the path is managed, so a
// lookup still hits.
func foldIndex[V any](m map[string]V, key func(string) string) map[string]string {
	out := make(map[string]string, len(m))
	for k := range m {
		f := key(k)
		if old, ok := out[f]; !ok || k < old {
			out[f] = k
		}
	}
	return out
}

// foldLookup finds q in m, exactly or, when fold is set, without case (fold: folded key -> key,
// folded by key).
func foldLookup[V any](m map[string]V, fold map[string]string, foldCase bool, key func(string) string, q string) (string, V, bool) {
	if v, ok := m[q]; ok {
		return q, v, true
	}
	if foldCase {
		if k, ok := fold[key(q)]; ok {
			return k, m[k], true
		}
	}
	var zero V
	return "", zero, false
}

// rootAt is the managed root at q (nil: none), matched per the policy's case rule.
func (p *Policy) rootAt(q string) *managed {
	_, m, _ := foldLookup(p.roots, p.rootFold, p.foldCase, p.flav.foldKey, q)
	return m
}

// protectedAt returns the protected path at q as configured (ok: q is one).
func (p *Policy) protectedAt(q string) (string, bool) {
	k, _, ok := foldLookup(p.protected, p.protFold, p.foldCase, p.flav.foldKey, q)
	return k, ok
}

// restrictedAt reports whether q is a strict ancestor of a protected path or read-only root.
func (p *Policy) restrictedAt(q string) (string, bool) {
	k, _, ok := foldLookup(p.restricted, p.restrictFold, p.foldCase, p.flav.foldKey, q)
	return k, ok
}
