package permissions

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// cmdAnalysis is what a command line does, as far as its text shows.
type cmdAnalysis struct {
	paths []PathAccess
	// dynamic lists the expansions found ($VAR, $(...), backticks, <(...)): refused when commands
	// run without the kernel sandbox, because they hide paths.
	dynamic []string
}

// errDangerous marks commands refused whatever the permissions.
var errDangerous = errors.New("dangerous command")

// dangerousCommands are refused as command words (not as substrings).
var dangerousCommands = map[string]bool{
	"sudo": true, "su": true, "doas": true, "chmod": true, "chown": true, "chgrp": true,
	"fdisk": true, "sfdisk": true, "cfdisk": true, "parted": true, "mkswap": true,
	"shutdown": true, "reboot": true, "halt": true, "poweroff": true,
}

func isDangerousName(name string) bool {
	b := path.Base(name)
	return dangerousCommands[b] || b == "mkfs" || strings.HasPrefix(b, "mkfs.")
}

// wrappers run their arguments as a command.
var wrappers = map[string]bool{
	"env": true, "nohup": true, "time": true, "nice": true, "ionice": true, "timeout": true,
	"xargs": true, "exec": true, "command": true, "builtin": true, "stdbuf": true, "setsid": true,
	"watch": true, "strace": true, "ltrace": true, "flock": true, "unbuffer": true, "chroot": true,
	"taskset": true, "chrt": true, "runuser": true, "pkexec": true, "busybox": true, "then": true,
}

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true, "fish": true}

// analyzeCommand parses command as bash would and lists the paths it reads and writes.
// workDir is the command's working directory as given ("" = the workspace).
func analyzeCommand(command, workDir string) (*cmdAnalysis, error) {
	a := &cmdAnalysis{}
	if err := a.analyze(command, workDir, 0); err != nil {
		return nil, err
	}
	return a, nil
}

type shellState struct {
	dir   string // current directory as written ("" = workspace)
	known bool
	why   string // why the directory is unknown
}

func (a *cmdAnalysis) analyze(command, workDir string, depth int) error {
	if depth > 8 {
		return errors.New("command nests shells too deeply to check")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return fmt.Errorf("cannot parse the command: %w", err)
	}
	if workDir != "" {
		a.add("work_dir", workDir, Read, false)
	}
	st := &shellState{dir: workDir, known: true}
	simple := simpleCalls(f)
	var werr error
	syntax.Walk(f, func(n syntax.Node) bool {
		if werr != nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.ParamExp:
			a.dynamic = append(a.dynamic, "variable expansion $"+paramName(x))
		case *syntax.CmdSubst:
			if x.Backquotes {
				a.dynamic = append(a.dynamic, "backtick command substitution")
			} else {
				a.dynamic = append(a.dynamic, "command substitution $(...)")
			}
		case *syntax.ArithmExp:
			a.dynamic = append(a.dynamic, "arithmetic expansion $((...))")
		case *syntax.ProcSubst:
			a.dynamic = append(a.dynamic, "process substitution")
		case *syntax.ExtGlob:
			a.dynamic = append(a.dynamic, "extended glob")
		case *syntax.Redirect:
			werr = a.redirect(x, st)
		case *syntax.WordIter:
			for _, w := range x.Items {
				for _, lw := range literalWords(w) {
					if !lw.dynamic {
						werr = a.candidate("for-list", lw, Read, st)
					}
				}
			}
		case *syntax.CallExpr:
			werr = a.call(x, st, simple[x], depth)
		}
		return werr == nil
	})
	return werr
}

func paramName(x *syntax.ParamExp) string {
	if x.Param != nil {
		if x.Short {
			return x.Param.Value
		}
		return "{" + x.Param.Value + "}"
	}
	return "{...}"
}

// simpleCalls are the calls whose `cd` changes the directory of what follows for sure: top-level
// statements and the left side of && chains, not backgrounded.
func simpleCalls(f *syntax.File) map[*syntax.CallExpr]bool {
	out := map[*syntax.CallExpr]bool{}
	var visit func(c syntax.Command)
	visit = func(c syntax.Command) {
		switch x := c.(type) {
		case *syntax.CallExpr:
			out[x] = true
		case *syntax.BinaryCmd:
			if x.Op == syntax.AndStmt {
				if !x.X.Background && !x.X.Negated {
					visit(x.X.Cmd)
				}
				if !x.Y.Background && !x.Y.Negated {
					visit(x.Y.Cmd)
				}
			}
		}
	}
	for _, s := range f.Stmts {
		if !s.Background && !s.Negated {
			visit(s.Cmd)
		}
	}
	return out
}

// litWord is one word after quote removal and brace expansion.
type litWord struct {
	s       string
	dynamic bool
	glob    bool // unquoted glob characters
	tilde   bool // starts with an unquoted ~
}

func literalWords(w *syntax.Word) []litWord {
	var out []litWord
	if hasBraceChars(w) {
		// SplitBraces rewrites the word in place; work on a copy so callers see the original.
		cp := *w
		cp.Parts = append([]syntax.WordPart(nil), w.Parts...)
		if syntax.SplitBraces(&cp) {
			w = &cp
		}
	}
	for _, bw := range expand.Braces(w) {
		out = append(out, literalWord(bw))
	}
	return out
}

func hasBraceChars(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			return true
		}
	}
	return false
}

func literalWord(w *syntax.Word) litWord {
	var b strings.Builder
	lw := litWord{}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				lw.tilde = true
			}
			if strings.ContainsAny(p.Value, "*?[") {
				lw.glob = true
			}
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}})
				if err != nil {
					lw.dynamic = true
					continue
				}
				b.WriteString(s)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
				} else {
					lw.dynamic = true
				}
			}
		default:
			lw.dynamic = true
		}
	}
	lw.s = b.String()
	if !lw.tilde && strings.HasPrefix(lw.s, "~") {
		// A quoted ~ is a file name, not the home directory.
		lw.s = "./" + lw.s
	}
	return lw
}

func unescapeUnquoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// deviceOK are device files commands may use freely.
var deviceOK = map[string]Access{
	"/dev/null": Write, "/dev/stdout": Write, "/dev/stderr": Write, "/dev/tty": Write,
	"/dev/stdin": Read, "/dev/zero": Read, "/dev/urandom": Read, "/dev/random": Read,
	"/dev/fd/0": Read, "/dev/fd/1": Write, "/dev/fd/2": Write,
}

// add records a path access; relative paths are relative to dir.
func (a *cmdAnalysis) add(arg, p string, acc Access, glob bool) {
	a.paths = append(a.paths, PathAccess{Arg: arg, Path: p, Access: acc, Glob: glob})
}

// candidate records a word as a path relative to the shell's current directory.
func (a *cmdAnalysis) candidate(arg string, w litWord, acc Access, st *shellState) error {
	s := w.s
	if s == "" {
		return nil
	}
	if strings.IndexByte(s, 0) >= 0 {
		return errors.New("command word contains a NUL byte")
	}
	if need, ok := deviceOK[s]; ok && (acc == Read || need == Write) {
		return nil
	}
	if strings.HasPrefix(s, "/") || (w.tilde && (s == "~" || strings.HasPrefix(s, "~/"))) {
		a.add(arg, s, acc, w.glob)
		return nil
	}
	if w.tilde {
		return fmt.Errorf("cannot check %q: ~user paths are not supported", s)
	}
	if !st.known {
		return fmt.Errorf("cannot check %q: the working directory is unknown after %s", s, st.why)
	}
	if st.dir != "" {
		s = strings.TrimSuffix(st.dir, "/") + "/" + s
	}
	a.add(arg, s, acc, w.glob)
	return nil
}

// optionValue extracts a path-looking value from an option word: --out=/x, -o/x, -I../inc.
func optionValue(w litWord) (litWord, bool) {
	s := w.s
	if i := strings.IndexByte(s, '='); i >= 0 {
		v := s[i+1:]
		return litWord{s: v, glob: w.glob, tilde: strings.HasPrefix(v, "~")}, v != ""
	}
	t := strings.TrimLeft(s, "-")
	for i, r := range t {
		if r == '/' || r == '.' || r == '~' {
			v := t[i:]
			return litWord{s: v, glob: w.glob, tilde: strings.HasPrefix(v, "~")}, true
		}
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			break
		}
	}
	return litWord{}, false
}

// optionName is the option part of an option word: --out=x -> --out, -o/x -> -o.
func optionName(s string) string {
	if i := strings.IndexByte(s, '='); i >= 0 {
		return s[:i]
	}
	if !strings.HasPrefix(s, "--") && len(s) > 2 {
		return s[:2]
	}
	return s
}

func (a *cmdAnalysis) redirect(r *syntax.Redirect, st *shellState) error {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return nil
	}
	if r.Word == nil {
		return nil
	}
	acc := Write
	if r.Op == syntax.RdrIn || r.Op == syntax.DplIn {
		acc = Read
	}
	for _, w := range literalWords(r.Word) {
		if w.dynamic {
			continue
		}
		if (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && (w.s == "-" || isDigits(w.s)) {
			continue
		}
		if err := a.candidate("redirect "+r.Op.String(), w, acc, st); err != nil {
			return err
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (a *cmdAnalysis) call(ce *syntax.CallExpr, st *shellState, simple bool, depth int) error {
	var words []litWord
	for _, w := range ce.Args {
		for _, lw := range literalWords(w) {
			words = append(words, lw)
		}
	}
	if len(words) == 0 {
		return nil
	}
	return a.words(words, st, simple, depth)
}

// words analyses one simple command given as literal words.
func (a *cmdAnalysis) words(words []litWord, st *shellState, simple bool, depth int) error {
	name := words[0]
	if name.dynamic {
		// The command itself is hidden: nothing more can be said here (strict mode refuses it).
		return nil
	}
	base := path.Base(name.s)
	if name.glob {
		// The shell would run whatever the pattern matches (su[d]o is sudo): not judgeable.
		return fmt.Errorf("%w: the command name %q is a glob pattern", errDangerous, name.s)
	}
	if isDangerousName(name.s) {
		return fmt.Errorf("%w: %q is refused whatever the permissions", errDangerous, base)
	}
	// The program itself: relative program paths are files in the directory.
	if strings.Contains(name.s, "/") && !strings.HasPrefix(name.s, "/") {
		if err := a.candidate("program", name, Read, st); err != nil {
			return err
		}
	}
	args := words[1:]
	switch {
	case wrappers[base]:
		for _, w := range args {
			if !w.dynamic && isDangerousName(w.s) {
				return fmt.Errorf("%w: %q (run through %s) is refused whatever the permissions", errDangerous, path.Base(w.s), base)
			}
		}
		inner := wrapperInner(base, args)
		if inner < 0 {
			return a.plain(base, args, st)
		}
		// Options of the wrapper are still checked as paths.
		if err := a.plain(base, args[:inner], st); err != nil {
			return err
		}
		innerSt := st
		if base == "env" {
			// env -C DIR / --chdir=DIR runs the command in DIR.
			for i, w := range args[:inner] {
				dir, ok := "", false
				switch {
				case (w.s == "-C" || w.s == "--chdir") && i+1 < inner:
					dir, ok = args[i+1].s, true
				case strings.HasPrefix(w.s, "--chdir="):
					dir, ok = strings.TrimPrefix(w.s, "--chdir="), true
				case strings.HasPrefix(w.s, "-C") && len(w.s) > 2:
					dir, ok = w.s[2:], true
				}
				if ok {
					before := len(a.paths)
					if err := a.candidate("env --chdir", litWord{s: dir, tilde: strings.HasPrefix(dir, "~")}, Read, st); err != nil {
						return err
					}
					innerSt = &shellState{known: true}
					if len(a.paths) > before {
						innerSt.dir = a.paths[len(a.paths)-1].Path
					}
				}
			}
		}
		return a.words(args[inner:], innerSt, false, depth)
	case shells[base]:
		for i, w := range args {
			if !w.dynamic && strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "--") && strings.Contains(w.s, "c") {
				for _, s := range args[i+1:] {
					if s.dynamic {
						return nil
					}
					if strings.HasPrefix(s.s, "-") {
						continue
					}
					return a.analyze(s.s, a.dirFor(st), depth+1)
				}
				return nil
			}
		}
		return a.plain(base, args, st)
	case base == "eval":
		var parts []string
		for _, w := range args {
			if w.dynamic {
				return nil
			}
			parts = append(parts, w.s)
		}
		return a.analyze(strings.Join(parts, " "), a.dirFor(st), depth+1)
	case base == "cd" || base == "pushd" || base == "popd":
		return a.cd(base, args, st, simple)
	case base == "find":
		for i, w := range args {
			if w.s == "-exec" || w.s == "-execdir" || w.s == "-ok" || w.s == "-okdir" {
				end := i + 1
				for end < len(args) && args[end].s != ";" && args[end].s != "+" {
					end++
				}
				if i+1 < end {
					inner := make([]litWord, 0, end-i-1)
					for _, x := range args[i+1 : end] {
						if x.s != "{}" {
							inner = append(inner, x)
						}
					}
					if len(inner) > 0 {
						ist := st
						if w.s == "-execdir" || w.s == "-okdir" {
							// Runs in each found file's directory: relative words cannot be placed.
							ist = &shellState{why: "find " + w.s}
						}
						if err := a.words(inner, ist, false, depth); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return a.plain(base, args, st)
}

func (a *cmdAnalysis) dirFor(st *shellState) string {
	if !st.known {
		return "\x00unknown"
	}
	return st.dir
}

// wrapperInner returns the index of the wrapped command in args, or -1.
func wrapperInner(base string, args []litWord) int {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.dynamic {
			return -1
		}
		if strings.HasPrefix(w.s, "-") {
			switch w.s {
			case "-n", "-c", "-p", "-u", "-s", "-k", "-t", "-o", "-e", "-i", "-I", "-L", "-P", "-d", "-a", "-E", "-w", "-C", "--chdir":
				if base != "env" || w.s == "-u" || w.s == "-C" {
					i++ // option with a value
				}
			}
			continue
		}
		if base == "env" && strings.Contains(w.s, "=") {
			continue
		}
		if base == "timeout" || base == "taskset" || base == "chrt" {
			if i+1 < len(args) && !strings.HasPrefix(w.s, "-") && looksNumeric(w.s) {
				continue
			}
		}
		if base == "chroot" || base == "flock" {
			// First operand is a directory/lock file, the command follows.
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		}
		return i
	}
	return -1
}

func looksNumeric(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.smhdx,-") == ""
}

func (a *cmdAnalysis) cd(base string, args []litWord, st *shellState, simple bool) error {
	var ops []litWord
	for _, w := range args {
		if w.dynamic {
			st.known, st.why = false, "cd to an expanded directory"
			return nil
		}
		if w.s == "--" || (strings.HasPrefix(w.s, "-") && w.s != "-") {
			continue
		}
		ops = append(ops, w)
	}
	if base == "popd" || len(ops) == 0 && base == "pushd" {
		st.known, st.why = false, base
		return nil
	}
	var target litWord
	if len(ops) == 0 {
		target = litWord{s: "~", tilde: true}
	} else {
		target = ops[0]
	}
	if target.s == "-" {
		st.known, st.why = false, "cd -"
		return nil
	}
	before := len(a.paths)
	if err := a.candidate("cd", target, Read, st); err != nil {
		return err
	}
	if !simple {
		st.known, st.why = false, "a cd inside a pipeline, condition or subshell"
		return nil
	}
	if len(a.paths) > before {
		st.dir, st.known = a.paths[len(a.paths)-1].Path, true
	}
	return nil
}

// plain classifies the operands of an ordinary command: which are written, which read.
func (a *cmdAnalysis) plain(base string, args []litWord, st *shellState) error {
	var operands []litWord
	type optVal struct {
		opt string
		val litWord
	}
	var withValue []optVal // option followed by a separate value
	endOpts := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.dynamic {
			continue
		}
		if !endOpts && w.s == "--" {
			endOpts = true
			continue
		}
		if !endOpts && (base == "sed" || base == "perl") && (w.s == "-e" || w.s == "--expression") {
			i++ // the script
			continue
		}
		if !endOpts && strings.HasPrefix(w.s, "-") && w.s != "-" {
			// Every option value counts: a bare name may be a symlink leading out.
			if v, ok := optionValue(w); ok {
				acc := Read
				if writesOption(base, optionName(w.s)) {
					acc = Write
				}
				if err := a.candidate("option "+w.s, v, acc, st); err != nil {
					return err
				}
			}
			if takesValue(base, w.s) && i+1 < len(args) {
				withValue = append(withValue, optVal{w.s, args[i+1]})
				i++
			}
			continue
		}
		if base == "dd" && strings.Contains(w.s, "=") {
			k, v, _ := strings.Cut(w.s, "=")
			if k == "of" && strings.HasPrefix(path.Clean(v), "/dev/") {
				if _, ok := deviceOK[v]; !ok {
					return fmt.Errorf("%w: dd of=%s writes a device", errDangerous, v)
				}
			}
			acc := Read
			if k == "of" {
				acc = Write
			}
			if k == "if" || k == "of" {
				if err := a.candidate("dd "+k, litWord{s: v, glob: w.glob, tilde: strings.HasPrefix(v, "~")}, acc, st); err != nil {
					return err
				}
			}
			continue
		}
		operands = append(operands, w)
	}
	for _, ov := range withValue {
		acc := Read
		if writesOption(base, ov.opt) {
			acc = Write
		}
		if err := a.candidate("option "+ov.opt, ov.val, acc, st); err != nil {
			return err
		}
	}
	if base == "rm" && recursiveRm(args) {
		for _, o := range operands {
			if c := path.Clean(o.s); c == "/" || (o.glob && path.Dir(c) == "/") {
				return fmt.Errorf("%w: rm -r %s", errDangerous, o.s)
			}
		}
	}
	write := func(i int) bool { return false }
	switch base {
	case "mv", "touch", "mkdir", "rmdir", "rm", "unlink", "shred", "truncate", "tee":
		write = func(int) bool { return true }
	case "cp", "rsync", "install", "scp":
		if hasTargetDir(args) {
			write = func(int) bool { return false }
		} else {
			n := len(operands)
			write = func(i int) bool { return i == n-1 }
		}
	case "ln":
		hard := true
		for _, w := range args {
			if w.s == "-s" || w.s == "--symbolic" || (strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "--") && strings.Contains(w.s, "s")) {
				hard = false
			}
		}
		n := len(operands)
		// A hard link to a file can be written through: the source needs write access too.
		write = func(i int) bool { return hard || i == n-1 }
	case "sed", "perl":
		inPlace, scriptGiven := false, false
		for _, w := range args {
			if w.s == "-i" || strings.HasPrefix(w.s, "-i") || w.s == "--in-place" || strings.HasPrefix(w.s, "--in-place=") ||
				(strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "--") && strings.Contains(w.s, "i")) {
				inPlace = true
			}
			if w.s == "-e" || w.s == "-f" || w.s == "--expression" || w.s == "--file" || strings.HasPrefix(w.s, "--expression=") {
				scriptGiven = true
			}
		}
		if inPlace {
			write = func(i int) bool { return scriptGiven || i > 0 }
		}
	case "find":
		for _, w := range args {
			if w.s == "-delete" {
				write = func(int) bool { return true }
			}
		}
	case "tar":
		if len(args) > 0 && !strings.HasPrefix(args[0].s, "-") && strings.ContainsAny(args[0].s, "cru") {
			// "tar cf out.tar ...": the first operand is the mode, the second the archive.
			write = func(i int) bool { return i == 1 }
		}
	}
	if extractsHere(base, args) {
		// Unpacking without a target directory writes into the working directory.
		if err := a.candidate(base+" (extracts into the working directory)", litWord{s: "."}, Write, st); err != nil {
			return err
		}
	}
	for i, o := range operands {
		acc := Read
		if write(i) {
			acc = Write
		}
		if (base == "sed" || base == "perl") && i == 0 && !scriptOption(args) {
			continue // the script (unless -e/-f gave it)
		}
		if err := a.candidate(base+" operand", o, acc, st); err != nil {
			return err
		}
	}
	return nil
}

func recursiveRm(args []litWord) bool {
	for _, w := range args {
		if w.s == "--recursive" || w.s == "--no-preserve-root" {
			return true
		}
		if strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "--") && strings.ContainsAny(w.s, "rR") {
			return true
		}
	}
	return false
}

func hasTargetDir(args []litWord) bool {
	for _, w := range args {
		if w.s == "-t" || strings.HasPrefix(w.s, "--target-directory") {
			return true
		}
	}
	return false
}

// takesValue: options whose value is the next word and is (or may be) a path.
func takesValue(base, opt string) bool {
	switch opt {
	case "-o", "--output", "--output-file", "--outfile", "-O", "--output-document", "-t", "--target-directory", "-C", "--directory", "-f", "--file", "-d", "-T":
		switch base {
		case "cp", "mv", "install", "ln", "rsync":
			return opt == "-t" || opt == "--target-directory" || opt == "-T"
		case "curl", "wget", "sort", "gcc", "g++", "cc", "clang", "clang++", "go", "rustc", "ld", "as", "javac", "tar", "zip", "unzip", "make", "git":
			return true
		}
	}
	return false
}

// writesOption: options whose value is written.
func writesOption(base, opt string) bool {
	o, _, _ := strings.Cut(opt, "=")
	switch o {
	case "-t", "--target-directory", "-T":
		return base == "cp" || base == "mv" || base == "install" || base == "ln" || base == "rsync"
	case "-o", "--output", "--output-file", "--outfile":
		return base != "ssh" && base != "grep" && base != "ls"
	case "-O", "--output-document":
		return base == "wget"
	case "-C", "--directory", "-d":
		return base == "tar" || base == "unzip"
	case "-f", "--file":
		return base == "tar"
	}
	return false
}

// extractsHere: tar x or unzip without -C/-d unpack into the working directory.
func extractsHere(base string, args []litWord) bool {
	switch base {
	case "tar":
		extract := false
		for i, w := range args {
			if w.s == "-C" || strings.HasPrefix(w.s, "--directory") {
				return false
			}
			if w.s == "--extract" || w.s == "--get" ||
				(strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "--") && strings.Contains(w.s, "x")) ||
				(i == 0 && !strings.HasPrefix(w.s, "-") && strings.Contains(w.s, "x")) {
				extract = true
			}
		}
		return extract
	case "unzip":
		for _, w := range args {
			if w.s == "-d" || w.s == "-l" || w.s == "-t" || w.s == "-p" {
				return false
			}
		}
		return true
	}
	return false
}

func scriptOption(args []litWord) bool {
	for _, w := range args {
		if w.s == "-e" || w.s == "-f" || w.s == "--expression" || w.s == "--file" ||
			strings.HasPrefix(w.s, "--expression=") || strings.HasPrefix(w.s, "--file=") {
			return true
		}
	}
	return false
}
