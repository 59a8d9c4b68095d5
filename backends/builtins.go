package backends

import (
	"fmt"
	"strings"
)

// Provider built-in tools (web search, code execution) run on the provider's machines, not
// here, so they are outside the permission layer's concern. What they produce reaches the answer
// text the same way on every backend: code and its output in place, as fenced blocks, and the
// sources a reply cites in a list at its end.

// answer is a reply's text being assembled: what is said is kept and streamed at once, so the
// streamed text and the reply's Text are the same.
type answer struct {
	emit func(Event)
	text strings.Builder
}

func (a *answer) say(s string) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	a.emit(Event{Kind: EventTextDelta, Text: s})
}

// sources collects the web pages a reply cites, in order of first mention, without repeats.
type sources struct {
	seen  map[string]bool
	items []source
}

type source struct{ title, url string }

func (s *sources) add(title, url string) {
	url = strings.TrimSpace(url)
	if url == "" {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[url] {
		return
	}
	s.seen[url] = true
	s.items = append(s.items, source{title: oneLine(title), url: oneLine(url)})
}

func (s *sources) empty() bool { return len(s.items) == 0 }

// render is the list appended to the answer ("" when there are no sources).
func (s *sources) render() string {
	if s.empty() {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nSources:\n")
	for i, it := range s.items {
		if it.title != "" && it.title != it.url {
			fmt.Fprintf(&b, "%d. %s - %s\n", i+1, it.title, it.url)
		} else {
			fmt.Fprintf(&b, "%d. %s\n", i+1, it.url)
		}
	}
	return b.String()
}

// renderCode is code the provider ran, as it appears in the answer.
func renderCode(lang, code string) string {
	code = strings.TrimRight(code, "\n")
	if code == "" {
		return ""
	}
	return "\n\n```" + strings.ToLower(lang) + "\n" + code + "\n```\n"
}

// renderCodeOutput is the output of code the provider ran, as it appears in the answer.
// failure is set when the run failed (an exit code, an error outcome).
func renderCodeOutput(stdout, stderr, failure string) string {
	var b strings.Builder
	b.WriteString("\n\nCode execution output")
	if failure != "" {
		b.WriteString(" (" + failure + ")")
	}
	b.WriteString(":\n```\n")
	out := strings.TrimRight(stdout, "\n")
	if e := strings.TrimRight(stderr, "\n"); e != "" {
		if out != "" {
			out += "\n"
		}
		out += e
	}
	if out == "" {
		out = "(no output)"
	}
	b.WriteString(out)
	b.WriteString("\n```\n")
	return b.String()
}
