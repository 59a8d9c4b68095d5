package app

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mattn/go-runewidth"
)

// The end summary fits in 80 columns (or the terminal, when narrower): paths under the current
// directory are shown relative to it, a line still too wide is wrapped at spaces (a path that
// ends it goes to a line of its own), and a word wider than a line is cut in the middle. The
// tally and the timeline are drawn to the width by display (Style.Width).

// maxSummaryWidth is the widest line of the end summary.
const maxSummaryWidth = 80

// summaryWidth is the summary's width for a terminal term columns wide (0: unknown).
func summaryWidth(term int) int {
	if term > 0 && term < maxSummaryWidth {
		return term
	}
	return maxSummaryWidth
}

// fitSummary fits every line of s to width columns (see above); lines holding escape
// sequences (colours) are left as display drew them.
func fitSummary(s, wd string, width int) string {
	trailing := strings.HasSuffix(s, "\n")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var out []string
	for _, l := range lines {
		if strings.ContainsRune(l, '\x1b') {
			out = append(out, l)
			continue
		}
		out = append(out, wrapLine(relativePaths(l, wd), width)...)
	}
	r := strings.Join(out, "\n")
	if trailing {
		r += "\n"
	}
	return r
}

// relativePaths shows every word of l that is a path under wd relative to wd.
func relativePaths(l, wd string) string {
	if wd == "" {
		return l
	}
	prefix := strings.TrimSuffix(wd, string(os.PathSeparator)) + string(os.PathSeparator)
	words := strings.Split(l, " ")
	for i, w := range words {
		switch {
		case w == wd:
			words[i] = "."
		case strings.HasPrefix(w, prefix) && len(w) > len(prefix):
			words[i] = filepath.Clean(w[len(prefix):])
			if strings.HasSuffix(w, string(os.PathSeparator)) {
				words[i] += string(os.PathSeparator)
			}
		}
	}
	return strings.Join(words, " ")
}

// wrapLine wraps l at spaces into lines of at most width columns; the lines after the first
// are indented two columns deeper than l.
func wrapLine(l string, width int) []string {
	if runewidth.StringWidth(l) <= width {
		return []string{l}
	}
	body := strings.TrimLeft(l, " ")
	indent := strings.Repeat(" ", len(l)-len(body))
	cont := indent + "  "
	var out []string
	cur := indent
	empty := true // cur holds no word yet
	for _, w := range strings.Fields(body) {
		room := width - runewidth.StringWidth(cur)
		if !empty {
			room-- // the space before w
		}
		if runewidth.StringWidth(w) <= room {
			if !empty {
				cur += " "
			}
			cur, empty = cur+w, false
			continue
		}
		if !empty {
			out = append(out, cur)
			cur, empty = cont, true
			room = width - runewidth.StringWidth(cur)
		}
		cur, empty = cur+cutMiddle(w, room), false
	}
	return append(out, cur)
}

// cutMiddle cuts w to width columns by replacing its middle with "…" (a path keeps its root and
// its file name).
func cutMiddle(w string, width int) string {
	if runewidth.StringWidth(w) <= width {
		return w
	}
	if width < 3 {
		return runewidth.Truncate(w, max(width, 1), "")
	}
	r := []rune(w)
	headW := (width - 1) / 3
	tailW := width - 1 - headW
	head := runewidth.Truncate(w, headW, "")
	tail := ""
	for i := len(r) - 1; i >= 0; i-- {
		next := string(r[i]) + tail
		if runewidth.StringWidth(next) > tailW {
			break
		}
		tail = next
	}
	return head + "…" + tail
}
