package hooks

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/massgen-go/massgen/internal/launch"
)

// Program is a program or script a hook's command line names, found when the rules load: the
// hook runs it from the bytes hashed then (Sum), never from the file again.
type Program struct {
	launch.File
	// Sum is the SHA-256 the file must have: the approved one, or (for rules that need no
	// approval) the one it had when the rules loaded.
	Sum string
	// Start and End are the word's bytes in the command line, replaced at run time by the path
	// of the hashed copy.
	Start, End int
}

// shellBuiltins run no program of their own (sh's special and regular built-ins). ".", exec,
// command, eval and trap are handled apart.
var shellBuiltins = map[string]bool{
	":": true, "break": true, "continue": true, "exit": true, "export": true, "readonly": true,
	"return": true, "set": true, "shift": true, "times": true, "unset": true, "alias": true,
	"bg": true, "cd": true, "false": true, "fc": true, "fg": true, "getopts": true, "hash": true,
	"jobs": true, "kill": true, "pwd": true, "read": true, "true": true, "type": true,
	"ulimit": true, "umask": true, "unalias": true, "wait": true, "echo": true, "printf": true,
	"test": true, "[": true, "local": true,
}

// cmdBuiltins are cmd.exe's internal commands (Windows hooks).
var cmdBuiltins = map[string]bool{
	"assoc": true, "break": true, "call": true, "cd": true, "chdir": true, "cls": true, "color": true,
	"copy": true, "date": true, "del": true, "dir": true, "echo": true, "endlocal": true, "erase": true,
	"exit": true, "for": true, "ftype": true, "goto": true, "if": true, "md": true, "mkdir": true,
	"mklink": true, "move": true, "path": true, "pause": true, "popd": true, "prompt": true,
	"pushd": true, "rd": true, "rem": true, "ren": true, "rename": true, "rmdir": true, "set": true,
	"setlocal": true, "shift": true, "start": true, "time": true, "title": true, "type": true,
	"ver": true, "verify": true, "vol": true,
}

// wrappers run the program that follows their own options; valued lists the options that take
// the next word.
var wrappers = map[string][]string{
	"env":     {"-u", "--unset", "-C", "--chdir"},
	"nohup":   nil,
	"setsid":  nil,
	"time":    nil,
	"nice":    {"-n", "--adjustment"},
	"timeout": {"-s", "--signal", "-k", "--kill-after"},
	"stdbuf":  {"-i", "-o", "-e"},
	"xargs":   {"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars"},
}

// Analyze finds the programs and scripts a hook's command line names: the program of every
// simple command (in pipelines, lists, substitutions, through exec, command, env, nohup, nice,
// timeout, xargs...), the script an interpreter is given (python3 check.py, bash x.sh, node
// a.js) and the file `.` reads. Relative paths are relative to baseDir, bare names are looked up
// on environ's PATH; built-ins and functions the line defines run no file. What massgen cannot
// pin down before the hook runs is an error: a program or script built at run time ($VAR,
// $(...)), an inline shell (sh -c, eval, trap), a program that is not found.
func Analyze(command, baseDir string, environ []string) ([]Program, error) {
	lookPath := pathLookup(environ)
	if runtime.GOOS == "windows" {
		return analyzeCmd(command, baseDir, lookPath)
	}
	home := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, fmt.Errorf("not a command line /bin/sh can run: %v", err)
	}
	funcs := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
			funcs[fd.Name.Value] = true
		}
		return true
	})
	var progs []Program
	var errs []error
	syntax.Walk(f, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			ps, err := command1(ce.Args, baseDir, home, lookPath, funcs)
			progs = append(progs, ps...)
			if err != nil {
				errs = append(errs, err)
			}
		}
		return true
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return progs, nil
}

// command1 reads one simple command's words.
func command1(words []*syntax.Word, baseDir, home string, lookPath func(string) (string, error), funcs map[string]bool) ([]Program, error) {
	var out []Program
	literal := func(w *syntax.Word) (string, bool) { return tildeLiteral(w, home) }
	for len(words) > 0 {
		w := words[0]
		name, ok := literal(w)
		if !ok {
			return out, fmt.Errorf("the program %q is only known when the hook runs ($VAR, $(...), quoting massgen does not read): write its path out", source(w))
		}
		switch {
		case name == "." || name == "source":
			if len(words) < 2 {
				return out, nil
			}
			s, ok := literal(words[1])
			if !ok || !strings.ContainsRune(s, '/') {
				return out, fmt.Errorf("`%s %s`: name the file it reads by a path massgen can read as written (with a /)", name, source(words[1]))
			}
			f, err := launch.ResolveScript(s, baseDir)
			if err != nil {
				return out, fmt.Errorf("`%s`: %v", name, err)
			}
			f.Interp = "sh"
			return append(out, program(f, words[1])), nil
		case name == "exec" || name == "command":
			words = words[1:]
			for len(words) > 0 {
				o, _ := literal(words[0])
				if o == "-v" || o == "-V" {
					return out, nil // prints what a name is; runs nothing
				}
				if o != "-p" && o != "--" {
					break
				}
				words = words[1:]
			}
			continue
		case name == "eval" || name == "trap":
			return out, fmt.Errorf("`%s` runs a command line built when the hook runs: write its commands into the hook's own line or a script", name)
		case shellBuiltins[name] || funcs[name]:
			return out, nil
		}
		f, err := launch.Resolve(name, baseDir, lookPath)
		if err != nil {
			return out, fmt.Errorf("program %v", err)
		}
		p := program(f, w)
		base := filepath.Base(name)
		if valued, ok := wrappers[base]; ok {
			out = append(out, p)
			words = skipOptions(words[1:], valued, base == "env")
			continue
		}
		args := words[1:]
		interp := launch.InterpreterName(name)
		if interp == "" {
			interp = launch.InterpreterName(f.Real)
		}
		if interp == "" {
			return append(out, p), nil // a #! script's interpreter reads the hashed copy
		}
		out = append(out, p)
		texts := make([]string, len(args))
		for i, a := range args {
			texts[i], _ = literal(a)
		}
		idx, known := launch.ScriptIndex(interp, texts, func(i int) bool { _, ok := literal(args[i]); return ok })
		if !known {
			return out, fmt.Errorf("%s: an option is only known when the hook runs, so massgen cannot tell which script it runs: write it out", name)
		}
		if idx < 0 {
			if slices.Contains([]string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"}, interp) && hasInline(interp, texts) {
				return out, fmt.Errorf("`%s -c` runs an inline shell whose programs massgen cannot check: write its commands into the hook's own line or a script", name)
			}
			return out, nil
		}
		s := texts[idx]
		sf, err := launch.ResolveScript(s, baseDir)
		if err != nil {
			return out, fmt.Errorf("script %v", err)
		}
		sf.Interp = interp
		return append(out, program(sf, args[idx])), nil
	}
	return out, nil
}

func hasInline(interp string, args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'c') {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return false
}

// skipOptions drops a wrapper's options (and, for env, its NAME=VALUE words): what is left
// starts with the program it runs.
func skipOptions(words []*syntax.Word, valued []string, env bool) []*syntax.Word {
	for len(words) > 0 {
		s, ok := literal(words[0])
		switch {
		case !ok:
			return words
		case s == "--":
			return words[1:]
		case strings.HasPrefix(s, "-") && len(s) > 1:
			words = words[1:]
			if slices.Contains(valued, s) && len(words) > 0 {
				words = words[1:]
			}
		case env && strings.Contains(s, "="):
			words = words[1:]
		case len(valued) > 0 && (strings.HasPrefix(s, "+") || isDuration(s)):
			words = words[1:] // timeout's duration, nice's old +N
		default:
			return words
		}
	}
	return words
}

func isDuration(s string) bool {
	s = strings.TrimRight(s, "smhd")
	return s != "" && strings.Trim(s, "0123456789.") == ""
}

func program(f launch.File, w *syntax.Word) Program {
	return Program{File: f, Start: int(w.Pos().Offset()), End: int(w.End().Offset())}
}

// tildeLiteral is literal with a leading unquoted ~/ replaced by home, as the shell expands it.
func tildeLiteral(w *syntax.Word, home string) (string, bool) {
	s, ok := literal(w)
	if !ok || len(w.Parts) == 0 {
		return s, ok
	}
	if l, isLit := w.Parts[0].(*syntax.Lit); isLit && (l.Value == "~" || strings.HasPrefix(l.Value, "~/")) {
		if home == "" || !filepath.IsAbs(home) {
			return "", false
		}
		return home + s[1:], true
	}
	return s, true
}

// literal is w's text after quote removal when it holds no expansion (and no backslash, which
// massgen does not interpret).
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsRune(p.Value, '\\') {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, in := range p.Parts {
				l, ok := in.(*syntax.Lit)
				if !ok || strings.ContainsRune(l.Value, '\\') {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func source(w *syntax.Word) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	return b.String()
}

// pathLookup finds a bare program name on environ's PATH (absolute entries only), as the
// hook's shell will.
func pathLookup(environ []string) func(string) (string, error) {
	path := ""
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.EqualFold(k, "PATH") {
			path = v
		}
	}
	return func(name string) (string, error) {
		for _, dir := range filepath.SplitList(path) {
			if !filepath.IsAbs(dir) {
				continue
			}
			cand := filepath.Join(dir, name)
			if runtime.GOOS == "windows" {
				if p, err := exec.LookPath(cand); err == nil {
					return p, nil
				}
				continue
			}
			if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				return cand, nil
			}
		}
		return "", fmt.Errorf("%s: not found", name)
	}
}

// analyzeCmd reads a Windows hook (one cmd.exe line): its first word is the program (quoted
// or not), and the script when that is an interpreter. cmd.exe's syntax beyond that is not
// read: the other programs of the line are not checked.
func analyzeCmd(command, baseDir string, lookPath func(string) (string, error)) ([]Program, error) {
	type tok struct {
		s          string
		start, end int
	}
	var toks []tok
	for i := 0; i < len(command) && len(toks) < 64; {
		for i < len(command) && (command[i] == ' ' || command[i] == '\t') {
			i++
		}
		if i >= len(command) {
			break
		}
		start := i
		var s string
		if command[i] == '"' {
			j := strings.IndexByte(command[i+1:], '"')
			if j < 0 {
				return nil, errors.New("an unclosed quote")
			}
			s, i = command[i+1:i+1+j], i+j+2
		} else {
			for i < len(command) && !strings.ContainsRune(" \t&|<>()", rune(command[i])) {
				i++
			}
			s = command[start:i]
		}
		if s == "" {
			break
		}
		toks = append(toks, tok{s, start, i})
		if i < len(command) && strings.ContainsRune("&|<>()", rune(command[i])) {
			break
		}
	}
	if len(toks) == 0 || cmdBuiltins[strings.ToLower(toks[0].s)] {
		return nil, nil
	}
	f, err := launch.Resolve(toks[0].s, baseDir, lookPath)
	if err != nil {
		return nil, fmt.Errorf("program %v", err)
	}
	out := []Program{{File: f, Start: toks[0].start, End: toks[0].end}}
	if interp := launch.InterpreterName(f.Path); interp != "" {
		texts := make([]string, len(toks)-1)
		for i, t := range toks[1:] {
			texts[i] = t.s
		}
		if idx, _ := launch.ScriptIndex(interp, texts, nil); idx >= 0 {
			sf, err := launch.ResolveScript(texts[idx], baseDir)
			if err != nil {
				return nil, fmt.Errorf("script %v", err)
			}
			sf.Interp = interp
			t := toks[idx+1]
			out = append(out, Program{File: sf, Start: t.start, End: t.end})
		}
	}
	return out, nil
}

// rewrite is command with each program's word replaced by the path its hashed copy is reached
// by (quoted for the shell).
func rewrite(command string, progs []Program, paths []string) string {
	idx := make([]int, len(progs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return progs[b].Start - progs[a].Start })
	for _, i := range idx {
		p := progs[i]
		command = command[:p.Start] + quoteWord(paths[i]) + command[p.End:]
	}
	return command
}

func quoteWord(s string) string {
	if runtime.GOOS == "windows" {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
