package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Two runs started together in one project: one works, the other refuses at once with exit 5
// naming the first; nothing of the refused run reaches .massgen/. With --wait the second run
// starts when the first ends, and each run's state holds only its own files.
func TestTwoRunsInOneProject(t *testing.T) {
	for _, waitFlag := range []bool{false, true} {
		t.Run(fmt.Sprintf("wait=%v", waitFlag), func(t *testing.T) {
			dir := t.TempDir()
			// Both runs' agent is "solo" (one snapshot and temp folder under .massgen/), each with a
			// workspace of its own.
			ws := func(model string) string { return filepath.Join(dir, ".massgen", "workspaces", model) }
			release := newSignal()
			var inRun overlap
			script := func(tr turn) reply {
				switch {
				case tr.final:
					return reply{text: "answer of " + tr.model}
				case tr.step == 0:
					inRun.enter()
					if !wait(tr, release.C()) {
						inRun.leave()
						return reply{block: true}
					}
					return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(ws(tr.model), tr.model+".txt"), "content": tr.model})}}
				default:
					inRun.leave()
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "done by " + tr.model})}}
				}
			}
			p := newProvider(t, map[string]func(turn) reply{"run-a": script, "run-b": script})
			for _, m := range []string{"run-a", "run-b"} {
				cfg := "agents:\n" + agentYAML("solo", m, p.URL(), m) + "orchestrator:\n  timeout_seconds: 90\n"
				writeFile(t, filepath.Join(dir, m+".yaml"), cfg)
			}
			args := func(cfg string) []string {
				a := []string{"--config", cfg, "--display", "plain", "Work"}
				if waitFlag {
					a = append(a, "--wait")
				}
				return a
			}
			a := start(t, dir, "", args("run-a.yaml")...)
			b := start(t, dir, "", args("run-b.yaml")...)
			if !waitFlag {
				// One of them refuses at once, while the other waits for its model.
				var refused, working *started
				select {
				case <-a.done:
					refused, working = a, b
				case <-b.done:
					refused, working = b, a
				case <-time.After(time.Minute):
					t.Fatal("neither run refused")
				}
				if code := refused.wait(t, time.Second); code != 5 {
					t.Fatalf("refused run: exit %d, want 5\n%s", code, refused.stderr)
				}
				msg := refused.stderr.String()
				if !strings.Contains(msg, fmt.Sprintf("pid %d", working.cmd.Process.Pid)) || !strings.Contains(msg, "--wait") || refused.stdout.Len() != 0 {
					t.Errorf("refused run said:\n%s", msg)
				}
				release.fire()
				if code := working.wait(t, time.Minute); code != 0 {
					t.Fatalf("working run: exit %d\n%s", code, working.stderr)
				}
				if logs, _ := filepath.Glob(filepath.Join(dir, ".massgen", "logs", "log_*")); len(logs) != 1 {
					t.Errorf("log folders %v, want only the working run's", logs)
				}
				return
			}
			until(t, "one run waiting for the other", time.Minute, func() bool {
				return strings.Contains(a.stderr.String()+b.stderr.String(), "Waiting for the massgen run with pid")
			})
			release.fire()
			for _, s := range []*started{a, b} {
				if code := s.wait(t, 2*time.Minute); code != 0 {
					t.Fatalf("exit %d\n%s", code, s.stderr)
				}
			}
			if inRun.max > 1 {
				t.Errorf("%d runs worked at once", inRun.max)
			}
			// Each run's answer snapshot holds its own file only.
			logs, _ := filepath.Glob(filepath.Join(dir, ".massgen", "logs", "log_*", "snapshots", "solo", "*_answer"))
			if len(logs) != 2 {
				t.Fatalf("answer snapshots %v", logs)
			}
			for _, l := range logs {
				ents, _ := os.ReadDir(l)
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				if len(names) != 1 {
					t.Errorf("%s holds %v: two runs mixed their state", l, names)
				}
			}
		})
	}
}

// overlap counts the runs inside their working step at once.
type overlap struct {
	mu     sync.Mutex
	n, max int
}

func (o *overlap) enter() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n++
	o.max = max(o.max, o.n)
}

func (o *overlap) leave() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n--
}

// A cwd pointing at an existing folder of the user's is refused before anything runs, saying
// why; the project folder itself is refused even with cwd_owned. Every file is kept.
func TestCwdOnAUserFolderKeepsEveryFile(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(t.TempDir(), "my-code")
	files := map[string]string{"main.go": "package main", "docs/notes.md": "notes", ".git/HEAD": "ref"}
	for rel, c := range files {
		writeFile(t, filepath.Join(user, rel), c)
	}
	writeFile(t, filepath.Join(dir, "index.html"), "project file")
	p := newProvider(t, map[string]func(turn) reply{"m": soloScript("ran")})
	for _, tt := range []struct{ name, cwd, extra, want string }{
		{"a user folder", user, "", "is an existing folder outside .massgen/workspaces/"},
		{"the project folder", dir, "      cwd_owned: true\n", "holds massgen's own state"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := "agents:\n" + agentYAML("solo", "m", p.URL(), tt.cwd) + tt.extra
			writeFile(t, filepath.Join(dir, "cfg.yaml"), cfg)
			res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "Clean up")
			if res.code != 2 || !strings.Contains(res.stderr, tt.want) || !strings.Contains(res.stderr, "emptie") {
				t.Errorf("exit %d, stderr:\n%s", res.code, res.stderr)
			}
		})
	}
	if len(p.requests("m")) != 0 {
		t.Error("an agent ran")
	}
	for rel, c := range files {
		if got := readFile(t, filepath.Join(user, rel)); got != c {
			t.Errorf("%s = %q", rel, got)
		}
	}
	if got := readFile(t, filepath.Join(dir, "index.html")); got != "project file" {
		t.Errorf("index.html = %q", got)
	}
}

// With cwd_owned the config gives massgen a user folder: when its agent restarts, nothing in it
// is lost: every file is still there or in massgen's trash, from which it can be restored.
func TestOwnedUserFolderKeepsEveryFileOnRestart(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(t.TempDir(), "scratch")
	files := map[string]string{"keep.txt": "the user's", "sub/deep.txt": "deep"}
	for rel, c := range files {
		writeFile(t, filepath.Join(user, rel), c)
	}
	wrote := newSignal()
	p := newProvider(t, map[string]func(turn) reply{
		"owner": func(tr turn) reply {
			switch {
			case tr.final:
				return reply{text: "owner presented"}
			case len(tr.answers) == 0 && tr.step == 0:
				return reply{calls: []toolCall{tc("write_file", map[string]any{"path": filepath.Join(user, "draft.txt"), "content": "draft"})}}
			case len(tr.answers) == 0:
				wrote.fire()
				return reply{block: true} // restarted by the other agent's answer
			default:
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": tr.answers[0], "reason": "fine"})}}
			}
		},
		"other": func(tr turn) reply {
			switch {
			case tr.final:
				return reply{text: "other presented"}
			case len(tr.answers) == 0:
				if !wait(tr, wrote.C()) {
					return reply{block: true}
				}
				return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "other's answer"})}}
			default:
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": tr.answers[0], "reason": "fine"})}}
			}
		},
	})
	cfg := "agents:\n" + agentYAML("owner", "owner", p.URL(), user) + "      cwd_owned: true\n" + agentYAML("other", "other", p.URL(), "workspace2") +
		"orchestrator:\n  timeout_seconds: 90\n"
	writeFile(t, filepath.Join(dir, "cfg.yaml"), cfg)
	res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "Work")
	if res.stdout != "other presented\n" || (res.code != 0 && res.code != 4) {
		t.Fatalf("exit %d, stdout %q\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "[owner] restarting") {
		t.Fatalf("the owner was not restarted:\n%s", res.stderr)
	}
	list := run(t, dir, "trash", "list", "--json")
	files["draft.txt"] = "draft"
	for rel, c := range files {
		p := filepath.Join(user, rel)
		if got, err := os.ReadFile(p); err == nil && string(got) == c {
			continue
		}
		// Not in the folder: it must be in the trash, restorable.
		if !strings.Contains(list.stdout, p) && !strings.Contains(list.stdout, filepath.Join(user, strings.Split(rel, "/")[0])) {
			t.Errorf("%s is neither in the folder nor in the trash\ntrash: %s", rel, list.stdout)
		}
	}
	t.Logf("exit %d; trash: %s", res.code, list.stdout)
}
