package seatbelt

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/pathx"
)

// This file is a small interpreter for the part of the profile language the generator writes,
// so tests can ask "is this operation on this path allowed?" the way Seatbelt decides it: the
// last rule whose operation and filters match wins, (deny default) when none does. It parses
// the real profile text and substitutes the real parameters.

// node is an S-expression: a list, a string or a symbol.
type node struct {
	list []node
	str  string
	sym  string
	// isList and isStr tell the kinds apart (an empty list, an empty string).
	isList, isStr bool
}

func parseProfile(t testing.TB, text string) []node {
	t.Helper()
	p := &parser{s: text}
	var out []node
	for {
		p.space()
		if p.i >= len(p.s) {
			return out
		}
		n, err := p.node()
		if err != nil {
			t.Fatalf("profile does not parse at byte %d: %v\n%s", p.i, err, text)
		}
		out = append(out, n)
	}
}

type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ';':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) node() (node, error) {
	p.space()
	if p.i >= len(p.s) {
		return node{}, fmt.Errorf("unexpected end")
	}
	switch c := p.s[p.i]; c {
	case '(':
		p.i++
		n := node{isList: true}
		for {
			p.space()
			if p.i >= len(p.s) {
				return node{}, fmt.Errorf("unclosed list")
			}
			if p.s[p.i] == ')' {
				p.i++
				return n, nil
			}
			c, err := p.node()
			if err != nil {
				return node{}, err
			}
			n.list = append(n.list, c)
		}
	case ')':
		return node{}, fmt.Errorf("unexpected )")
	case '"':
		p.i++
		var b strings.Builder
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				p.i++
			}
			if p.i < len(p.s) {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		}
		if p.i >= len(p.s) {
			return node{}, fmt.Errorf("unclosed string")
		}
		p.i++
		return node{str: b.String(), isStr: true}, nil
	default:
		j := p.i
		for p.i < len(p.s) && !strings.ContainsRune(" \n\t()\";", rune(p.s[p.i])) {
			p.i++
		}
		return node{sym: p.s[j:p.i]}, nil
	}
}

// rule is one (allow|deny operation... filter...).
type rule struct {
	allow   bool
	ops     []string
	filters []node
}

type sandbox struct {
	t      testing.TB
	rules  []rule
	params map[string]string
	used   map[string]bool
	re     map[string]*regexp.Regexp
}

// load parses p and checks its parameters: each defined once.
func load(t testing.TB, p Profile) *sandbox {
	t.Helper()
	sb := &sandbox{t: t, params: map[string]string{}, used: map[string]bool{}, re: map[string]*regexp.Regexp{}}
	for _, pr := range p.Params {
		if _, dup := sb.params[pr.Name]; dup {
			t.Fatalf("parameter %s defined twice", pr.Name)
		}
		sb.params[pr.Name] = pr.Value
	}
	for _, n := range parseProfile(t, p.Text) {
		if !n.isList || len(n.list) == 0 {
			t.Fatalf("top-level form is not a list: %+v", n)
		}
		head := n.list[0].sym
		if head == "version" {
			continue
		}
		if head != "allow" && head != "deny" {
			t.Fatalf("unknown top-level form %q", head)
		}
		r := rule{allow: head == "allow"}
		for _, c := range n.list[1:] {
			if c.isList {
				r.filters = append(r.filters, c)
			} else if c.sym != "" {
				r.ops = append(r.ops, c.sym)
			} else {
				t.Fatalf("a bare string in a rule: %q", c.str)
			}
		}
		if len(r.ops) == 0 {
			t.Fatalf("rule without an operation: %+v", n)
		}
		sb.rules = append(sb.rules, r)
	}
	return sb
}

// allowed decides op on path.
func (sb *sandbox) allowed(op, path string) bool {
	decision, matched := false, false
	for _, r := range sb.rules {
		if !r.matchesOp(op) {
			continue
		}
		if len(r.filters) == 0 {
			decision, matched = r.allow, true
			continue
		}
		for _, f := range r.filters {
			if sb.match(f, path) {
				decision, matched = r.allow, true
				break
			}
		}
	}
	if !matched {
		sb.t.Fatalf("no rule at all for %s %s (not even the default)", op, path)
	}
	return decision
}

func (r rule) matchesOp(op string) bool {
	for _, o := range r.ops {
		if o == "default" || o == op || strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*")) {
			return true
		}
	}
	return false
}

func (sb *sandbox) match(f node, path string) bool {
	if !f.isList || len(f.list) == 0 {
		sb.t.Fatalf("filter is not a list: %+v", f)
	}
	args := f.list[1:]
	switch f.list[0].sym {
	case "literal":
		return path == sb.str(args[0])
	case "subpath":
		return pathx.Within(path, sb.str(args[0]))
	case "path-ancestors":
		return pathx.Within(sb.str(args[0]), path)
	case "regex":
		src := sb.str(args[0])
		re, ok := sb.re[src]
		if !ok {
			var err error
			if re, err = regexp.Compile(src); err != nil {
				sb.t.Fatalf("regex %q: %v", src, err)
			}
			sb.re[src] = re
		}
		return re.MatchString(path)
	case "require-all":
		for _, a := range args {
			if !sb.match(a, path) {
				return false
			}
		}
		return true
	case "require-any":
		for _, a := range args {
			if sb.match(a, path) {
				return true
			}
		}
		return false
	case "require-not":
		return !sb.match(args[0], path)
	case "remote", "local":
		// Network operations are asked as "ip:HOST:PORT" or "unix:PATH".
		switch args[0].sym {
		case "ip":
			target, ok := strings.CutPrefix(path, "ip:")
			pat := sb.str(args[1])
			h, p, _ := strings.Cut(pat, ":")
			th, tp, _ := strings.Cut(target, ":")
			return ok && (h == "*" || h == th) && (p == "*" || p == tp)
		case "unix-socket":
			target, ok := strings.CutPrefix(path, "unix:")
			return ok && sb.match(args[1], target)
		}
		sb.t.Fatalf("unknown network filter %+v", args[0])
	case "socket-domain":
		return path == "socket:"+args[0].sym
	case "sysctl-name", "sysctl-name-prefix", "global-name", "target":
		return false // not about paths
	}
	sb.t.Fatalf("unknown filter %q", f.list[0].sym)
	return false
}

// str evaluates a string expression.
func (sb *sandbox) str(n node) string {
	if n.isStr {
		return n.str
	}
	if !n.isList || len(n.list) == 0 {
		sb.t.Fatalf("not a string expression: %+v", n)
	}
	switch n.list[0].sym {
	case "param":
		name := sb.str(n.list[1])
		v, ok := sb.params[name]
		if !ok {
			sb.t.Fatalf("parameter %s is used but not defined", name)
		}
		sb.used[name] = true
		return v
	case "string-append":
		var b strings.Builder
		for _, a := range n.list[1:] {
			b.WriteString(sb.str(a))
		}
		return b.String()
	case "regex-quote":
		return regexp.QuoteMeta(sb.str(n.list[1]))
	}
	sb.t.Fatalf("unknown string function %q", n.list[0].sym)
	return ""
}

// touchAll evaluates every string expression once, so used lists every parameter referenced.
func (sb *sandbox) touchAll() {
	var walk func(n node)
	walk = func(n node) {
		if !n.isList || len(n.list) == 0 {
			return
		}
		if n.list[0].sym == "param" {
			sb.str(n)
			return
		}
		for _, c := range n.list {
			walk(c)
		}
	}
	for _, r := range sb.rules {
		for _, f := range r.filters {
			walk(f)
		}
	}
}

func TestInterpreter(t *testing.T) {
	sb := load(t, Profile{Text: `(version 1)
(deny default)
; a comment (with parentheses)
(allow file-read* (subpath (param "A")))
(deny file-read-data (require-all (regex (string-append "^" (regex-quote (param "A")) "/x$")) (require-not (literal "/a.b/y"))))`,
		Params: []Param{{"A", "/a.b"}}})
	tests := []struct {
		op, path string
		want     bool
	}{
		{"file-read-data", "/a.b/z", true},
		{"file-read-data", "/a.b/x", false},
		{"file-read-metadata", "/a.b/x", true},
		{"file-read-data", "/aXb/z", false},
		{"file-write-data", "/a.b/z", false},
	}
	for _, tt := range tests {
		if got := sb.allowed(tt.op, tt.path); got != tt.want {
			t.Errorf("%s %s = %v, want %v", tt.op, tt.path, got, tt.want)
		}
	}
}
