package display

import (
	"strings"

	"github.com/mattn/go-runewidth"

	"github.com/massgen-go/massgen/internal/termtext"
)

// ColorEnabled says whether to colour what goes to a stream: only a terminal, and not when the
// user set NO_COLOR (https://no-color.org: any non-empty value) or TERM=dumb. lookupEnv nil
// means no variable is set.
func ColorEnabled(terminal bool, lookupEnv func(string) (string, bool)) bool {
	if !terminal {
		return false
	}
	if lookupEnv != nil {
		if v, _ := lookupEnv("NO_COLOR"); v != "" {
			return false
		}
		if v, _ := lookupEnv("TERM"); v == "dumb" {
			return false
		}
	}
	return true
}

// Style is how reports are printed.
type Style struct {
	Color bool // SGR colours (see ColorEnabled)
	// Width, when not 0, cuts the tally's and the timeline's lines to that many columns ("…").
	Width int
}

// SGR parameters used by the displays.
const (
	sgrNone    = ""
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrBlue    = "34"
	sgrMagenta = "35"
	sgrCyan    = "36"
	sgrWinner  = "1;32"
)

// span is a piece of a line in one style. Its text may come from a model: render cleans it.
type span struct {
	text, sgr string
}

// line is a line of the display made of spans.
type line []span

func (l line) add(text, sgr string) line { return append(l, span{text, sgr}) }

// render prints the line cleaned for the terminal (termtext.Line), cut to width columns
// (0: no limit) so it never wraps, with colours when color is set. Colours are added after
// cleaning and cutting, so no model text can add or break an escape sequence.
func (l line) render(width int, color bool) string {
	var b strings.Builder
	used := 0
	for _, sp := range l {
		text := termtext.Line(sp.text)
		w := runewidth.StringWidth(text)
		cut := false
		if width > 0 && used+w > width {
			text = ""
			if room := width - used; room > 1 {
				text = runewidth.Truncate(termtext.Line(sp.text), room, "…")
			}
			w = runewidth.StringWidth(text)
			cut = true
		}
		if text != "" {
			if color && sp.sgr != sgrNone {
				b.WriteString("\x1b[" + sp.sgr + "m" + text + "\x1b[0m")
			} else {
				b.WriteString(text)
			}
		}
		used += w
		if cut {
			break
		}
	}
	return b.String()
}

// plainText is the line without colours or width limit (tests, width computations).
func (l line) plainText() string { return l.render(0, false) }
