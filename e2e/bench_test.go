//go:build unix

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkManyAgents runs the binary with n agents against a zero-latency Chat Completions
// server (every agent answers at once, is restarted by the others' answers, votes, and the winner
// presents) and reports the run's peak RSS, and for n > 1 the peak RSS each agent adds over a
// one-agent run (MiB/extra-agent): memory must stay flat per agent.
func BenchmarkManyAgents(b *testing.B) {
	base := peakRSS(b, 1, 3)
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			var sum float64
			for range b.N {
				sum += float64(runAgents(b, n))
			}
			rss := sum / float64(b.N) / 1024 // MiB
			b.ReportMetric(rss, "peak-RSS-MiB")
			if n > 1 {
				b.ReportMetric((rss-base/1024)/float64(n-1), "MiB/extra-agent")
			}
		})
	}
}

// peakRSS is the mean peak RSS (KiB) of runs with n agents.
func peakRSS(b *testing.B, n, runs int) float64 {
	var sum float64
	for range runs {
		sum += float64(runAgents(b, n))
	}
	return sum / float64(runs)
}

// runAgents runs one task with n agents and returns the process's peak RSS in KiB.
func runAgents(b *testing.B, n int) int64 {
	b.Helper()
	dir := b.TempDir()
	script := func(tr turn) reply {
		switch {
		case tr.final:
			return reply{text: "presented by " + tr.model}
		case len(tr.answers) == 0:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "answer of " + tr.model})}}
		default:
			return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": tr.answers[0], "reason": "first"})}}
		}
	}
	scripts := map[string]func(turn) reply{}
	var agents [][2]string
	for i := range n {
		m := fmt.Sprintf("m%d", i+1)
		scripts[m] = script
		agents = append(agents, [2]string{fmt.Sprintf("a%d", i+1), m})
	}
	p := newProvider(b, scripts)
	defer p.Close()
	writeFile(b, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", agents...))
	cmd := exec.Command(binary, "--config", "cfg.yaml", "--display", "silent", "Answer")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "XDG_CONFIG_HOME=" + xdgConfig}
	peak := measured(b, cmd)
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("%d agents: %v\n%s", n, err, errb.String())
	}
	return peak()
}
