package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// soloConfig is one agent over the fake provider, with no context path of its own: the run's
// --context gives it one.
func soloConfig(p *provider, model string) string {
	return "agents:\n" + agentYAML("solo", model, p.URL(), "workspace1") + "orchestrator:\n  timeout_seconds: 90\n"
}

// deliverer is a model that answers in coordination and, as the final agent, makes the calls
// of its turn (chosen from the task in the request), then replies with final text.
func deliverer(finalCalls func(tr turn) ([]toolCall, string)) func(turn) reply {
	return func(tr turn) reply {
		switch {
		case !tr.final:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "ready to deliver"})}}
		case tr.step == 0:
			calls, _ := finalCalls(tr)
			return reply{calls: calls}
		default:
			_, text := finalCalls(tr)
			return reply{text: text}
		}
	}
}

// TestSessionContinueDiffUndo: a one-question run with --context is a session; `massgen
// --continue "..."` with no other flag resumes it with its config and context path and delivers
// there again; `diff` shows exactly each turn's change; `undo` restores overwritten, deleted and
// created files and leaves a file changed since alone.
func TestSessionContinueDiffUndo(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "project")
	writeFile(t, filepath.Join(proj, "index.html"), "<h1>original</h1>\n")
	writeFile(t, filepath.Join(proj, "old.txt"), "obsolete\n")
	index, old, page, notes := filepath.Join(proj, "index.html"), filepath.Join(proj, "old.txt"), filepath.Join(proj, "page.html"), filepath.Join(proj, "notes.md")
	p := newProvider(t, map[string]func(turn) reply{
		"m": deliverer(func(tr turn) ([]toolCall, string) {
			if tr.has("Second task") {
				return []toolCall{
					tc("write_file", map[string]any{"path": page, "content": "<p>page v2</p>\n"}),
					tc("write_file", map[string]any{"path": notes, "content": "notes\n"}),
				}, "Second answer."
			}
			return []toolCall{
				tc("write_file", map[string]any{"path": index, "content": "<h1>changed</h1>\n"}),
				tc("read_file", map[string]any{"path": old}),
				tc("delete_file", map[string]any{"path": old}),
				tc("write_file", map[string]any{"path": page, "content": "<p>page v1</p>\n"}),
			}, "First answer."
		}),
	})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))

	r1 := run(t, dir, "--config", "cfg.yaml", "--context", "project", "First task")
	if r1.code != 0 || r1.stdout != "First answer.\n" {
		t.Fatalf("turn 1: exit %d, stdout %q\nstderr:\n%s", r1.code, r1.stdout, r1.stderr)
	}
	for _, want := range []string{"Changed in context paths: 1 added, 1 modified, 1 deleted", "massgen diff"} {
		if !strings.Contains(r1.stderr, want) {
			t.Errorf("turn 1 stderr lacks %q:\n%s", want, r1.stderr)
		}
	}

	r2 := run(t, dir, "--continue", "Second task")
	if r2.code != 0 || r2.stdout != "Second answer.\n" {
		t.Fatalf("--continue: exit %d, stdout %q\nstderr:\n%s", r2.code, r2.stdout, r2.stderr)
	}
	if got := readFile(t, page); got != "<p>page v2</p>\n" {
		t.Errorf("--continue did not deliver into the context path: page.html = %q\nstderr:\n%s", got, r2.stderr)
	}
	if !strings.Contains(r2.stderr, proj+" (write)") || strings.Contains(r2.stderr, "DENIED") {
		t.Errorf("--continue lost the context path:\n%s", r2.stderr)
	}
	var sawHistory bool
	for _, body := range p.requests("m") {
		s := string(body)
		sawHistory = sawHistory || strings.Contains(s, "Second task") && strings.Contains(s, "First task") && strings.Contains(s, "First answer.")
	}
	if !sawHistory {
		t.Error("turn 2 was not given turn 1's exchange")
	}
	sessions, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "session_*"))
	if len(sessions) != 1 || !exists(filepath.Join(sessions[0], "turn_2")) {
		t.Fatalf("sessions: %v", sessions)
	}

	// diff: exactly each turn's change (turn 1 read from the kept copies, though page.html
	// changed since).
	d2 := run(t, dir, "diff")
	want2 := "massgen diff " + notes + " (added)\n--- /dev/null\n+++ " + notes + "\n@@ -0,0 +1 @@\n+notes\n" +
		"massgen diff " + page + " (modified)\n--- " + page + "\n+++ " + page + "\n@@ -1 +1 @@\n-<p>page v1</p>\n+<p>page v2</p>\n"
	if d2.code != 0 || d2.stdout != want2 {
		t.Errorf("diff (turn 2): exit %d\n%s\nwant\n%s\nstderr: %s", d2.code, d2.stdout, want2, d2.stderr)
	}
	d1 := run(t, dir, "diff", "--turn", "1")
	want1 := "massgen diff " + index + " (modified)\n--- " + index + "\n+++ " + index + "\n@@ -1 +1 @@\n-<h1>original</h1>\n+<h1>changed</h1>\n" +
		"massgen diff " + old + " (deleted)\n--- " + old + "\n+++ /dev/null\n@@ -1 +0,0 @@\n-obsolete\n" +
		"massgen diff " + page + " (added)\n--- /dev/null\n+++ " + page + "\n@@ -0,0 +1 @@\n+<p>page v1</p>\n"
	if d1.code != 0 || d1.stdout != want1 {
		t.Errorf("diff --turn 1: exit %d\n%s\nwant\n%s\nstderr: %s", d1.code, d1.stdout, want1, d1.stderr)
	}

	// undo turn 1: index.html and old.txt come back; page.html, changed since by turn 2, is
	// left alone and reported (exit 1).
	u1 := run(t, dir, "undo", "--turn", "1")
	if u1.code != 1 || !strings.Contains(u1.stdout, "skipped   "+page+": changed since the turn") {
		t.Errorf("undo --turn 1: exit %d\nstdout:\n%s\nstderr:\n%s", u1.code, u1.stdout, u1.stderr)
	}
	if got := readFile(t, index); got != "<h1>original</h1>\n" {
		t.Errorf("overwritten index.html not restored: %q", got)
	}
	if got := readFile(t, old); got != "obsolete\n" {
		t.Errorf("deleted old.txt not restored: %q", got)
	}
	if got := readFile(t, page); got != "<p>page v2</p>\n" {
		t.Errorf("page.html, changed since turn 1, was touched: %q", got)
	}
	// undo turn 2, then turn 1 again: the project is as it was before the session.
	if u := run(t, dir, "undo"); u.code != 0 || exists(notes) || readFile(t, page) != "<p>page v1</p>\n" {
		t.Errorf("undo (turn 2): exit %d, notes.md exists %v\n%s%s", u.code, exists(notes), u.stdout, u.stderr)
	}
	if u := run(t, dir, "undo", "--turn", "1"); u.code != 0 || exists(page) {
		t.Errorf("undo --turn 1 again: exit %d, page.html exists %v\n%s%s", u.code, exists(page), u.stdout, u.stderr)
	}
	ents, _ := os.ReadDir(proj)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"index.html", "old.txt"}) || readFile(t, index) != "<h1>original</h1>\n" {
		t.Errorf("project after undoing both turns: %v", names)
	}
	// What undo removed is in the trash.
	if tl := run(t, dir, "trash", "list"); !strings.Contains(tl.stdout, page) || !strings.Contains(tl.stdout, notes) {
		t.Errorf("trash list:\n%s", tl.stdout)
	}
}

// TestOutputJSON: --output json prints JSON Lines on stdout (every line parses and has a type),
// ending with a result whose final answer is what normal mode prints; progress stays on stderr.
func TestOutputJSON(t *testing.T) {
	// A provider per run: beta's first request is answered only after alpha's answer, so beta
	// is always restarted.
	newScripted := func() *provider {
		betaAsked := newSignal()
		return newProvider(t, map[string]func(turn) reply{
			"ma": func(tr turn) reply {
				switch {
				case tr.final && tr.step == 0:
					s := string(tr.raw)
					i := strings.Index(s, "CTX=") + len("CTX=")
					path := s[i : i+strings.Index(s[i:], " end")]
					return reply{calls: []toolCall{tc("write_file", map[string]any{"path": path + "/out.txt", "content": "one\ntwo\n"})}}
				case tr.final:
					return reply{text: "The final answer.\nWith two lines."}
				case len(tr.answers) == 0:
					if !wait(tr, betaAsked.C()) {
						return reply{block: true}
					}
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "alpha's answer"})}}
				default:
					return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": tr.answers[0], "reason": "first"})}}
				}
			},
			"mb": func(tr turn) reply {
				if len(tr.answers) == 0 {
					betaAsked.fire()
					return reply{block: true} // restarted by alpha's answer
				}
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": tr.answers[0], "reason": "agree"})}}
			},
		})
	}
	runOnce := func(args ...string) (result, string) {
		p := newScripted()
		dir := t.TempDir()
		proj := filepath.Join(dir, "project")
		writeFile(t, filepath.Join(proj, "README.md"), "readme\n")
		writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("alpha", "ma", p.URL(), "workspace1")+agentYAML("beta", "mb", p.URL(), "workspace2")+
			"orchestrator:\n  timeout_seconds: 90\n")
		return run(t, dir, append([]string{"--config", "cfg.yaml", "--context", "project"}, append(args, "Task. CTX="+proj+" end")...)...), proj
	}
	normal, _ := runOnce()
	if normal.code != 0 {
		t.Fatalf("normal run: exit %d\n%s", normal.code, normal.stderr)
	}
	js, proj := runOnce("--output", "json")
	if js.code != 0 {
		t.Fatalf("json run: exit %d\n%s", js.code, js.stderr)
	}
	if !strings.Contains(js.stderr, "Winner: alpha") {
		t.Errorf("human progress is not on stderr:\n%s", js.stderr)
	}
	types := map[string]int{}
	var last map[string]any
	var toolDecision string
	sc := bufio.NewScanner(strings.NewReader(js.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", sc.Text(), err)
		}
		typ, _ := obj["type"].(string)
		if typ == "" {
			t.Fatalf("line without a type: %q", sc.Text())
		}
		types[typ]++
		if typ == "tool_call" && obj["tool"] == "write_file" {
			toolDecision, _ = obj["decision"].(string)
		}
		last = obj
	}
	for _, typ := range []string{"run_start", "agent_started", "tool_call", "answer", "vote", "restart", "winner", "final_answer", "files_changed", "tokens", "result"} {
		if types[typ] == 0 {
			t.Errorf("no %s line (types seen: %v)", typ, types)
		}
	}
	if types["result"] != 1 || last["type"] != "result" {
		t.Fatalf("the stream must end with exactly one result: %v, last %v", types, last)
	}
	if toolDecision != "allowed" {
		t.Errorf("write_file decision = %q", toolDecision)
	}
	if got := last["final_answer"].(string) + "\n"; got != normal.stdout {
		t.Errorf("result.final_answer = %q, normal mode printed %q", got, normal.stdout)
	}
	if last["winner"] != "alpha" || last["exit_code"].(float64) != 0 {
		t.Errorf("result = %v", last)
	}
	votes, _ := last["votes"].(map[string]any)
	if votes["alpha"] != "alpha" || votes["beta"] != "alpha" {
		t.Errorf("votes = %v", votes)
	}
	files, _ := last["files_changed"].([]any)
	if len(files) != 1 {
		t.Fatalf("files_changed = %v", last["files_changed"])
	}
	f := files[0].(map[string]any)
	if f["path"] != filepath.Join(proj, "out.txt") || f["change"] != "created" || f["added"].(float64) != 2 {
		t.Errorf("files_changed[0] = %v", f)
	}

	// A run that fails before any turn still ends with a result naming its exit code.
	bad := run(t, t.TempDir(), "--output", "json", "--config", "missing.yaml", "x")
	var res map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(bad.stdout)), &res); err != nil || res["type"] != "result" || res["exit_code"].(float64) != 2 || bad.code != 2 {
		t.Errorf("failed run: exit %d, stdout %q", bad.code, bad.stdout)
	}
}

// TestDeliveredIsTheChangeSet: what a turn delivered has one record, the turn's change set, and
// every place that shows or keeps it reads that record: the end summary's "Delivered:", the
// session's files_delivered and files_changed, `sessions show` and SESSION_SUMMARY.txt. A file a
// command wrote is delivered like one a file tool wrote (the journal's command inventory saw
// it); a file written and removed again in the turn, and a deleted file, are not delivered.
func TestDeliveredIsTheChangeSet(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "project")
	writeFile(t, filepath.Join(proj, "old.txt"), "obsolete\n")
	written, made, scratch, old := filepath.Join(proj, "written.txt"), filepath.Join(proj, "made.txt"), filepath.Join(proj, "scratch.txt"), filepath.Join(proj, "old.txt")
	p := newProvider(t, map[string]func(turn) reply{
		"m": deliverer(func(tr turn) ([]toolCall, string) {
			return []toolCall{
				tc("write_file", map[string]any{"path": written, "content": "by a tool\n"}),
				tc("execute_command", map[string]any{"command": "echo by a command > " + made}),
				tc("execute_command", map[string]any{"command": "echo scratch > " + scratch + " && rm " + scratch}),
				tc("read_file", map[string]any{"path": old}),
				tc("delete_file", map[string]any{"path": old}),
			}, "Delivered."
		}),
	})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))

	r := run(t, dir, "--config", "cfg.yaml", "--context", "project", "--display", "plain", "Deliver")
	if r.code != 0 || r.stdout != "Delivered.\n" {
		t.Fatalf("run: exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, made); got != "by a command\n" {
		t.Fatalf("made.txt = %q: the command did not deliver\nstderr:\n%s", got, r.stderr)
	}
	if exists(scratch) || exists(old) {
		t.Fatalf("scratch.txt or old.txt still there")
	}
	want := []string{made, written}
	if s := "Delivered:\n  project/made.txt\n  project/written.txt\nFinal workspace:"; !strings.Contains(r.stderr, s) {
		t.Errorf("the summary lacks\n%s\nstderr:\n%s", s, r.stderr)
	}
	if s := "Changed in context paths: 2 added, 0 modified, 1 deleted"; !strings.Contains(r.stderr, s) {
		t.Errorf("the summary lacks %q:\n%s", s, r.stderr)
	}

	sessions, _ := filepath.Glob(filepath.Join(dir, ".massgen", "sessions", "session_*"))
	if len(sessions) != 1 {
		t.Fatalf("sessions: %v", sessions)
	}
	var md struct {
		FilesDelivered []string `json:"files_delivered"`
		FilesChanged   []struct {
			Path   string `json:"path"`
			Change string `json:"change"`
		} `json:"files_changed"`
	}
	raw := readFile(t, filepath.Join(sessions[0], "turn_1", "metadata.json"))
	if err := json.Unmarshal([]byte(raw), &md); err != nil {
		t.Fatal(err)
	}
	var changed []string // created or modified, as the change set names them
	for _, f := range md.FilesChanged {
		if f.Change != "deleted" {
			changed = append(changed, f.Path)
		}
	}
	if !slices.Equal(md.FilesDelivered, want) || !slices.Equal(changed, want) || len(md.FilesChanged) != 3 {
		t.Errorf("metadata.json: files_delivered %v, files_changed %+v; want %v delivered and old.txt deleted", md.FilesDelivered, md.FilesChanged, want)
	}

	show := run(t, dir, "sessions", "show", filepath.Base(sessions[0]))
	for _, f := range want {
		if !strings.Contains(show.stdout, "Delivered: "+f+"\n") {
			t.Errorf("sessions show lacks %s:\n%s", f, show.stdout)
		}
	}
	sum := readFile(t, filepath.Join(sessions[0], "SESSION_SUMMARY.txt"))
	if s := "Files delivered:\n  " + made + "\n  " + written + "\n"; !strings.Contains(sum, s) {
		t.Errorf("SESSION_SUMMARY.txt lacks\n%s\n%s", s, sum)
	}
	for _, out := range []string{show.stdout, sum} { // the summary's block is checked whole above
		if strings.Contains(out, "scratch.txt") || strings.Contains(out, "Delivered: "+old) {
			t.Errorf("a file written and removed in the turn, or a deleted one, is shown as delivered:\n%s", out)
		}
	}
}
