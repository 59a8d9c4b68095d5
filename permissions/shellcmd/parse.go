package shellcmd

import "strings"

// parsed is a program's arguments sorted out by its table entry.
type parsed struct {
	flags    flag
	values   []value
	operands []word
	ended    bool // after "--": every word is an operand
	stopped  bool // the program's options are over: what follows is for what it runs
}

// value is one word given to an option, and what it is.
type value struct {
	opt   string // the option as spelled
	o     *opt   // nil: an option the table does not know, its value guessed
	w     word
	role  role
	words []word // exec, execDir: the command find runs
}

// parse sorts args into options (with their values) and operands as the program would.
func (e *entry) parse(args []word) *parsed {
	p := &parsed{}
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case i == 0 && e.bundled && !w.dynamic && w.stands == "" && w.s != "" && w.s[0] != '-':
			i = p.cluster(e, args, i, "-"+w.s, true)
		case p.ended || w.dynamic || w.stands != "" || !isOption(w.s) || e.raw || p.stopped && e.passes:
			p.operands = append(p.operands, w)
			p.stopped = p.stopped || e.posix && len(p.operands) > e.lead
		case w.s == "--":
			p.ended = true
		case p.stopped:
			p.guess(w) // an option of the script's: any path it carries still counts
		default:
			i = p.option(e, args, i)
		}
	}
	return p
}

func isOption(s string) bool { return len(s) > 1 && s[0] == '-' }

// option reads the option at args[i] and its values; it returns the index of the last word used.
func (p *parsed) option(e *entry, args []word, i int) int {
	w := args[i]
	name := e.fold(w.s)
	if o := e.opt(name); o != nil {
		return p.take(o, w.s, nil, args, i)
	}
	if n, v, ok := strings.Cut(name, "="); ok {
		if o := e.opt(n); o != nil {
			att := part(w, v)
			return p.take(o, n, &att, args, i)
		}
	}
	if strings.HasPrefix(w.s, "--") {
		p.guess(w)
		return i
	}
	return p.cluster(e, args, i, w.s, false)
}

// cluster reads a cluster of short options (-rf, -ofile, -xzf a.tar). follow: values are the
// next words, not the rest of the cluster (tar's first word: tar cf a.tar).
func (p *parsed) cluster(e *entry, args []word, i int, s string, follow bool) int {
	for j := 1; j < len(s); j++ {
		name := "-" + s[j:j+1]
		o := e.opt(name)
		switch {
		case o == nil && (follow || e.letters):
			continue // an option we do not know, taken as a flag
		case o == nil:
			p.guess(args[i])
			return i
		case len(o.values) == 0:
			p.flags |= o.sets
			p.stopped = p.stopped || o.ends
		case follow:
			i = p.take(o, name, nil, args, i)
		case j+1 < len(s) || o.attached:
			att := part(args[i], s[j+1:])
			return p.take(o, name, &att, args, i)
		default:
			return p.take(o, name, nil, args, i)
		}
	}
	return i
}

// take records option o and the values it takes: att (attached to it) first, then the words
// after args[i]. It returns the index of the last word used.
func (p *parsed) take(o *opt, spelled string, att *word, args []word, i int) int {
	p.stopped = p.stopped || o.ends
	if o.attached {
		v := word{}
		if att != nil {
			v = *att
		}
		p.values = append(p.values, value{opt: spelled, o: o, w: v, role: o.values[0]})
		p.setIf(o, v)
		return i
	}
	var first word
	for k, r := range o.values {
		v := value{opt: spelled, o: o, role: r}
		switch {
		case k == 0 && att != nil:
			v.w = *att
		case r == exec || r == execDir:
			v.words, i = until(args, i+1)
		case i+1 < len(args):
			i++
			v.w = args[i]
		default:
			return i // the value is missing: the program will refuse the call
		}
		if k == 0 {
			first = v.w
		}
		p.values = append(p.values, v)
	}
	p.setIf(o, first)
	return i
}

// setIf switches on what o sets, if its value (when one is asked for) fits.
func (p *parsed) setIf(o *opt, v word) {
	if o.ifValue == "" || strings.HasPrefix(v.s, o.ifValue) {
		p.flags |= o.sets
	}
}

// until returns the words from i up to a ";" or "+" word, and the index of that word.
func until(args []word, i int) ([]word, int) {
	start := i
	for ; i < len(args); i++ {
		if args[i].s == ";" || args[i].s == "+" {
			return args[start:i], i
		}
	}
	return args[start:], i - 1
}

// guess records the path an option the table does not know may carry attached: --config=/x,
// -I../include, -o/out. Every such value counts: a bare name may be a symlink leading out.
func (p *parsed) guess(w word) {
	if v, ok := attachedValue(w); ok {
		p.values = append(p.values, value{opt: w.s, w: v, role: read})
	}
}

// attachedValue extracts a path-looking value from an option word: --out=/x, -o/x, -I../inc.
func attachedValue(w word) (word, bool) {
	s := w.s
	if i := strings.IndexByte(s, '='); i >= 0 {
		return part(w, s[i+1:]), i+1 < len(s)
	}
	t := strings.TrimLeft(s, "-")
	for i, r := range t {
		if r == '/' || r == '.' || r == '~' {
			return part(w, t[i:]), true
		}
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			break
		}
	}
	return word{}, false
}

// part is a piece of word w as a word of its own.
func part(w word, s string) word {
	return word{s: s, glob: w.glob, tilde: strings.HasPrefix(s, "~"), dynamic: w.dynamic}
}

// fold spells an option as the program compares it (PowerShell ignores case).
func (e *entry) fold(s string) string {
	if e.caseless {
		return strings.ToLower(s)
	}
	return s
}
