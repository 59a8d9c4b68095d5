package permissions

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
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
	// inline lists interpreters given code on the command line or stdin (python3 -c, node -e,
	// awk '...'): refused without the kernel sandbox unless an allow rule covers the command.
	inline []string
	// strict: commands run without the kernel sandbox, so operands of commands we do not know
	// are taken as written (and the working directory for commands that write where they run).
	strict bool
	// words counts the words looked at (after brace expansion), across nested shells.
	nwords int
}

// Bounds on what one command may make the check look at: a decision must stay cheap in time and
// memory whatever the model sends ("echo {a,b}{a,b}..." multiplies words before any check).
const (
	maxCommandLen   = 256 << 10 // bytes of command text
	maxCommandWords = 4096      // words after brace expansion, nested shells included
	maxCommandNodes = 1 << 18   // syntax nodes
)

// errTooLarge marks commands refused because checking them would cost too much.
var errTooLarge = errors.New("command too large to check")

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
func analyzeCommand(command, workDir string, strict bool) (*cmdAnalysis, error) {
	a := &cmdAnalysis{strict: strict}
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
	if len(command) > maxCommandLen {
		return fmt.Errorf("%w: the command is %d bytes (at most %d are checked)", errTooLarge, len(command), maxCommandLen)
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
	nodes := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if werr != nil {
			return false
		}
		if nodes++; nodes > maxCommandNodes {
			werr = fmt.Errorf("%w: the command has more than %d syntax elements", errTooLarge, maxCommandNodes)
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
				lws, err := a.literalWords(w)
				if err != nil {
					werr = err
					return false
				}
				for _, lw := range lws {
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

// literalWords expands a word's braces into literal words, counting them against the command's
// word budget before expanding: too many is an error (errTooLarge), never a long wait.
func (a *cmdAnalysis) literalWords(w *syntax.Word) ([]litWord, error) {
	if hasBraceChars(w) {
		// SplitBraces rewrites the word in place; work on a copy so callers see the original.
		cp := *w
		cp.Parts = append([]syntax.WordPart(nil), w.Parts...)
		if syntax.SplitBraces(&cp) {
			w = &cp
		}
	}
	n := braceCount(w.Parts, maxCommandWords+1)
	if a.nwords+n > maxCommandWords {
		return nil, fmt.Errorf("%w: it expands to more than %d words", errTooLarge, maxCommandWords)
	}
	out := make([]litWord, 0, n)
	for bw, err := range expand.BracesSeq(nil, w) {
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errTooLarge, err)
		}
		if a.nwords++; a.nwords > maxCommandWords {
			return nil, fmt.Errorf("%w: it expands to more than %d words", errTooLarge, maxCommandWords)
		}
		out = append(out, literalWord(bw))
	}
	return out, nil
}

// braceCount is the number of words brace expansion makes of parts, saturating at limit.
func braceCount(parts []syntax.WordPart, limit int) int {
	for i, wp := range parts {
		br, ok := wp.(*syntax.BraceExp)
		if !ok {
			continue
		}
		var here int
		if br.Sequence {
			here = seqLen(br)
		} else {
			for _, e := range br.Elems {
				here = satAdd(here, braceCount(e.Parts, limit), limit)
			}
		}
		if here == 0 {
			here = 1
		}
		return satMul(here, braceCount(parts[i+1:], limit), limit)
	}
	return 1
}

// seqLen is the length of {x..y[..incr]} as expand.Braces would produce it.
func seqLen(br *syntax.BraceExp) int {
	if len(br.Elems) < 2 {
		return 1
	}
	from, err1 := strconv.ParseInt(br.Elems[0].Lit(), 10, 64)
	to, err2 := strconv.ParseInt(br.Elems[1].Lit(), 10, 64)
	if err1 != nil || err2 != nil {
		f, t := br.Elems[0].Lit(), br.Elems[1].Lit()
		if f == "" || t == "" {
			return 1
		}
		from, to = int64(f[0]), int64(t[0])
	}
	incr := uint64(1)
	if len(br.Elems) > 2 {
		if n, err := strconv.ParseInt(br.Elems[2].Lit(), 10, 64); err == nil && n != 0 {
			if n < 0 {
				n = -n
			}
			incr = uint64(n)
		}
	}
	var span uint64
	if from <= to {
		span = uint64(to) - uint64(from)
	} else {
		span = uint64(from) - uint64(to)
	}
	n := span/incr + 1
	if n > math.MaxInt32 || n == 0 {
		return math.MaxInt32
	}
	return int(n)
}

func satAdd(a, b, limit int) int {
	if a+b > limit {
		return limit
	}
	return a + b
}

func satMul(a, b, limit int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > limit/b {
		return limit
	}
	return min(a*b, limit)
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
	lws, err := a.literalWords(r.Word)
	if err != nil {
		return err
	}
	for _, w := range lws {
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
		lws, err := a.literalWords(w)
		if err != nil {
			return err
		}
		words = append(words, lws...)
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
	if what, ok := inlineCode(base, args); ok {
		a.inline = append(a.inline, what)
	}
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
		if !hasOperand(args) && !versionOnly(args) {
			// No script and no -c: the shell reads its commands from stdin, unseen.
			a.inline = append(a.inline, base+" reading commands from stdin")
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
		// Without the sandbox a symbolic link is too: a later word of the same command line
		// (echo x > link) is judged before the link exists, so the link's target must be
		// writable already.
		write = func(i int) bool { return hard || a.strict || i == n-1 }
		if !hard && a.strict && n >= 2 {
			// A relative target is relative to the link's directory, not to the working one.
			link := operands[n-1].s
			if dir := path.Dir(link); dir != "." && !hasTargetDir(args) {
				for _, o := range operands[:n-1] {
					if !strings.HasPrefix(o.s, "/") && !strings.HasPrefix(o.s, "~") {
						if err := a.candidate("ln -s target (from the link's directory)", litWord{s: dir + "/" + o.s}, Write, st); err != nil {
							return err
						}
					}
				}
			}
		}
	case "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "lz4", "zstd", "unzstd", "compress", "uncompress", "brotli", "lzip", "lzop":
		// They replace their operands (file -> file.gz) unless told to write to stdout or test.
		replaces := true
		for _, w := range args {
			switch w.s {
			case "-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list":
				replaces = false
			}
		}
		write = func(int) bool { return replaces }
	case "patch":
		// The first operand is patched; without one, the files named in the diff, relative to the
		// working directory.
		write = func(i int) bool { return i == 0 }
		if err := a.candidate("patch (patches files in the working directory)", litWord{s: "."}, Write, st); err != nil {
			return err
		}
	case "awk", "gawk":
		if awkInPlace(args) {
			write = func(i int) bool { return i > 0 } // operand 0 is the program
		}
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
	if a.strict && !knownCommand(base) {
		// Without the sandbox, a program we do not know may write what it is given.
		write = func(int) bool { return true }
	}
	for i, o := range operands {
		acc := Read
		if write(i) {
			acc = Write
		}
		if (base == "sed" || base == "perl") && i == 0 && !scriptOption(args) {
			continue // the script (unless -e/-f gave it)
		}
		if awkFamily[base] && i == 0 && !awkProgramFile(args) {
			continue // the program text
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

// readCommands only read their operands (or do not take files at all); with the classified
// commands of plain they are the commands whose operands are not taken as written without the
// sandbox.
var readCommands = map[string]bool{
	"cat": true, "tac": true, "head": true, "tail": true, "less": true, "more": true, "ls": true,
	"dir": true, "tree": true, "wc": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"ag": true, "diff": true, "cmp": true, "comm": true, "cut": true, "paste": true, "join": true,
	"nl": true, "od": true, "hexdump": true, "strings": true, "file": true, "stat": true, "du": true,
	"df": true, "echo": true, "printf": true, "pwd": true, "which": true, "whereis": true,
	"type": true, "test": true, "[": true, "[[": true, "true": true, "false": true, "basename": true,
	"dirname": true, "realpath": true, "readlink": true, "md5sum": true, "sha1sum": true,
	"sha256sum": true, "sha512sum": true, "cksum": true, "b2sum": true, "sort": true,
	"column": true, "fold": true, "fmt": true, "expand": true, "unexpand": true, "rev": true,
	"tr": true, "seq": true, "date": true, "sleep": true, "id": true, "whoami": true, "uname": true,
	"hostname": true, "ps": true, "jq": true, "yes": true, "expr": true, "printenv": true,
	"zcat": true, "bzcat": true, "xzcat": true, "zgrep": true, "cd": true, "pushd": true,
	"popd": true, "exit": true, "set": true, "export": true, "unset": true, "read": true,
	"local": true, "return": true, "shift": true, "wait": true, "jobs": true, "alias": true,
	"source": true, ".": true, "let": true, "declare": true, "trap": true, "umask": true,
}

// classifiedCommands are the commands plain classifies operand by operand.
var classifiedCommands = map[string]bool{
	"mv": true, "touch": true, "mkdir": true, "rmdir": true, "rm": true, "unlink": true,
	"shred": true, "truncate": true, "tee": true, "cp": true, "rsync": true, "install": true,
	"scp": true, "ln": true, "sed": true, "find": true, "tar": true, "unzip": true, "dd": true,
	"curl": true, "wget": true, "gzip": true, "gunzip": true, "bzip2": true, "bunzip2": true,
	"xz": true, "unxz": true, "lzma": true, "unlzma": true, "lz4": true, "zstd": true,
	"unzstd": true, "compress": true, "uncompress": true, "brotli": true, "lzip": true,
	"lzop": true, "patch": true,
}

func knownCommand(base string) bool { return readCommands[base] || classifiedCommands[base] }

var awkFamily = map[string]bool{"awk": true, "gawk": true, "mawk": true, "nawk": true}

// awkInPlace: gawk -i inplace (or --include=inplace) edits its operands.
func awkInPlace(args []litWord) bool {
	for i, w := range args {
		switch {
		case (w.s == "-i" || w.s == "--include") && i+1 < len(args) && strings.HasPrefix(args[i+1].s, "inplace"):
			return true
		case strings.HasPrefix(w.s, "-iinplace") || strings.HasPrefix(w.s, "--include=inplace"):
			return true
		}
	}
	return false
}

func awkProgramFile(args []litWord) bool {
	for _, w := range args {
		if w.s == "-f" || strings.HasPrefix(w.s, "--file") || (strings.HasPrefix(w.s, "-f") && !strings.HasPrefix(w.s, "--")) {
			return true
		}
	}
	return false
}

// codeOptions are, per interpreter, the options whose value is program text.
var codeOptions = map[string][]string{
	"python": {"-c"}, "node": {"-e", "-p", "--eval", "--print", "-pe"}, "nodejs": {"-e", "-p", "--eval", "--print"},
	"bun": {"-e", "-p", "--eval", "--print"}, "deno": {"eval"}, "ruby": {"-e"}, "perl": {"-e", "-E"},
	"php": {"-r", "-R", "-B", "-E"}, "lua": {"-e"}, "luajit": {"-e"}, "Rscript": {"-e"}, "R": {"-e"},
	"julia": {"-e", "--eval", "-E", "--print"}, "osascript": {"-e"}, "pwsh": {"-c", "-Command", "-EncodedCommand"},
	"powershell": {"-c", "-Command", "-EncodedCommand"}, "tclsh": {}, "irb": {}, "ghci": {}, "groovy": {"-e"},
}

// interpreterName maps python3.12, python3, pypy3 ... to a codeOptions key.
func interpreterName(base string) (string, bool) {
	if _, ok := codeOptions[base]; ok {
		return base, true
	}
	for _, p := range []string{"python", "pypy", "ruby", "perl", "php", "lua", "node"} {
		if rest, ok := strings.CutPrefix(base, p); ok && strings.Trim(rest, "0123456789.") == "" {
			if p == "pypy" {
				return "python", true
			}
			return p, true
		}
	}
	return "", false
}

// inlineCode reports whether a command runs program text given on the command line or read from
// stdin (python3 -c, node -e, awk '...', perl -pe, python3 < x.py): that text is not analysed.
func inlineCode(base string, args []litWord) (string, bool) {
	if awkFamily[base] {
		if awkProgramFile(args) || versionOnly(args) {
			return "", false
		}
		return base + " program text", true
	}
	name, ok := interpreterName(base)
	if !ok || versionOnly(args) {
		return "", false
	}
	opts := codeOptions[name]
	for _, w := range args {
		if w.dynamic {
			return base + " with an expanded argument", true
		}
		if !strings.HasPrefix(w.s, "-") || w.s == "-" {
			if w.s == "-" {
				return base + " reading its program from stdin", true
			}
			for _, o := range opts {
				if w.s == o { // deno eval
					return base + " " + o, true
				}
			}
			return "", false // a script file: its text is not on the command line
		}
		if w.s == "-m" || w.s == "--" {
			return "", false // python -m module
		}
		for _, o := range opts {
			if !strings.HasPrefix(o, "-") {
				continue
			}
			if w.s == o || strings.HasPrefix(w.s, o+"=") {
				return base + " " + o, true
			}
			// Clustered short options: perl -pie, python3 -Ic.
			if len(o) == 2 && !strings.HasPrefix(w.s, "--") && strings.Contains(w.s[1:], o[1:]) {
				return base + " " + w.s, true
			}
		}
	}
	return base + " reading its program from stdin", true
}

// hasOperand: some argument is not an option.
func hasOperand(args []litWord) bool {
	for _, w := range args {
		if w.dynamic || !strings.HasPrefix(w.s, "-") {
			return true
		}
	}
	return false
}

// versionOnly: the arguments only ask for a version or help (python3 --version).
func versionOnly(args []litWord) bool {
	if len(args) == 0 {
		return false
	}
	for _, w := range args {
		switch w.s {
		case "--version", "-V", "-v", "--help", "-h", "-version", "-help":
		default:
			return false
		}
	}
	return true
}
