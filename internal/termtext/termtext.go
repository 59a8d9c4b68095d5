// Package termtext is the one sanitiser for text massgen shows a person: anything an agent, a
// model, an MCP server or a file could have shaped (file names, answers, tool results, error
// text, diff lines) passes through it before it reaches a terminal, so no such text can send the
// terminal an escape sequence, move the cursor, retitle the window, reorder what is shown or hide
// characters.
//
// What is escaped, and how (docs/output.md):
//
//   - C0 controls (U+0000-U+001F), DEL (U+007F) and C1 controls (U+0080-U+009F, CSI U+009B among
//     them): \t, \n, \r for tab, line feed and carriage return, \xHH for the others (ESC is \x1b,
//     BEL \x07, U+009B is \u009b);
//   - invisible format characters (Unicode category Cf: bidi embeddings, overrides and isolates,
//     zero-width space, word joiner, byte order mark, soft hyphen, tag characters, ...) and the
//     line and paragraph separators U+2028, U+2029: \uHHHH (\UHHHHHHHH past U+FFFF). Zero-width
//     joiner and non-joiner (U+200D, U+200C) stay: emoji sequences and several scripts need them,
//     and they cannot drive a terminal;
//   - bytes that are not UTF-8: \xHH (a raw 0x9B byte is CSI to a terminal in an 8-bit mode).
//
// A backslash is not escaped, so a name that holds the four characters \x1b reads like one that
// holds ESC; the exact text is in --output json and the JSON files. Everything else (printable
// text in any script, emoji, U+FFFD) is left as it is. The output of every function holds none of
// the characters above, and cleaning it again changes nothing.
package termtext

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s safe for one line of a terminal: file names, ids, paths, one-line messages.
// Tabs and line breaks are escaped too (\t, \n, \r), so a name cannot start a line of its own
// or break a table's columns.
func Line(s string) string { return clean(s, false) }

// Text returns multi-line s safe for a terminal: answers, diff and log lines, task text. Line
// feeds and tabs stay, CR LF becomes LF, a lone CR (which would let the rest of a line overwrite
// its beginning) is escaped as \r, and everything else as in Line.
func Text(s string) string { return clean(s, true) }

// Squeeze returns s as one short line: runs of white space, line breaks included, become one
// space, the rest is cleaned as in Line, and the result is cut to at most n characters, ending
// in "…" when cut (n <= 0: no limit). A cut never splits an escape.
func Squeeze(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if !needsCleaning(s, false) && (n <= 0 || utf8.RuneCountInString(s) <= n) {
		return s
	}
	var units []string // one per shown character or escape
	count := 0         // characters in units
	total := 0
	forEach(s, false, func(unit string) { units = append(units, unit); total += utf8.RuneCountInString(unit) })
	if n <= 0 || total <= n {
		return strings.Join(units, "")
	}
	var b strings.Builder
	for _, u := range units {
		w := utf8.RuneCountInString(u)
		if count+w > n-1 {
			break
		}
		b.WriteString(u)
		count += w
	}
	return b.String() + "…"
}

// Hidden reports whether r is shown escaped (see the package comment).
func Hidden(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r < 0x7f:
		return false
	case r == 0x200c, r == 0x200d: // zero-width non-joiner and joiner
		return false
	case r == 0x2028, r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// needsCleaning reports whether clean would change s.
func needsCleaning(s string, multiLine bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(multiLine && (c == '\n' || c == '\t')) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || Hidden(r) {
			return true
		}
		i += size
	}
	return false
}

func clean(s string, multiLine bool) string {
	if !needsCleaning(s, multiLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	forEach(s, multiLine, func(unit string) { b.WriteString(unit) })
	return b.String()
}

// forEach calls emit with s cut into what is shown: each character kept as it is, or its escape.
func forEach(s string, multiLine bool, emit func(string)) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		unit := s[i : i+size]
		switch {
		case r == utf8.RuneError && size == 1:
			unit = hexByte(s[i])
		case multiLine && (r == '\n' || r == '\t'):
		case multiLine && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			unit = "" // CR LF: the LF follows
		case Hidden(r):
			unit = escape(r)
		}
		if unit != "" {
			emit(unit)
		}
		i += size
	}
}

// escape is the visible form of a hidden character.
func escape(r rune) string {
	switch r {
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	}
	switch {
	case r < 0x80:
		return hexByte(byte(r))
	case r <= 0xffff:
		return `\u` + pad(strconv.FormatInt(int64(r), 16), 4)
	}
	return `\U` + pad(strconv.FormatInt(int64(r), 16), 8)
}

func hexByte(c byte) string { return `\x` + pad(strconv.FormatInt(int64(c), 16), 2) }

func pad(s string, n int) string { return strings.Repeat("0", max(0, n-len(s))) + s }

// JSON returns JSON text with every hidden character inside its strings written as a JSON
// escape (\u001b, \u009b, \u202e): the same JSON value, byte for byte after decoding, but
// nothing in it can drive a terminal. Go's encoders escape C0 controls already; C1 controls,
// bidi and other format characters they write raw. Line feeds and tabs (JSON white space) stay;
// a raw CR, which no encoder writes, is escaped like any other control; bytes that are not UTF-8
// become \ufffd (no JSON encoder writes them either).
func JSON(b []byte) []byte {
	if !needsCleaning(string(b), true) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r == '\n' || r == '\t' || !Hidden(r):
			out = append(out, b[i:i+size]...)
		case r > 0xffff: // a surrogate pair, as JSON writes characters past the BMP
			r -= 0x10000
			out = append(out, `\u`+pad(strconv.FormatInt(int64(0xd800+(r>>10)), 16), 4)+`\u`+pad(strconv.FormatInt(int64(0xdc00+(r&0x3ff)), 16), 4)...)
		default:
			out = append(out, `\u`+pad(strconv.FormatInt(int64(r), 16), 4)...)
		}
		i += size
	}
	return out
}

// JSONWriter returns a writer that passes JSON text to w through JSON. A character split
// between two writes is held until its end arrives (encoders write whole values, ending in a
// line feed, so nothing is held after a value).
func JSONWriter(w io.Writer) io.Writer { return &jsonWriter{w: w} }

type jsonWriter struct {
	w    io.Writer
	held []byte // the start of a character cut by the end of the last write
}

func (j *jsonWriter) Write(p []byte) (int, error) {
	data := p
	if len(j.held) > 0 {
		data = append(j.held, p...)
		j.held = nil
	}
	// Hold back an incomplete character at the end (at most 3 bytes of a 4-byte one).
	cut := len(data)
	for k := 1; k <= 3 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				cut = len(data) - k
			}
			break
		}
	}
	j.held = append(j.held, data[cut:]...)
	if _, err := j.w.Write(JSON(data[:cut])); err != nil {
		return 0, err
	}
	return len(p), nil
}
