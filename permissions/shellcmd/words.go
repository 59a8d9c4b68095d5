package shellcmd

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// word is one command word after quote removal and brace expansion.
type word struct {
	s       string
	dynamic bool // holds an expansion: its value is unknown
	glob    bool // unquoted pattern characters that bash would expand
	tilde   bool // starts with an unquoted ~
	// stands, when set, marks a word that stands for paths the text does not show (the {} of
	// find -exec, what xargs reads from stdin): what it stands for.
	stands string
}

// appendWords appends the words brace expansion makes of w to out, counting them against the
// command's word budget before expanding: too many is ErrTooLarge, never a long wait.
func (a *analyzer) appendWords(out []word, w *syntax.Word) ([]word, error) {
	if !hasBraceChars(w) {
		if a.nwords++; a.nwords > MaxWords {
			return nil, tooManyWords()
		}
		return append(out, literalWord(w)), nil
	}
	// SplitBraces rewrites the word in place; work on a copy so callers see the original.
	cp := *w
	cp.Parts = append([]syntax.WordPart(nil), w.Parts...)
	if syntax.SplitBraces(&cp) {
		w = &cp
	}
	if a.nwords+braceCount(w.Parts, MaxWords+1) > MaxWords {
		return nil, tooManyWords()
	}
	for bw, err := range expand.BracesSeq(nil, w) {
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrTooLarge, err)
		}
		if a.nwords++; a.nwords > MaxWords {
			return nil, tooManyWords()
		}
		out = append(out, literalWord(bw))
	}
	return out, nil
}

func tooManyWords() error {
	return fmt.Errorf("%w: it expands to more than %d words", ErrTooLarge, MaxWords)
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

// literalWord removes quotes and escapes from a word without expansions of its own.
func literalWord(w *syntax.Word) word {
	var b strings.Builder
	var pat strings.Builder // the word as bash matches it: quoted text cannot be a pattern
	lw := word{}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				lw.tilde = true
			}
			pat.WriteString(p.Value)
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			s := p.Value
			if p.Dollar {
				var err error
				if s, err = expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}}); err != nil {
					lw.dynamic = true
					continue
				}
			}
			b.WriteString(s)
			pat.WriteString(strings.Repeat("x", len(s)))
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					s := unescapeDouble(l.Value)
					b.WriteString(s)
					pat.WriteString(strings.Repeat("x", len(s)))
				} else {
					lw.dynamic = true
				}
			}
		default:
			lw.dynamic = true
		}
	}
	lw.s = b.String()
	lw.glob = isPattern(pat.String())
	if !lw.tilde && strings.HasPrefix(lw.s, "~") {
		// A quoted ~ is a file name, not the home directory.
		lw.s = "./" + lw.s
	}
	return lw
}

// isPattern reports whether bash would expand an unquoted word as a pattern: an unescaped * or
// ?, or a [ closed by a later ] (a lone [ as in "[ -f x ]" is an ordinary character).
func isPattern(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if closesBracket(s[i+1:]) {
				return true
			}
		}
	}
	return false
}

// closesBracket reports whether s (what follows a "[") ends a bracket expression: a "]" that is
// not its first member.
func closesBracket(s string) bool {
	j := 0
	if j < len(s) && (s[j] == '!' || s[j] == '^') {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++ // a leading ] is a member
	}
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case ']':
			return true
		}
	}
	return false
}

// unescape removes the backslashes bash removes: before any character outside quotes, before
// $ ` " \ and newline inside double quotes (escaped is the set, nil for any). A backslash and
// newline join lines.
func unescape(s string, escaped func(byte) bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (escaped == nil || escaped(s[i+1])) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeUnquoted(s string) string { return unescape(s, nil) }

func unescapeDouble(s string) string {
	return unescape(s, func(c byte) bool { return strings.IndexByte("$`\"\\\n", c) >= 0 })
}
