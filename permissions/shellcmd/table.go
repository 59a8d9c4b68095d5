package shellcmd

import (
	"path"
	"strings"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// program is what the analysis knows of one program, or of a family that behaves alike: which
// options take values, what those values and the operands are. programs.go lists them.
type program struct {
	names     []string // as called; "mkfs.*" names a family by its prefix
	versioned bool     // the names may end in a version: python3.12, pypy3, node18
	refuse    string   // refused whatever the permissions: why
	opts      []opt
	layouts   []layout        // what the operands are: the first layout whose flags match; none: operand
	posix     bool            // options end at the first operand (wrappers, interpreters)
	raw       bool            // no options at all: every word is an operand (echo, test)
	letters   bool            // letters of a cluster the table does not list are flags
	caseless  bool            // options are spelled in any case (PowerShell); listed in lower case
	bundled   bool            // a first word without a dash is a cluster of options: tar cf a.tar
	settings  bool            // NAME=VALUE operands before the command are settings (env)
	keyed     map[string]role // KEY=VALUE operands: the role of VALUE by KEY (dd if= of=)
	// refuseRoot: with these flags, an operand that is / or a pattern directly under / is
	// refused (rm -r /).
	refuseRoot flag
	// stdin: without a program operand or option, the program reads program text from stdin
	// (python3 < x.py); what to call that.
	stdin string
	// stdinArgs: the command it runs gets more operands from stdin (xargs); what they are.
	stdinArgs string
	// Examples run by the tests: commands and the paths they must, or must not, produce.
	match, notMatch []example
}

// example is a command and what its analysis gives: "path:access" items (r, w, d), and the
// words "inline", "dynamic", "refused" (ErrDangerous) or "error" (any other error). A command
// that starts with "[strict] " is analysed as run without the kernel sandbox.
type example struct{ cmd, want string }

// opt is one option, under all its spellings.
type opt struct {
	names  string // space-separated spellings: "-o --output"; long ones also as --output=VALUE
	values []role // the words it takes, in order; none: a flag
	sets   flag   // what giving it switches on
	// ifValue: sets only applies when the value starts with this (gawk -i inplace).
	ifValue string
	// attached: the value is optional and only ever attached to the option (sed -i.bak).
	attached bool
	// readWhen: a written value is only read when one of these flags is set (tar -f when
	// listing or extracting).
	readWhen flag
	// ends: the options end after this one (python -c CODE: the rest are the program's).
	ends bool
}

// layout says what a program's operands are, for one combination of flags.
type layout struct {
	when, unless flag   // it applies when all of when and none of unless are set
	lead         []role // the first operands, in order
	last         role   // the last operand after lead, if set
	rest         role   // every other operand (unset: operand)
	into         role   // a source's name in the destination directory, if set (cp a d/: d/a)
	cwd          role   // the working directory, if set (tar x, unzip, patch, wget write there)
	empty        role   // the working directory when there is no operand, if set (find -delete)
}

// flag is a behaviour an option switches on.
type flag uint32

const (
	fStrict    flag = 1 << iota // set by the analysis: no kernel sandbox
	fRecursive                  // rm -r
	fInPlace                    // sed -i, perl -i, gawk -i inplace: operands are edited
	fScript                     // the program text is an option's (sed -e, awk -f, grep -e)
	fTargetDir                  // -t DIR: every operand is a source
	fNoTarget                   // -T: the destination is never a directory
	fSymbolic                   // ln -s
	fKeep                       // compressors: -c, -t, -l keep their operands
	fDelete                     // find -delete
	fCreate                     // tar c, r, u, A, --delete: the archive is written
	fExtract                    // tar x
	fList                       // tar t
	fIntoDir                    // -C, -d, -P: the files go to the directory given
	fShellC                     // sh -c: the first operand is a command line
	fProgram                    // the program is given by an option (python -m, php -f)
	fFromStdin                  // sh -s: commands come from stdin whatever the operands
	fDirs                       // install -d: the operands are directories to make
	fRemove                     // zip -m, shred -u: the operands are removed afterwards
	fCwdName                    // curl -O: a file named after the URL lands in the working directory
	fHardLink                   // cp -l: the copies are hard links to the sources
	fLookup                     // command -v: the command is only looked up, not run
	fExecWords                  // watch -x: the operands are a command, not a command line
)

// role is what one word given to a program is.
type role uint8

const (
	unset   role = iota
	text         // not a path: a message, a pattern, a number, a name
	operand      // read; without the sandbox taken as written (what we cannot tell)
	read
	write
	remove      // removed as an entry (a link goes, its target stays)
	replace     // mv's destination: an entry replaced, or a directory moved into
	shred       // written through links, then removed as an entry (shred -u)
	writeNoDev  // written; a device file is refused (dd of=)
	code        // program text for an interpreter: never a path, reported as Inline
	script      // a shell command line, analysed in turn (sh -c, trap, flock -c)
	chdirRead   // a directory read; later operands and the command run there (env -C, git -C)
	chdirWrite  // a directory written; later operands are there (tar -C)
	linkTarget  // ln -s target without the sandbox: written, also from the link's directory
	urlArg      // a URL: file:// URLs are paths read
	data        // text, or @FILE read (curl -d @file, -F name=@file)
	alias       // NAME=VALUE whose VALUE is a command line
	replaceStr  // xargs -I: the string standing for each input
	exec        // find -exec: a command up to ";" or "+"
	execDir     // find -execdir: the same, run in each found file's directory
	command     // this operand and the rest: a command (wrappers)
	scriptWords // this operand and the rest, joined: a command line (eval, watch)
	testExpr    // the operands of test and [: operands of file operators are read
	chdir       // cd, pushd: the directory the rest of the command line runs in
	lostDir     // popd: the directory becomes unknown
)

// accesses is what a role does to the path in a word.
func (r role) accesses(strict bool) []toolargs.Access {
	switch r {
	case operand:
		if strict {
			return []toolargs.Access{toolargs.Write}
		}
		return []toolargs.Access{toolargs.Read}
	case read, chdirRead, urlArg, data:
		return []toolargs.Access{toolargs.Read}
	case write, writeNoDev, chdirWrite, linkTarget:
		return []toolargs.Access{toolargs.Write}
	case remove:
		return []toolargs.Access{toolargs.Delete}
	case replace, shred:
		return []toolargs.Access{toolargs.Delete, toolargs.Write}
	}
	return nil
}

// lists reports whether a role takes the remaining operands as a whole.
func (r role) lists() bool { return r >= command }

// entry is a program with its options indexed by spelling.
type entry struct {
	*program
	byName map[string]*opt
	passes bool // some operands are a command it runs: they are passed on as they are
	lead   int  // operands before that command: options may still come among them
}

// catalog indexes the table by name; it is built once and never changed.
var catalog = indexPrograms(programs)

// defaults are the options every program is taken to have unless it says otherwise.
var defaults = indexOpts([]opt{{names: "-o --output --output-file --outfile", values: []role{write}}})

func indexPrograms(ps []program) map[string]*entry {
	m := map[string]*entry{}
	for i := range ps {
		e := &entry{program: &ps[i], byName: indexOpts(ps[i].opts)}
		for _, l := range ps[i].layouts {
			if l.rest == command || l.rest == scriptWords {
				e.passes, e.lead = true, len(l.lead)
			}
		}
		for _, n := range ps[i].names {
			m[n] = e
		}
	}
	return m
}

func indexOpts(os []opt) map[string]*opt {
	m := map[string]*opt{}
	for i := range os {
		for n := range strings.FieldsSeq(os[i].names) {
			m[n] = &os[i]
		}
	}
	return m
}

// unknown is what the analysis assumes of a program it does not know.
var unknown = &entry{program: &program{}, byName: map[string]*opt{}}

// lookup finds a program by the base name it was called by; nil if unknown.
func lookup(base string) *entry {
	if e := catalog[base]; e != nil {
		return e
	}
	if stem := strings.TrimRight(base, "0123456789.-"); stem != base {
		if e := catalog[stem]; e != nil && e.versioned {
			return e
		}
	}
	if i := strings.IndexByte(base, '.'); i > 0 {
		return catalog[base[:i]+".*"]
	}
	return nil
}

func baseName(name string) string { return path.Base(name) }

// opt finds an option by spelling, the program's own first.
func (e *entry) opt(name string) *opt {
	if o := e.byName[name]; o != nil {
		return o
	}
	return defaults[name]
}

// layout is the layout for the flags given.
func (e *entry) layout(f flag) layout {
	for _, l := range e.layouts {
		if l.when&f == l.when && l.unless&f == 0 {
			return l
		}
	}
	return layout{rest: operand}
}
