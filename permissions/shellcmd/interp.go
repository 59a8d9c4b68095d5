package shellcmd

import (
	"cmp"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// command analyses one simple command given as words: its name, then what the table says of
// its arguments.
func (a *analyzer) command(words []word, st *shellState, simple bool, depth int) error {
	a.Commands = append(a.Commands, commandText(words))
	name := words[0]
	switch {
	case name.stands != "":
		a.Dynamic = append(a.Dynamic, name.stands)
		return nil
	case name.dynamic:
		return nil // the program itself is hidden: the walk recorded the expansion
	case name.glob:
		// The shell would run whatever the pattern matches (su[d]o is sudo): not judgeable.
		return fmt.Errorf("%w: the command name %q is a glob pattern", ErrDangerous, name.s)
	}
	base := baseName(name.s)
	e := lookup(base)
	if e != nil && e.refuse != "" {
		return fmt.Errorf("%w: %q is refused whatever the permissions: it %s", ErrDangerous, base, e.refuse)
	}
	if strings.Contains(name.s, "/") && !strings.HasPrefix(name.s, "/") {
		// A relative program path is a file in the directory.
		if err := a.candidate("program", name, toolargs.Read, st); err != nil {
			return err
		}
	}
	args := words[1:]
	if len(args) > 0 && !args[0].dynamic {
		if sub := catalog[base+" "+args[0].s]; sub != nil {
			e, base, args = sub, base+" "+args[0].s, args[1:]
		}
	}
	if e == nil {
		e = unknown
	}
	c := &call{a: a, e: e, name: base, st: st, opSt: st, simple: simple, depth: depth}
	return c.run(args)
}

// commandText is a program run as its words; a word standing for paths the text does not show
// is written as what it stands for, in angle brackets.
func commandText(words []word) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w.s
		if w.stands != "" {
			parts[i] = "<" + w.stands + ">"
		}
	}
	return strings.Join(parts, " ")
}

// call is one run of a program: what the table says of it, where it runs.
type call struct {
	a      *analyzer
	e      *entry
	name   string      // as called (base name, with its subcommand)
	st     *shellState // where its option values are
	opSt   *shellState // where its operands and the command it runs are (after -C DIR)
	simple bool        // a cd here changes the directory of what follows
	depth  int
}

func (c *call) run(args []word) error {
	if c.e.passes {
		if err := refusedWithin(c.name, args); err != nil {
			return err
		}
	}
	p := c.e.parse(args)
	if c.a.strict {
		p.flags |= fStrict
	}
	c.stdinProgram(p, args)
	for _, v := range p.values {
		if err := c.value(p, v); err != nil {
			return err
		}
	}
	l := c.e.layout(p.flags)
	if err := c.refuseRoot(p); err != nil {
		return err
	}
	if err := c.operands(p, l); err != nil {
		return err
	}
	if l.cwd != unset {
		return c.emit(c.name+" (writes in the working directory)", word{s: "."}, l.cwd, c.opSt)
	}
	return nil
}

// refusedWithin refuses a wrapper whose words name a refused program (env sudo, xargs chmod).
func refusedWithin(name string, args []word) error {
	for _, w := range args {
		if !w.dynamic && IsDangerousName(w.s) {
			return fmt.Errorf("%w: %q (run through %s) is refused whatever the permissions", ErrDangerous, baseName(w.s), name)
		}
	}
	return nil
}

// stdinProgram reports interpreters that read program text from stdin or from an expansion.
func (c *call) stdinProgram(p *parsed, args []word) {
	if c.e.stdin == "" || versionOnly(args) {
		return
	}
	fromStdin := p.flags&fFromStdin != 0 ||
		p.flags&fProgram == 0 && (len(p.operands) == 0 || p.operands[0].s == "-" && !p.operands[0].dynamic)
	switch {
	case fromStdin:
		c.a.Inline = append(c.a.Inline, c.name+" "+c.e.stdin)
	case p.flags&fProgram == 0 && p.operands[0].dynamic:
		c.a.Inline = append(c.a.Inline, c.name+" with an expanded argument")
	}
}

// versionOnly: the arguments only ask for a version or help (python3 --version).
func versionOnly(args []word) bool {
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

// value records one option value.
func (c *call) value(p *parsed, v value) error {
	arg := c.name + " " + v.opt
	switch v.role {
	case exec, execDir:
		return c.findExec(v)
	case chdirRead, chdirWrite:
		return c.chdirTo(arg, v.w, v.role)
	case replaceStr:
		return nil // used by the command it runs
	}
	r := v.role
	if r == write && v.o != nil && p.flags&v.o.readWhen != 0 {
		r = read
	}
	return c.emit(arg, v.w, r, c.st)
}

// chdirTo records a directory the operands (and the command run) are relative to.
func (c *call) chdirTo(arg string, w word, r role) error {
	if w.dynamic {
		c.opSt = &shellState{why: arg + " with an expanded directory"}
		return nil
	}
	n := len(c.a.Paths)
	if err := c.emit(arg, w, r, c.opSt); err != nil {
		return err
	}
	if dir, ok := c.a.lastPath(n); ok {
		c.opSt = knownDir(dir)
	} else {
		c.opSt = &shellState{why: arg}
	}
	return nil
}

// refuseRoot refuses removing / or everything directly under it (rm -r /, rm -rf /*).
func (c *call) refuseRoot(p *parsed) error {
	if c.e.refuseRoot == 0 || p.flags&c.e.refuseRoot == 0 {
		return nil
	}
	for _, o := range p.operands {
		if cl := path.Clean(o.s); !o.dynamic && (cl == "/" || o.glob && path.Dir(cl) == "/") {
			return fmt.Errorf("%w: %s -r %s", ErrDangerous, c.name, o.s)
		}
	}
	return nil
}

// operands records the operands by the layout's roles.
func (c *call) operands(p *parsed, l layout) error {
	ops := p.operands
	if c.e.settings {
		for len(ops) > 0 && !ops[0].dynamic && strings.Contains(ops[0].s, "=") {
			ops = ops[1:] // NAME=VALUE
		}
	}
	if len(ops) == 0 && l.empty != unset {
		if l.empty.lists() {
			return c.list(p, l.empty, nil)
		}
		return c.emit(c.name+" (the working directory)", word{s: "."}, l.empty, c.opSt)
	}
	for _, r := range l.lead {
		if len(ops) == 0 {
			return nil
		}
		if err := c.operand(ops[0], r, nil); err != nil {
			return err
		}
		ops = ops[1:]
	}
	if l.rest.lists() {
		return c.list(p, l.rest, ops)
	}
	return c.sources(p, l, ops)
}

// sources records operands that may end with a destination (cp, mv, ln): when the command line
// shows the destination is a directory, what lands in it is judged too.
func (c *call) sources(p *parsed, l layout, ops []word) error {
	var last *word
	if l.last != unset && len(ops) > 0 {
		last, ops = &ops[len(ops)-1], ops[:len(ops)-1]
	}
	dir := destDir(p, last, len(ops))
	if l.into == unset {
		dir = nil
	}
	rest, links := cmp.Or(l.rest, operand), linkDir(dir, last)
	for _, o := range ops {
		if err := c.operand(o, rest, links); err != nil {
			return err
		}
		if dir != nil {
			in := o // what stands for unknown paths still does
			if o.stands == "" {
				in = part(o, strings.TrimSuffix(*dir, "/")+"/"+path.Base(o.s))
			}
			if err := c.emit(c.name+" operand (in the destination)", in, l.into, c.opSt); err != nil {
				return err
			}
		}
	}
	switch {
	case last == nil:
		return nil
	case dir != nil:
		return c.operand(*last, write, nil) // a directory moved or copied into
	}
	return c.operand(*last, l.last, nil)
}

// destDir is the directory the sources go into when the command line shows there is one: the
// value of -t, or a last operand ending in / (or . or ..) or following several sources. A
// single destination without a slash may be a directory as well, which the text cannot show.
func destDir(p *parsed, last *word, sources int) *string {
	for _, v := range p.values {
		if v.o != nil && v.o.sets&fTargetDir != 0 && !v.w.dynamic {
			return &v.w.s
		}
	}
	if last == nil || last.dynamic || p.flags&fNoTarget != 0 {
		return nil
	}
	s := last.s
	if sources > 1 || strings.HasSuffix(s, "/") || path.Base(s) == "." || path.Base(s) == ".." {
		return &s
	}
	return nil
}

// linkDir is the directory symbolic links are made in: the destination directory, or the last
// operand's.
func linkDir(dir *string, last *word) *string {
	if dir != nil || last == nil {
		return dir
	}
	d := path.Dir(last.s)
	return &d
}

// operand records one operand.
func (c *call) operand(w word, r role, linkDir *string) error {
	if c.e.keyed != nil && !w.dynamic {
		if k, v, ok := strings.Cut(w.s, "="); ok {
			return c.emit(c.name+" "+k, part(w, v), c.e.keyed[k], c.opSt)
		}
	}
	switch r {
	case code:
		return c.emit(c.name+" program text", w, r, c.opSt)
	case linkTarget:
		return c.linkTarget(w, linkDir)
	}
	return c.emit(c.name+" operand", w, r, c.opSt)
}

// linkTarget records the target of a symbolic link made without the sandbox: a later word of
// the same command line (echo x > link) is judged before the link exists, so what the link
// leads to must be writable already, and a relative target is relative to the link's directory.
func (c *call) linkTarget(w word, dir *string) error {
	if err := c.emit(c.name+" operand", w, write, c.opSt); err != nil {
		return err
	}
	if w.dynamic || dir == nil || *dir == "." || strings.HasPrefix(w.s, "/") || strings.HasPrefix(w.s, "~") {
		return nil
	}
	return c.emit(c.name+" -s target (from the link's directory)", part(w, strings.TrimSuffix(*dir, "/")+"/"+w.s), write, c.opSt)
}

// list records the remaining operands when they are read as a whole.
func (c *call) list(p *parsed, r role, ops []word) error {
	switch r {
	case command:
		return c.inner(p, ops)
	case scriptWords:
		parts := make([]string, 0, len(ops))
		for _, w := range ops {
			if w.dynamic || w.stands != "" {
				return nil // the walk recorded the expansion
			}
			parts = append(parts, w.s)
		}
		return c.a.analyzeIn(strings.Join(parts, " "), c.opSt, c.depth+1)
	case testExpr:
		return c.testExpr(ops)
	case chdir:
		return c.cd(ops)
	}
	c.st.known, c.st.why = false, c.name // lostDir
	return nil
}

// inner analyses the command a wrapper runs; xargs adds what it reads from stdin.
func (c *call) inner(p *parsed, ops []word) error {
	if len(ops) == 0 {
		return nil
	}
	if c.e.stdinArgs != "" {
		ops = c.stdinArgs(p, ops)
	}
	return c.a.command(ops, c.opSt, false, c.depth)
}

// stdinArgs marks where a command gets words from stdin: the words holding xargs -I's string,
// else after its own words.
func (c *call) stdinArgs(p *parsed, ops []word) []word {
	stands := word{stands: c.e.stdinArgs}
	for _, v := range p.values {
		if v.role != replaceStr {
			continue
		}
		rs := v.w.s
		if rs == "" {
			rs = "{}"
		}
		out := make([]word, len(ops))
		for i, w := range ops {
			out[i] = w
			if strings.Contains(w.s, rs) {
				out[i] = stands
			}
		}
		return out
	}
	return append(ops[:len(ops):len(ops)], stands)
}

// findExec analyses the command find -exec runs: {} stands for each path found.
func (c *call) findExec(v value) error {
	ws := make([]word, 0, len(v.words))
	for _, w := range v.words {
		if strings.Contains(w.s, "{}") {
			w = word{stands: "the paths find " + v.opt + " passes on"}
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		return nil
	}
	st := c.opSt
	if v.role == execDir {
		// Runs in each found file's directory: relative words cannot be placed.
		st = &shellState{why: "find " + v.opt}
	}
	return c.a.command(ws, st, false, c.depth)
}

// testUnary are the operators of test and [ whose operand is a file.
var testUnary = map[string]bool{
	"-a": true, "-b": true, "-c": true, "-d": true, "-e": true, "-f": true, "-g": true, "-G": true,
	"-h": true, "-k": true, "-L": true, "-N": true, "-O": true, "-p": true, "-r": true, "-s": true,
	"-S": true, "-u": true, "-w": true, "-x": true,
}

// testExpr records the files a test expression looks at; other words are strings.
func (c *call) testExpr(ops []word) error {
	for i, w := range ops {
		var files []word
		switch {
		case testUnary[w.s] && i+1 < len(ops):
			files = ops[i+1 : i+2]
		case (w.s == "-nt" || w.s == "-ot" || w.s == "-ef") && i > 0 && i+1 < len(ops):
			files = []word{ops[i-1], ops[i+1]}
		}
		for _, f := range files {
			if err := c.emit(c.name+" "+w.s, f, read, c.opSt); err != nil {
				return err
			}
		}
	}
	return nil
}

// cd follows the directory of the shell: later relative words are relative to it, as long as
// the cd surely ran before them.
func (c *call) cd(ops []word) error {
	target := word{s: "~", tilde: true}
	if len(ops) > 0 {
		target = ops[0]
	}
	switch {
	case target.dynamic:
		c.st.known, c.st.why = false, c.name+" to an expanded directory"
		return nil
	case target.s == "-" || strings.HasPrefix(target.s, "+"):
		c.st.known, c.st.why = false, c.name+" "+target.s
		return nil
	}
	n := len(c.a.Paths)
	if err := c.a.candidate(c.name, target, toolargs.Read, c.st); err != nil {
		return err
	}
	if !c.simple {
		c.st.known, c.st.why = false, "a "+c.name+" inside a pipeline, condition or subshell"
		return nil
	}
	if dir, ok := c.a.lastPath(n); ok {
		c.st.dir, c.st.known = dir, true
	}
	return nil
}

// emit records a word by its role.
func (c *call) emit(arg string, w word, r role, st *shellState) error {
	if w.stands != "" {
		c.placeholder(w, r)
		return nil
	}
	if w.dynamic {
		return nil // the walk recorded the expansion
	}
	switch r {
	case code:
		c.a.Inline = append(c.a.Inline, arg)
		return nil
	case script:
		return c.a.analyzeIn(w.s, st, c.depth+1)
	case alias:
		if _, v, ok := strings.Cut(w.s, "="); ok {
			return c.a.analyzeIn(v, st, c.depth+1)
		}
		return nil
	case urlArg:
		return c.fileURL(arg, w, st)
	case data:
		return c.dataFile(arg, w, st)
	case writeNoDev:
		if isDevice(w.s) {
			return fmt.Errorf("%w: %s=%s writes a device", ErrDangerous, arg, w.s)
		}
	}
	for _, acc := range r.accesses(c.a.strict) {
		if err := c.a.candidate(arg, w, acc, st); err != nil {
			return err
		}
	}
	return nil
}

// placeholder records a word that stands for paths the text does not show: reading them is
// judged with the words they come from; anything else hides what is changed.
func (c *call) placeholder(w word, r role) {
	for _, acc := range r.accesses(c.a.strict) {
		if acc != toolargs.Read {
			c.a.Dynamic = append(c.a.Dynamic, w.stands)
			return
		}
	}
	if r == code || r == script || r == scriptWords || r == alias {
		c.a.Dynamic = append(c.a.Dynamic, w.stands)
	}
}

// fileURL records the path of a file:// URL; other URLs are not paths.
func (c *call) fileURL(arg string, w word, st *shellState) error {
	if len(w.s) < 5 || !strings.EqualFold(w.s[:5], "file:") {
		return nil
	}
	u, err := url.Parse(w.s)
	if err != nil || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")) || u.Path == "" {
		return fmt.Errorf("cannot check the file URL %q", w.s)
	}
	return c.a.candidate(arg, part(w, u.Path), toolargs.Read, st)
}

// dataFile records the file of a @FILE or NAME=@FILE / NAME=<FILE value (curl -d, -F).
func (c *call) dataFile(arg string, w word, st *shellState) error {
	s := w.s
	switch {
	case strings.HasPrefix(s, "@"):
		s = s[1:]
	case strings.Contains(s, "=@"):
		s = s[strings.Index(s, "=@")+2:]
	case strings.Contains(s, "=<"):
		s = s[strings.Index(s, "=<")+2:]
	default:
		return nil
	}
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i] // ;type=... follows the file name
	}
	if s == "-" {
		return nil
	}
	return c.a.candidate(arg, part(w, s), toolargs.Read, st)
}
