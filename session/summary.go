package session

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/massgen-go/massgen/internal/termtext"
)

const summaryAnswerLines = 20

// writeSummary rewrites SESSION_SUMMARY.txt in dir (the session's folder, or the hidden one a
// new session is built in) from the turns so far (caller holds mu or owns ses).
// It is for people (cat, less): what agents wrote is cleaned for the terminal (termtext); the
// exact answers stay in each turn's files.
func (ses *Session) writeSummary(dir string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "MassGen session %s\n", ses.ID)
	fmt.Fprintf(&b, "Started: %s\n", fmtTime(ses.Created))
	fmt.Fprintf(&b, "Turns: %d\n", len(ses.turns))
	if n := len(ses.turns); n > 0 && !ses.turns[n-1].Ended.IsZero() {
		fmt.Fprintf(&b, "Last turn ended: %s\n", fmtTime(ses.turns[n-1].Ended))
	}
	for i, t := range ses.turns {
		n := i + 1
		fmt.Fprintf(&b, "\n=== Turn %d ===\n", n)
		if !t.Started.IsZero() {
			line := "Time: " + fmtTime(t.Started)
			if !t.Ended.IsZero() {
				line += " -> " + fmtTime(t.Ended) + " (" + t.Ended.Sub(t.Started).Round(time.Second).String() + ")"
			}
			b.WriteString(line + "\n")
		}
		fmt.Fprintf(&b, "Task: %s\n", termtext.Squeeze(t.Task, 200))
		if t.Status == StatusInterrupted {
			b.WriteString("Interrupted: the run ended before saving this turn; recovered from its change journal\n")
		}
		if len(t.Agents) > 0 {
			fmt.Fprintf(&b, "Agents: %s\n", strings.Join(t.Agents, ", "))
		}
		if t.Winner != "" {
			fmt.Fprintf(&b, "Winner: %s\n", t.Winner)
		}
		if len(t.Votes) > 0 {
			voters := make([]string, 0, len(t.Votes))
			for v := range t.Votes {
				voters = append(voters, v)
			}
			slices.Sort(voters)
			parts := make([]string, len(voters))
			for j, v := range voters {
				parts[j] = v + " -> " + t.Votes[v]
			}
			fmt.Fprintf(&b, "Votes: %s\n", strings.Join(parts, ", "))
		}
		if len(t.Tokens) > 0 {
			names := make([]string, 0, len(t.Tokens))
			var in, out int64
			for a, u := range t.Tokens {
				names = append(names, a)
				in += u.Input
				out += u.Output
			}
			slices.Sort(names)
			parts := make([]string, len(names))
			for j, a := range names {
				parts[j] = fmt.Sprintf("%s %d in / %d out", a, t.Tokens[a].Input, t.Tokens[a].Output)
			}
			fmt.Fprintf(&b, "Tokens: %d in / %d out (%s)\n", in, out, strings.Join(parts, "; "))
		}
		if t.TotalCostUSD != nil {
			fmt.Fprintf(&b, "Cost: $%.4f\n", *t.TotalCostUSD)
		} else if len(t.Tokens) > 0 {
			b.WriteString("Cost: unknown\n")
		}
		if t.Status == StatusStopped || t.Status == StatusCancelled {
			line := "Ended: " + t.Status
			if t.StoppedBy != "" {
				line += " by the " + t.StoppedBy
			}
			b.WriteString(line + "\n")
			for _, w := range t.Work {
				where := "no work kept"
				if w.Snapshot != "" {
					where = filepath.Join(fmt.Sprintf("turn_%d", n), workDir, w.Anon) + "/"
				}
				answered := "no answer"
				if w.Answer != "" {
					answered = "answered"
				}
				fmt.Fprintf(&b, "  %s (%s): %s, %s\n", w.Agent, w.Anon, answered, where)
			}
		}
		if len(t.FilesDelivered) > 0 {
			b.WriteString("Files delivered:\n")
			for _, f := range t.FilesDelivered {
				fmt.Fprintf(&b, "  %s\n", termtext.Line(f))
			}
		}
		fmt.Fprintf(&b, "Final workspace: %s\n", filepath.Join(fmt.Sprintf("turn_%d", n), workspaceDir)+"/")
		b.WriteString("Answer:\n")
		lines := strings.Split(strings.TrimRight(termtext.Text(t.Answer), "\n"), "\n")
		for j, l := range lines {
			if j == summaryAnswerLines {
				fmt.Fprintf(&b, "  ... (%d more lines in turn_%d/%s)\n", len(lines)-j, n, answerFile)
				break
			}
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return writeFileAtomic(filepath.Join(dir, summaryFile), []byte(b.String()))
}

func fmtTime(t time.Time) string { return t.Format("2006-01-02 15:04:05 MST") }
