// Package launch is how massgen starts programs of its own (MCP servers, hooks) so that none of
// them runs from, or loads from, a place an agent can write: each starts in an empty directory of
// a private area no agent can reach (Area), the program and script a command line names are
// found before anything runs (Resolve, ScriptIndex) so they can be checked, and a hook's program
// and script run from the exact bytes that were hashed (Image, Stage).
package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Area is a private directory (0700) of massgen's for one run: the working directories of the
// programs it starts and the copies of the scripts it runs. It lies outside every path an
// agent may use (the caller checks that; see Dir), and Close removes it.
type Area struct {
	dir string
}

// Base is where areas are made: $XDG_RUNTIME_DIR/massgen when XDG_RUNTIME_DIR is absolute (a
// per-user 0700 folder on Linux), else the user's cache folder's massgen (~/.cache/massgen,
// ~/Library/Caches/massgen), else the system temp folder. The temp folder comes last: other
// users may plant files in its parents (/tmp/node_modules), which npx, for one, looks for.
func Base(lookupEnv func(string) (string, bool)) string {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if x, ok := lookupEnv("XDG_RUNTIME_DIR"); ok && filepath.IsAbs(x) {
		if fi, err := os.Stat(x); err == nil && fi.IsDir() {
			return filepath.Join(x, "massgen")
		}
	}
	if c, err := os.UserCacheDir(); err == nil && filepath.IsAbs(c) {
		return filepath.Join(c, "massgen")
	}
	return os.TempDir()
}

// NewArea makes a fresh private directory in base (created 0700 when missing), named run-*.
// Its path is returned with symlinks resolved, as the permission layer compares paths.
func NewArea(base string) (*Area, error) {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("launch: private area: %w", err)
	}
	dir, err := os.MkdirTemp(base, "run-")
	if err != nil {
		return nil, fmt.Errorf("launch: private area: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return &Area{dir: dir}, nil
}

// Dir is the area's directory.
func (a *Area) Dir() string { return a.dir }

// Mkdir makes a fresh, empty 0700 directory in the area (named prefix-*).
func (a *Area) Mkdir(prefix string) (string, error) {
	d, err := os.MkdirTemp(a.dir, safeName(prefix)+"-")
	if err != nil {
		return "", fmt.Errorf("launch: private directory: %w", err)
	}
	return d, nil
}

// Close removes the area and everything in it.
func (a *Area) Close() error {
	if a == nil || a.dir == "" {
		return nil
	}
	if err := os.RemoveAll(a.dir); err != nil {
		return fmt.Errorf("launch: removing the private area: %w", err)
	}
	return nil
}

// safeName keeps a name usable as part of a file name.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

// Resolve finds the file a command line's word names as a program or a script: an absolute
// path as it is, a relative path with a separator against baseDir, a bare name through
// lookPath (the PATH the program will be started with). The result is absolute and clean;
// Real is it with every symlink resolved. A name that is not a regular file is an error.
func Resolve(word, baseDir string, lookPath func(string) (string, error)) (File, error) {
	var abs string
	switch {
	case word == "":
		return File{}, errors.New("empty program name")
	case filepath.IsAbs(word):
		abs = filepath.Clean(word)
	case strings.ContainsAny(word, `/`+string(filepath.Separator)):
		if !filepath.IsAbs(baseDir) {
			return File{}, fmt.Errorf("%s: a relative path, and no directory to resolve it against", word)
		}
		abs = filepath.Join(baseDir, word)
	default:
		if lookPath == nil {
			return File{}, fmt.Errorf("%s: not found", word)
		}
		p, err := lookPath(word)
		if err != nil {
			return File{}, fmt.Errorf("%s: not found on PATH", word)
		}
		if !filepath.IsAbs(p) {
			return File{}, fmt.Errorf("%s: found as %s, a path relative to the working directory (a PATH entry such as \".\"): name it by an absolute path", word, p)
		}
		abs = filepath.Clean(p)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", abs, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", abs, err)
	}
	if !fi.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s is not a regular file", abs)
	}
	return File{Word: word, Path: abs, Real: real}, nil
}

// File is a program or script a command line names.
type File struct {
	Word string // as written
	Path string // absolute, clean (symlinks kept)
	Real string // symlinks resolved
	// Script: given to an interpreter (or sourced by the shell), not started itself.
	Script bool
	// Interp is the interpreter's base name for a script (python3, node, ...).
	Interp string
}

// Places are the paths that decide who can change f: its path, the folder holding it, and
// the same for the file it resolves to. Whoever may write one of them may replace what runs.
func (f File) Places() []string {
	out := []string{f.Path, filepath.Dir(f.Path)}
	if f.Real != f.Path {
		out = append(out, f.Real, filepath.Dir(f.Real))
	}
	return out
}

// interp describes how an interpreter finds its script among its arguments.
type interp struct {
	// inline are options after which there is no script file: code on the command line (-c,
	// -e) or a module looked up by name (-m). Short ones also count inside a cluster (-ec).
	inline []string
	// valued are options that take the next word as their value.
	valued []string
	// sub is a leading subcommand word skipped before the script (deno run x.ts).
	sub []string
}

var (
	shellInterp  = interp{inline: []string{"-c"}, valued: []string{"-o", "-O", "+O", "+o", "--rcfile", "--init-file"}}
	pythonInterp = interp{inline: []string{"-c", "-m"}, valued: []string{"-W", "-X", "--check-hash-based-pycs"}}
	nodeInterp   = interp{inline: []string{"-e", "--eval", "-p", "--print"}, valued: []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--input-type", "--env-file", "--title"}}
	interps      = map[string]interp{
		"sh": shellInterp, "bash": shellInterp, "dash": shellInterp, "zsh": shellInterp, "ksh": shellInterp, "mksh": shellInterp, "ash": shellInterp,
		"python": pythonInterp, "python2": pythonInterp, "python3": pythonInterp, "pypy": pythonInterp, "pypy3": pythonInterp,
		"node": nodeInterp, "nodejs": nodeInterp,
		"deno":    {sub: []string{"run"}, inline: []string{"eval"}, valued: []string{"--config", "-c", "--import-map"}},
		"bun":     {sub: []string{"run"}, inline: []string{"-e", "--eval", "-p", "--print"}},
		"ruby":    {inline: []string{"-e"}, valued: []string{"-I", "-r", "-C"}},
		"perl":    {inline: []string{"-e", "-E"}, valued: []string{"-I", "-M", "-m"}},
		"php":     {inline: []string{"-r"}, valued: []string{"-c", "-d", "-z"}},
		"lua":     {inline: []string{"-e"}, valued: []string{"-l"}},
		"Rscript": {inline: []string{"-e"}},
		"tclsh":   {},
	}
)

// InterpreterName is the table name of program (a path or a name): its base name without a
// Windows extension, python3.12 as python3. "" when it is not an interpreter massgen knows.
func InterpreterName(program string) string {
	base := filepath.Base(strings.ReplaceAll(program, `\`, "/"))
	if runtime.GOOS == "windows" || strings.ContainsRune(base, '.') {
		for _, ext := range []string{".exe", ".EXE", ".cmd", ".bat"} {
			base = strings.TrimSuffix(base, ext)
		}
	}
	if _, ok := interps[base]; ok {
		return base
	}
	for _, p := range []string{"python3.", "python2.", "pypy3."} {
		if rest, ok := strings.CutPrefix(base, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return p[:len(p)-1]
		}
	}
	return ""
}

// ScriptIndex returns the index in args (the interpreter's arguments, its own name excluded)
// of the script file the interpreter name runs, or -1 when it runs none (code given inline, a
// module by name, stdin). literal reports whether args[i] is known text (not an expansion); an
// option that is not literal makes the answer unknown (ok false).
func ScriptIndex(name string, args []string, literal func(i int) bool) (idx int, ok bool) {
	it, known := interps[name]
	if !known {
		return -1, true
	}
	in := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	subSkipped := false
	for i := 0; i < len(args); i++ {
		if literal != nil && !literal(i) {
			return -1, false
		}
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1, true
			}
			return -1, true
		case a == "-":
			return -1, true // stdin
		case strings.HasPrefix(a, "--"):
			n, _, hasVal := strings.Cut(a, "=")
			if in(it.inline, n) {
				return -1, true
			}
			if in(it.valued, n) && !hasVal {
				i++
			}
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") && name != "" && shellLike(name):
			if in(it.inline, a) {
				return -1, true
			}
			if in(it.valued, a) {
				i++
				continue
			}
			// A cluster of short options: -ec is -e -c; the value of the last may follow.
			for j := 1; j < len(a); j++ {
				o := string(a[0]) + a[j:j+1]
				if in(it.inline, o) {
					return -1, true
				}
				if in(it.valued, o) {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		case !subSkipped && in(it.sub, a):
			subSkipped = true
		case in(it.inline, a): // deno eval
			return -1, true
		default:
			return i, true
		}
	}
	return -1, true
}

func shellLike(name string) bool {
	_, ok := map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}[name]
	return ok
}

// Shebang returns the interpreter a script's first line names (#!/usr/bin/env node gives
// "node" as the program env runs), or "" when data does not start with #!.
func Shebang(data []byte) (interpreter string, viaEnv string) {
	if len(data) < 2 || data[0] != '#' || data[1] != '!' {
		return "", ""
	}
	line := data[2:]
	if i := strings.IndexByte(string(line[:min(len(line), 256)]), '\n'); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return "", ""
	}
	if filepath.Base(f[0]) == "env" {
		for _, w := range f[1:] {
			if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
				return f[0], w
			}
		}
	}
	return f[0], ""
}

// ResolveScript finds a script an interpreter is given: an absolute path as it is, any other
// against baseDir (interpreters look in their working directory, never on PATH).
func ResolveScript(word, baseDir string) (File, error) {
	if word == "" {
		return File{}, errors.New("empty script name")
	}
	w := word
	if !filepath.IsAbs(w) {
		if !filepath.IsAbs(baseDir) {
			return File{}, fmt.Errorf("%s: a relative path, and no directory to resolve it against", word)
		}
		w = filepath.Join(baseDir, w)
	}
	f, err := Resolve(w, "", nil)
	f.Word, f.Script = word, true
	return f, err
}

// Interpreters are the programs that run f when it is a #! script: the interpreter its first
// line names and, for #!/usr/bin/env NAME, NAME as lookPath finds it.
func Interpreters(f File, lookPath func(string) (string, error)) ([]File, error) {
	h, err := openNoFollow(f.Real)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	buf := make([]byte, 256)
	n, _ := io.ReadFull(h, buf)
	in, viaEnv := Shebang(buf[:n])
	if in == "" {
		return nil, nil
	}
	var out []File
	if filepath.IsAbs(in) {
		if g, err := Resolve(in, "", nil); err == nil {
			out = append(out, g)
		}
	}
	if viaEnv != "" {
		if g, err := Resolve(viaEnv, "", lookPath); err == nil {
			out = append(out, g)
		}
	}
	return out, nil
}

// ShapedBy says how an agent could change what f runs, by shaped's verdict on each of its
// Places ("" when it cannot).
func (f File) ShapedBy(shaped func(string) string) string {
	what := "program"
	if f.Script {
		what = "script"
	}
	for _, p := range f.Places() {
		if why := shaped(p); why != "" {
			if p == f.Path || p == f.Real {
				return fmt.Sprintf("its %s %s lies where an agent could change it: %s", what, f.Path, why)
			}
			return fmt.Sprintf("its %s %s lies where an agent could change it: in the folder %s, %s", what, f.Path, p, why)
		}
	}
	return ""
}
