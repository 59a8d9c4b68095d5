package display

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
)

// Outcome is what the end-of-run report (vote tally and timeline) is drawn from: a run's
// Result (OutcomeOf) or a turn stored in a session.
type Outcome struct {
	Winner string
	// Votes are the counted votes: voter -> voted-for agent (real ids).
	Votes map[string]string
	// Answered are the agents with an answer; the timeline's answers count too.
	Answered []string
	Timeline []orchestrator.Moment
}

// OutcomeOf is the outcome of a run.
func OutcomeOf(res *orchestrator.Result) Outcome {
	o := Outcome{Winner: res.Winner, Votes: res.Votes, Timeline: res.Timeline}
	for id := range res.Answers {
		o.Answered = append(o.Answered, id)
	}
	slices.Sort(o.Answered)
	return o
}

// barWidth is the width of a full tally bar (every vote counted).
const barWidth = 20

// tallyRow is one answer in the tally.
type tallyRow struct {
	agent  string
	label  string // "alice #2": the agent and which of its answers stands
	voters []string
	first  int // position of the agent's first answer in the timeline (ties go to it)
}

// answerCounter counts each agent's answers along the timeline: label names an agent's latest
// answer so far ("alice #2").
type answerCounter map[string]int

func (c answerCounter) label(agent string) string {
	if n := c[agent]; n > 0 {
		return agent + " #" + strconv.Itoa(n)
	}
	return agent
}

// tally is one row per answer that stands at the end (each agent's latest), most votes first,
// ties in the order the answers were first posted.
func tally(o Outcome) []tallyRow {
	rows := map[string]*tallyRow{}
	var order []string
	row := func(agent string) *tallyRow {
		if r := rows[agent]; r != nil {
			return r
		}
		r := &tallyRow{agent: agent, first: len(o.Timeline) + len(order)}
		rows[agent] = r
		order = append(order, agent)
		return r
	}
	counts := answerCounter{}
	for i, m := range o.Timeline {
		if m.Kind == orchestrator.EventAnswer && m.Agent != "" {
			counts[m.Agent]++
			if r := row(m.Agent); r.first > i {
				r.first = i
			}
		}
	}
	for _, a := range o.Answered {
		row(a)
	}
	voters := make([]string, 0, len(o.Votes))
	for v := range o.Votes {
		voters = append(voters, v)
	}
	slices.Sort(voters)
	for _, v := range voters {
		r := row(o.Votes[v])
		r.voters = append(r.voters, v)
	}
	if o.Winner != "" {
		row(o.Winner)
	}
	out := make([]tallyRow, 0, len(rows))
	for _, a := range order {
		r := rows[a]
		r.label = counts.label(a)
		out = append(out, *r)
	}
	slices.SortStableFunc(out, func(a, b tallyRow) int {
		if d := len(b.voters) - len(a.voters); d != 0 {
			return d
		}
		return a.first - b.first
	})
	return out
}

// tallyLines draws the tally: one bar per answer, its share of the votes cast, and who voted
// for it. Nothing when no answer stands.
func tallyLines(o Outcome) []line {
	rows := tally(o)
	if len(rows) == 0 {
		return nil
	}
	total := len(o.Votes)
	labelWidth := 0
	for _, r := range rows {
		labelWidth = max(labelWidth, runewidth.StringWidth(termtext.Line(r.label)))
	}
	out := []line{line{}.add(fmt.Sprintf("Votes (%d cast):", total), sgrBold)}
	for _, r := range rows {
		n := len(r.voters)
		filled := 0
		if total > 0 {
			filled = (n*barWidth + total/2) / total
			if n > 0 && filled == 0 {
				filled = 1
			}
		}
		won := r.agent == o.Winner
		barColor := sgrCyan
		if won {
			barColor = sgrGreen
		}
		l := line{}.add("  ", sgrNone).add(r.label, sgrBold).
			add(strings.Repeat(" ", labelWidth-runewidth.StringWidth(termtext.Line(r.label)))+"  ", sgrNone).
			add(strings.Repeat("█", filled), barColor).
			add(strings.Repeat("░", barWidth-filled), sgrDim).
			add(fmt.Sprintf("  %d/%d", n, total), sgrNone)
		if n > 0 {
			l = l.add("  "+strings.Join(r.voters, ", "), sgrNone)
		}
		if won {
			l = l.add("  winner", sgrWinner)
		}
		out = append(out, l)
	}
	return out
}

// TallyLines is the vote tally as printed (see tallyLines).
func TallyLines(o Outcome, st Style) []string { return renderAll(tallyLines(o), st) }

// TimelineLines is the timeline as printed (see timelineLines).
func TimelineLines(o Outcome, st Style) []string { return renderAll(timelineLines(o), st) }

func renderAll(lines []line, st Style) []string {
	if len(lines) == 0 {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.render(st.Width, st.Color)
	}
	return out
}

// maxTimelineLines bounds the timeline printed: a long run keeps its beginning and its end.
const maxTimelineLines = 60

// itemsPerLine is how many grouped moments share one timeline line.
const itemsPerLine = 4

// timelineLines draws the timeline compactly: one line per moment, time from the run's start;
// consecutive votes or restarts (a round of votes, the restarts an answer caused) share a line,
// at the time of the first. Grouping does not depend on timing, so the same run always
// draws the same lines.
func timelineLines(o Outcome) []line {
	if len(o.Timeline) == 0 {
		return nil
	}
	start := o.Timeline[0].Time
	counts := answerCounter{}
	type group struct {
		at    string
		kind  orchestrator.EventKind
		items []string
	}
	var groups []group
	push := func(at string, kind orchestrator.EventKind, item string, joinable bool) {
		if n := len(groups); joinable && n > 0 && groups[n-1].kind == kind && len(groups[n-1].items) < itemsPerLine {
			groups[n-1].items = append(groups[n-1].items, item)
			return
		}
		groups = append(groups, group{at: at, kind: kind, items: []string{item}})
	}
	for _, m := range o.Timeline {
		at := clock(m.Time.Sub(start))
		switch m.Kind {
		case orchestrator.EventAnswer:
			counts[m.Agent]++
			push(at, m.Kind, counts.label(m.Agent), false)
		case orchestrator.EventVote:
			push(at, m.Kind, m.Agent+" → "+counts.label(m.Target), true)
		case orchestrator.EventRestart:
			push(at, m.Kind, m.Agent, true)
		case orchestrator.EventStopped:
			push(at, m.Kind, m.Agent+": "+termtext.Squeeze(m.Text, 80), false)
		case orchestrator.EventDecision:
			push(at, m.Kind, termtext.Squeeze(m.Text, 100), false)
		case orchestrator.EventFinal:
			push(at, m.Kind, m.Agent+" presented the final answer", false)
		}
	}
	if len(groups) > maxTimelineLines {
		keep := maxTimelineLines - 1
		head, tail := keep/2, keep-keep/2
		trimmed := append([]group{}, groups[:head]...)
		trimmed = append(trimmed, group{items: []string{fmt.Sprintf("… %d more", len(groups)-keep)}})
		groups = append(trimmed, groups[len(groups)-tail:]...)
	}
	out := []line{line{}.add("Timeline:", sgrBold)}
	for _, g := range groups {
		word, color := timelineWord(g.kind)
		out = append(out, line{}.add(fmt.Sprintf("  %6s  ", g.at), sgrDim).add(fmt.Sprintf("%-8s ", word), color).add(strings.Join(g.items, ", "), sgrNone))
	}
	return out
}

func timelineWord(k orchestrator.EventKind) (string, string) {
	switch k {
	case orchestrator.EventAnswer:
		return "answer", sgrCyan
	case orchestrator.EventVote:
		return "vote", sgrGreen
	case orchestrator.EventRestart:
		return "restart", sgrMagenta
	case orchestrator.EventStopped:
		return "stopped", sgrRed
	case orchestrator.EventDecision:
		return "decided", sgrBold
	case orchestrator.EventFinal:
		return "final", sgrWinner
	}
	return "", sgrNone
}

// clock is an elapsed time as m:ss (h:mm:ss past an hour).
func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
