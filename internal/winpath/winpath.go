// Package winpath holds the rules for Windows paths, as pure string code that is tested on every
// system: parsing into one canonical form (drive letters, UNC shares, the \\?\ and \\?\UNC\
// prefixes, either slash, "." and ".."), case-insensitive comparison and containment, and the
// names Windows gives a second meaning, which are refused: reserved device names (CON, NUL,
// COM1, ...), alternate data streams (name:stream), trailing dots and spaces (which Windows
// strips, so "secret.txt." would open secret.txt past a check made on the other name) and
// 8.3 short names that cannot be resolved to the long names they stand for (ResolveShort).
//
// A path that passes Parse names one file the way Windows will open it: the checks made on its
// canonical form hold for what is opened.
package winpath

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
)

// Path is a parsed absolute Windows path.
type Path struct {
	// Volume is a drive ("C:", letter upper-case) or a UNC share (`\\server\share`).
	Volume string
	// Elems are the names below the volume's root: no empty ones, no "." or "..".
	Elems []string
}

// String is the canonical spelling: C:\a\b, \\server\share\a, C:\ for a drive's root.
func (p Path) String() string {
	return p.Volume + `\` + strings.Join(p.Elems, `\`)
}

// Error is a path Parse refuses, with the reason.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("windows path %q: %s", e.Path, e.Reason) }

func refuse(path, format string, args ...any) error {
	return &Error{Path: path, Reason: fmt.Sprintf(format, args...)}
}

func isSep(c byte) bool { return c == '\\' || c == '/' }

// Parse reads an absolute Windows path. Accepted: C:\a and c:/a; \\server\share\a (either
// slash); \\?\C:\a and \\?\UNC\server\share\a (backslashes only, taken verbatim: no "." or ".."
// there). "." and ".." are resolved in the others, never above the volume's root. Refused:
// relative and drive-relative paths (a, \a, C:a), device paths (\\.\, \??\, \\?\GLOBALROOT,
// volume GUIDs) and any name Windows reads differently from how it is written (see CheckName).
func Parse(s string) (Path, error) {
	if s == "" {
		return Path{}, refuse(s, "empty")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Path{}, refuse(s, "contains a NUL byte")
	}
	var (
		p        Path
		rest     string
		verbatim bool
	)
	switch {
	case strings.HasPrefix(s, `\\?\`):
		verbatim = true
		v := s[4:]
		switch {
		case len(v) >= 4 && strings.EqualFold(v[:4], `UNC\`):
			vol, r, err := parseUNC(s, v[4:], true)
			if err != nil {
				return Path{}, err
			}
			p.Volume, rest = vol, r
		case isDrive(v) && (len(v) == 2 || v[2] == '\\'):
			p.Volume, rest = strings.ToUpper(v[:2]), v[2:]
		default:
			return Path{}, refuse(s, `only \\?\C:\... and \\?\UNC\server\share\... are supported`)
		}
	case len(s) >= 3 && isSep(s[0]) && isSep(s[1]) && (s[2] == '.' || s[2] == '?') && (len(s) == 3 || isSep(s[3])),
		strings.HasPrefix(s, `\??\`):
		return Path{}, refuse(s, "device paths are not supported")
	case len(s) >= 2 && isSep(s[0]) && isSep(s[1]):
		vol, r, err := parseUNC(s, s[2:], false)
		if err != nil {
			return Path{}, err
		}
		p.Volume, rest = vol, r
	case isDrive(s):
		if len(s) == 2 || !isSep(s[2]) {
			return Path{}, refuse(s, "relative to the current directory of drive %s (write %s\\...)", s[:2], strings.ToUpper(s[:2]))
		}
		p.Volume, rest = strings.ToUpper(s[:2]), s[2:]
	case isSep(s[0]):
		return Path{}, refuse(s, "relative to the current drive (write it with a drive letter)")
	default:
		return Path{}, refuse(s, "not absolute")
	}
	elems, err := parseElems(s, rest, verbatim)
	if err != nil {
		return Path{}, err
	}
	p.Elems = elems
	return p, nil
}

func isDrive(s string) bool {
	return len(s) >= 2 && s[1] == ':' && ('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}

// parseUNC reads "server\share\rest" (after the leading two separators).
func parseUNC(orig, s string, verbatim bool) (vol, rest string, err error) {
	sep := func(c byte) bool { return c == '\\' || !verbatim && c == '/' }
	i := strings.IndexFunc(s, func(r rune) bool { return r < 0x80 && sep(byte(r)) })
	if i <= 0 {
		return "", "", refuse(orig, "a UNC path needs a server and a share (\\\\server\\share\\...)")
	}
	server, s := s[:i], s[i+1:]
	j := strings.IndexFunc(s, func(r rune) bool { return r < 0x80 && sep(byte(r)) })
	share := s
	if j >= 0 {
		share, s = s[:j], s[j:]
	} else {
		s = ""
	}
	if share == "" {
		return "", "", refuse(orig, "a UNC path needs a server and a share (\\\\server\\share\\...)")
	}
	for _, n := range []string{server, share} {
		if r := nameProblem(n); r != "" {
			return "", "", refuse(orig, "%s", r)
		}
	}
	return `\\` + server + `\` + share, s, nil
}

// parseElems splits the part after the volume into names and checks each.
func parseElems(orig, rest string, verbatim bool) ([]string, error) {
	split := func(r rune) bool { return r == '\\' || !verbatim && r == '/' }
	var out []string
	parts := strings.FieldsFunc(rest, split)
	if verbatim && strings.Contains(rest, `\\`) {
		return nil, refuse(orig, `empty name (\\) in a \\?\ path`)
	}
	for _, e := range parts {
		switch {
		case verbatim && (e == "." || e == ".."):
			return nil, refuse(orig, "%q in a \\\\?\\ path is taken as a name, not resolved", e)
		case e == ".":
			continue
		case e == "..":
			if len(out) == 0 {
				return nil, refuse(orig, ".. climbs above the root of the volume")
			}
			out = out[:len(out)-1]
			continue
		}
		if r := nameProblem(e); r != "" {
			return nil, refuse(orig, "%s", r)
		}
		out = append(out, e)
	}
	return out, nil
}

// reserved are the device names Windows opens instead of a file of that name, in any case,
// with any extension and with spaces before the dot (NUL.txt, "con .log", COM¹).
var reserved = map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true}

func init() {
	for _, d := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³"} {
		reserved["COM"+d], reserved["LPT"+d] = true, true
	}
}

// CheckName refuses a single name that Windows would read as something else than a file of
// that name: a reserved device name, an alternate data stream (a ':'), a trailing dot or space,
// a control character or one of < > " | ? * (and the separators).
func CheckName(name string) error {
	if r := nameProblem(name); r != "" {
		return &Error{Path: name, Reason: r}
	}
	return nil
}

// nameProblem is why CheckName refuses name ("" when it does not).
func nameProblem(name string) string {
	if name == "" {
		return "empty name"
	}
	if name == "." || name == ".." {
		return fmt.Sprintf("%q is not a name", name)
	}
	for _, r := range name {
		switch {
		case r < 0x20:
			return fmt.Sprintf("name %q contains a control character", name)
		case r == ':':
			return fmt.Sprintf("name %q names an alternate data stream (name:stream), which is refused", name)
		case strings.ContainsRune(`<>"|?*\/`, r):
			return fmt.Sprintf("name %q contains %q, which Windows does not allow in names", name, r)
		}
	}
	if last := name[len(name)-1]; last == '.' || last == ' ' {
		return fmt.Sprintf("name %q ends with a dot or a space, which Windows strips (it would open %q)", name, strings.TrimRight(name, ". "))
	}
	base, _, _ := strings.Cut(name, ".")
	if dev := strings.ToUpper(strings.TrimRight(base, " ")); reserved[dev] {
		return fmt.Sprintf("name %q is the reserved device name %s", name, dev)
	}
	return ""
}

// Clean returns the canonical spelling of s (see Parse).
func Clean(s string) (string, error) {
	p, err := Parse(s)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// fold is how Windows compares names: each character upper-cased on its own (NTFS's upcase
// table), with no normalisation and no multi-character folding.
func fold(s string) string { return strings.Map(unicode.ToUpper, s) }

// Fold is s in the case Windows compares names in: two names are one exactly when their folds
// are equal. For callers that index names or paths without parsing them.
func Fold(s string) string { return fold(s) }

// Key is p's canonical spelling in the case Windows compares names in: two paths name the same
// entry (short names and links aside) exactly when their keys are equal.
func (p Path) Key() string { return fold(p.String()) }

// Equal reports whether p and q name the same entry (short names and links aside).
func Equal(p, q Path) bool { return p.Key() == q.Key() }

// Within reports whether p is root or lies below it, comparing names as Windows does (without
// case), name by name (C:\ab is not within C:\a). It is pathx.Within's rule for Windows paths.
func Within(p, root Path) bool {
	if fold(p.Volume) != fold(root.Volume) || len(p.Elems) < len(root.Elems) {
		return false
	}
	for i, e := range root.Elems {
		if fold(p.Elems[i]) != fold(e) {
			return false
		}
	}
	return true
}

// ShortNameLike reports whether name may be an 8.3 short name standing for a longer one
// (PROGRA~1, MICROS~2.TXT): a '~' followed by a digit.
func ShortNameLike(name string) bool {
	for i := 0; i+1 < len(name); i++ {
		if name[i] == '~' && '0' <= name[i+1] && name[i+1] <= '9' {
			return true
		}
	}
	return false
}

// ResolveShort replaces the 8.3 short names in p by the long names they stand for, so that
// checks made on p hold for what Windows opens (C:\PROGRA~1 is C:\Program Files). The longest
// existing part of p that contains a short-looking name is resolved by the system
// (GetLongPathNameW); a short-looking name in the part that does not exist yet, or anywhere
// when the system cannot resolve names (any other OS), makes p refused.
func ResolveShort(p Path) (Path, error) { return resolveShort(p, longPathName) }

// ResolveShortWith is ResolveShort with the system's answer given: long returns the long form
// of an existing path (an error wrapping fs.ErrNotExist when it does not exist). For callers
// that reach the file system through an interface of their own (and their tests).
func ResolveShortWith(p Path, long func(string) (string, error)) (Path, error) {
	return resolveShort(p, long)
}

// sameLong reports whether long can be the long form of short: the same volume and names,
// except the short-looking ones.
func sameLong(short, long Path) bool {
	if fold(short.Volume) != fold(long.Volume) || len(short.Elems) != len(long.Elems) {
		return false
	}
	for i, e := range short.Elems {
		if !ShortNameLike(e) && fold(e) != fold(long.Elems[i]) {
			return false
		}
	}
	return true
}

func resolveShort(p Path, long func(string) (string, error)) (Path, error) {
	first := -1
	for i, e := range p.Elems {
		if ShortNameLike(e) {
			first = i
			break
		}
	}
	if first < 0 {
		return p, nil
	}
	for n := len(p.Elems); n > first; n-- {
		prefix := Path{Volume: p.Volume, Elems: p.Elems[:n]}
		l, err := long(prefix.String())
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Path{}, refuse(p.String(), "cannot resolve the 8.3 short name %q: %v", p.Elems[first], err)
		}
		lp, err := Parse(l)
		if err != nil {
			return Path{}, fmt.Errorf("winpath: resolving short names of %q: %w", p.String(), err)
		}
		if !sameLong(prefix, lp) {
			return Path{}, refuse(p.String(), "resolving short names gave %q, another path", l)
		}
		for _, e := range p.Elems[n:] {
			if ShortNameLike(e) {
				return Path{}, refuse(p.String(), "%q looks like an 8.3 short name and does not exist yet, so what it stands for cannot be known", e)
			}
		}
		lp.Elems = append(lp.Elems, p.Elems[n:]...)
		return lp, nil
	}
	return Path{}, refuse(p.String(), "%q looks like an 8.3 short name that cannot be resolved (nothing of the path exists)", p.Elems[first])
}
