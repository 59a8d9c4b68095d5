//go:build linux

package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 26 item 11: a signal ends a run with 128 + its number, as shells and supervisors expect
// (Ctrl-C 130, SIGHUP 129, SIGTERM 143), the JSON result gives the same code and the reason in
// words, and stderr says it in words a person reads ("Cancelled by Ctrl-C"), never Go's
// "context canceled".
func TestSignalsExitWithTheirCodes(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
		says string
	}{
		{syscall.SIGINT, 130, "Ctrl-C"},
		{syscall.SIGHUP, 129, "SIGHUP"},
		{syscall.SIGTERM, 143, "SIGTERM"},
	} {
		for _, output := range []string{"text", "json"} {
			t.Run(tt.sig.String()+"/"+output, func(t *testing.T) {
				dir := t.TempDir()
				asked := newSignal()
				p := newProvider(t, map[string]func(turn) reply{"m": func(tr turn) reply {
					asked.fire() // no answer yet: Ctrl-C cancels rather than "answer now"
					return reply{block: true}
				}})
				writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
				s := start(t, dir, "", "--config", "cfg.yaml", "--output", output, "--display", "plain", "A task")
				waitFor(t, s, asked, "the first request")
				if err := s.cmd.Process.Signal(tt.sig); err != nil {
					t.Fatal(err)
				}
				if code := s.wait(t, 30*time.Second); code != tt.code {
					t.Errorf("exit %d after %v, want %d\n%s", code, tt.sig, tt.code, s.stderr)
				}
				stderr := s.stderr.String()
				if strings.Contains(stderr, "context canceled") || !strings.Contains(stderr, "ancelled by "+tt.says) {
					t.Errorf("stderr does not say the run was cancelled by %s in words:\n%s", tt.says, stderr)
				}
				if output == "text" {
					if s.stdout.Len() != 0 {
						t.Errorf("stdout = %q", s.stdout)
					}
					return
				}
				lines := lastLines(s.stdout.String(), 1)
				var res struct {
					Type     string `json:"type"`
					ExitCode int    `json:"exit_code"`
					Error    string `json:"error"`
				}
				if err := json.Unmarshal([]byte(lines[0]), &res); err != nil || res.Type != "result" || res.ExitCode != tt.code ||
					!strings.Contains(res.Error, tt.says) || strings.Contains(res.Error, "context canceled") {
					t.Errorf("last stdout line %q (%v), want a result with exit_code %d and the reason in words", lines[0], err, tt.code)
				}
			})
		}
	}
}
