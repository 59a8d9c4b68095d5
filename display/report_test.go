package display

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/orchestrator"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// moment is a timeline entry at sec seconds into the run.
func moment(sec float64, kind orchestrator.EventKind, agent, target, text string) orchestrator.Moment {
	return orchestrator.Moment{Time: t0.Add(time.Duration(sec * float64(time.Second))), Kind: kind, Agent: agent, Target: target, Text: text}
}

// A three-agent run: alice answers twice, bob once; bob is restarted by alice's first answer;
// the counted votes are for alice's second answer (2) and bob's (1).
var threeAgents = []orchestrator.Moment{
	moment(0, orchestrator.EventRunStart, "", "", ""),
	moment(3.2, orchestrator.EventAnswer, "alice", "", ""),
	moment(3.3, orchestrator.EventRestart, "bob", "", "new answer from agent1; restarts at its next step"),
	moment(3.4, orchestrator.EventRestart, "carol", "", "new answer from agent1; restarts at its next step"),
	moment(9, orchestrator.EventAnswer, "bob", "", ""),
	moment(12, orchestrator.EventVote, "carol", "bob", ""),
	moment(15, orchestrator.EventAnswer, "alice", "", ""),
	moment(21, orchestrator.EventVote, "alice", "alice", ""),
	moment(21.5, orchestrator.EventVote, "bob", "alice", ""),
	moment(22, orchestrator.EventVote, "carol", "bob", ""),
	moment(22, orchestrator.EventDecision, "alice", "alice", "alice (agent1) wins with 2 of 3 votes"),
	moment(75, orchestrator.EventFinal, "alice", "", ""),
}

func TestTally(t *testing.T) {
	tests := []struct {
		name string
		o    Outcome
		want []string
	}{
		{
			name: "answers numbered from the timeline, most votes first",
			o: Outcome{Winner: "alice", Votes: map[string]string{"alice": "alice", "bob": "alice", "carol": "bob"},
				Answered: []string{"alice", "bob"}, Timeline: threeAgents},
			want: []string{
				"Votes (3 cast):",
				"  alice #2  █████████████░░░░░░░  2/3  alice, bob  winner",
				"  bob #1    ███████░░░░░░░░░░░░░  1/3  carol",
			},
		},
		{
			name: "an answer without votes, a tie going to the first answer",
			o: Outcome{Winner: "bob", Votes: map[string]string{"a": "bob", "bob": "cy"},
				Answered: []string{"a", "bob", "cy"}, Timeline: []orchestrator.Moment{
					moment(0, orchestrator.EventRunStart, "", "", ""),
					moment(1, orchestrator.EventAnswer, "cy", "", ""),
					moment(2, orchestrator.EventAnswer, "bob", "", ""),
					moment(3, orchestrator.EventAnswer, "a", "", ""),
				}},
			want: []string{
				"Votes (2 cast):",
				"  cy #1   ██████████░░░░░░░░░░  1/2  bob",
				"  bob #1  ██████████░░░░░░░░░░  1/2  a  winner",
				"  a #1    ░░░░░░░░░░░░░░░░░░░░  0/2",
			},
		},
		{
			name: "a stored turn without a timeline",
			o:    Outcome{Winner: "x", Votes: map[string]string{"x": "x", "y": "x"}},
			want: []string{
				"Votes (2 cast):",
				"  x  ████████████████████  2/2  x, y  winner",
			},
		},
		{
			name: "one vote in many gets at least one cell",
			o:    Outcome{Votes: votesFor(41, "a", "b")},
			want: []string{
				"Votes (41 cast):",
				"  a  ████████████████████  40/41  " + voterList(40),
				"  b  █░░░░░░░░░░░░░░░░░░░  1/41  v40",
			},
		},
		{name: "nothing to tally", o: Outcome{}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TallyLines(tt.o, Style{})
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("tally:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// votesFor has n-1 voters (v00...) vote for a and the last one for b.
func votesFor(n int, a, b string) map[string]string {
	m := map[string]string{}
	for i := range n {
		target := a
		if i == n-1 {
			target = b
		}
		m[fmt.Sprintf("v%02d", i)] = target
	}
	return m
}

func voterList(n int) string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf("v%02d", i))
	}
	return strings.Join(s, ", ")
}

func TestTimeline(t *testing.T) {
	got := TimelineLines(Outcome{Timeline: threeAgents}, Style{})
	want := []string{
		"Timeline:",
		"    0:03  answer   alice #1",
		"    0:03  restart  bob, carol",
		"    0:09  answer   bob #1",
		"    0:12  vote     carol → bob #1",
		"    0:15  answer   alice #2",
		"    0:21  vote     alice → alice #2, bob → alice #2, carol → bob #1",
		"    0:22  decided  alice (agent1) wins with 2 of 3 votes",
		"    1:15  final    alice presented the final answer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if TimelineLines(Outcome{}, Style{}) != nil {
		t.Error("a timeline without moments")
	}
}

// Groups hold at most itemsPerLine moments; a long run keeps its start and its end.
func TestTimelineCompact(t *testing.T) {
	tl := []orchestrator.Moment{moment(0, orchestrator.EventRunStart, "", "", "")}
	for i := range 10 {
		tl = append(tl, moment(1, orchestrator.EventRestart, fmt.Sprintf("r%d", i), "", ""))
	}
	got := TimelineLines(Outcome{Timeline: tl}, Style{})
	if len(got) != 4 || got[1] != "    0:01  restart  r0, r1, r2, r3" || got[3] != "    0:01  restart  r8, r9" {
		t.Errorf("grouped restarts:\n%s", strings.Join(got, "\n"))
	}

	tl = tl[:1]
	for i := range 500 {
		tl = append(tl, moment(float64(i)*10, orchestrator.EventAnswer, fmt.Sprintf("a%d", i), "", ""))
	}
	tl = append(tl, moment(7200, orchestrator.EventFinal, "a1", "", ""))
	got = TimelineLines(Outcome{Timeline: tl}, Style{})
	text := strings.Join(got, "\n")
	if len(got) != maxTimelineLines+1 || !strings.Contains(text, "answer   a0 #1") || !strings.Contains(text, "… 442 more") ||
		!strings.HasSuffix(text, "2:00:00  final    a1 presented the final answer") {
		t.Errorf("%d lines:\n%s", len(got), text)
	}
}

// Colours only with Style.Color, and never inside model text (which is cleaned first).
func TestReportColorsAndCleaning(t *testing.T) {
	hostile := "ev\x1b[31mil\u202e"
	o := Outcome{Winner: hostile, Votes: map[string]string{"b": hostile}, Timeline: []orchestrator.Moment{
		moment(0, orchestrator.EventRunStart, "", "", ""),
		moment(1, orchestrator.EventAnswer, hostile, "", ""),
		moment(2, orchestrator.EventStopped, "b", "", hostile),
	}}
	plain := strings.Join(append(TallyLines(o, Style{}), TimelineLines(o, Style{})...), "\n")
	if strings.ContainsAny(plain, "\x1b\u202e") {
		t.Errorf("uncoloured report holds escapes: %q", plain)
	}
	colored := strings.Join(append(TallyLines(o, Style{Color: true}), TimelineLines(o, Style{Color: true})...), "\n")
	if !strings.Contains(colored, "\x1b[32m█") || !strings.Contains(colored, "\x1b[1;32m  winner\x1b[0m") {
		t.Errorf("no colours: %q", colored)
	}
	if strings.Contains(colored, "\x1b[31mil") || strings.Contains(colored, "\u202e") {
		t.Errorf("model text reached the terminal: %q", colored)
	}
}

func TestColorEnabled(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	tests := []struct {
		terminal bool
		env      func(string) (string, bool)
		want     bool
	}{
		{true, env(), true},
		{true, nil, true},
		{false, env(), false},
		{true, env("NO_COLOR", "1"), false},
		{true, env("NO_COLOR", ""), true}, // set but empty: colours stay (no-color.org)
		{true, env("TERM", "dumb"), false},
		{true, env("TERM", "xterm-256color"), true},
	}
	for i, tt := range tests {
		if got := ColorEnabled(tt.terminal, tt.env); got != tt.want {
			t.Errorf("case %d: ColorEnabled = %v, want %v", i, got, tt.want)
		}
	}
}
