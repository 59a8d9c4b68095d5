package e2e

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/massgen-go/massgen/internal/termtext"
)

// Names and text an agent shapes to drive the user's terminal: an OSC that retitles the window
// (ESC ] 0 ; ... BEL), the C1 CSI (U+009B), a bidi override, and a line break followed by what
// would pass for a line of massgen's own.
const (
	hostileName   = "pwn\x1b]0;pwned\x07\u009b\u202e\n+spoofed.txt"
	hostileVictim = "victim\x1b]2;gone\x07\x1b[5m.txt"
	hostileText   = "Done \x1b[2J\x1b[H\x1b]0;pwned\x07 \u009b31m red \u202eevil\nspoofed-line"
	hostileBody   = "safe\n\x1b[2J\x1b]0;pwned\x07line\n\u009b31mred\n"
)

// TestNoRawEscapeInHumanOutput: an agent names files and writes answers with escape sequences.
// Nothing massgen prints for a person (the run's progress and end-of-run summary, `trash list`,
// `sessions list|show`, `diff`, `undo`, `logs`, `logs --raw`) holds a raw ESC, BEL, C1 control,
// bidi control or a line break that starts a line of its own; the JSON outputs (`--output json`,
// `trash list --json`) still give the exact names and answer.
func TestNoRawEscapeInHumanOutput(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "project")
	victim := filepath.Join(proj, hostileVictim)
	evil := filepath.Join(proj, hostileName)
	writeFile(t, victim, "to be deleted\n")
	p := newProvider(t, map[string]func(turn) reply{
		"m": func(tr turn) reply {
			switch {
			case !tr.final:
				return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": hostileText})}}
			case tr.step == 0:
				return reply{calls: []toolCall{
					tc("write_file", map[string]any{"path": evil, "content": hostileBody}),
					tc("read_file", map[string]any{"path": victim}),
					tc("delete_file", map[string]any{"path": victim}),
					tc("read_file", map[string]any{"path": filepath.Join(proj, "missing\x1b[5m.txt")}),
				}}
			default:
				return reply{text: hostileText}
			}
		},
	})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))

	type output struct {
		what           string
		stdout, stderr string
		stdoutIsJSON   bool
	}
	var human []output
	check := func(what string, r result, wantCode int, stdoutIsJSON bool) result {
		t.Helper()
		if r.code != wantCode {
			t.Fatalf("%s: exit %d, want %d\nstdout:\n%q\nstderr:\n%q", what, r.code, wantCode, r.stdout, r.stderr)
		}
		human = append(human, output{what, r.stdout, r.stderr, stdoutIsJSON})
		return r
	}

	r := check("run --output json", run(t, dir, "--config", "cfg.yaml", "--context", "project", "--output", "json", "Deliver"), 0, true)
	if !exists(evil) || exists(victim) {
		t.Fatalf("the run did not make its changes (evil %v, victim %v)\n%s", exists(evil), exists(victim), r.stderr)
	}
	if !strings.Contains(r.stderr, "Changed in context paths: 1 added, 0 modified, 1 deleted") {
		t.Errorf("no change summary on stderr:\n%s", r.stderr)
	}
	// --output json: the exact name and answer.
	var files []string
	var final string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Type        string `json:"type"`
			FinalAnswer string `json:"final_answer"`
			Files       []struct {
				Path string `json:"path"`
			} `json:"files"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("--output json line %q: %v", sc.Text(), err)
		}
		switch line.Type {
		case "files_changed":
			for _, f := range line.Files {
				files = append(files, f.Path)
			}
		case "result":
			final = line.FinalAnswer
		}
	}
	if !contains(files, evil) || !contains(files, victim) {
		t.Errorf("files_changed %q lacks the exact names %q and %q", files, evil, victim)
	}
	if final != hostileText {
		t.Errorf("result.final_answer = %q, want %q", final, hostileText)
	}

	trash := check("trash list", run(t, dir, "trash", "list"), 0, false)
	if !strings.Contains(trash.stdout, termtext.Line(victim)) {
		t.Errorf("trash list does not show the deleted file as %q:\n%s", termtext.Line(victim), trash.stdout)
	}
	tj := check("trash list --json", run(t, dir, "trash", "list", "--json"), 0, true)
	var entries []struct {
		OriginalPath string `json:"original_path"`
	}
	if err := json.Unmarshal([]byte(tj.stdout), &entries); err != nil || len(entries) != 1 || entries[0].OriginalPath != victim {
		t.Errorf("trash list --json: %v %+v, want the exact path %q\n%s", err, entries, victim, tj.stdout)
	}

	show := check("sessions show", run(t, dir, "sessions", "show"), 0, false)
	for _, want := range []string{termtext.Line(evil), `\x1b[2J\x1b[H\x1b]0;pwned\x07 \u009b31m red \u202eevil`} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, show.stdout)
		}
	}
	check("sessions list", run(t, dir, "sessions", "list"), 0, false)

	diff := check("diff", run(t, dir, "diff"), 0, false)
	for _, want := range []string{"massgen diff " + termtext.Line(evil) + " (added)", `+\x1b[2J\x1b]0;pwned\x07line`, `+\u009b31mred`} {
		if !strings.Contains(diff.stdout, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff.stdout)
		}
	}

	logs := check("logs", run(t, dir, "logs"), 0, false)
	if !strings.Contains(logs.stdout, "pwned") {
		t.Errorf("the log does not mention the file:\n%s", logs.stdout)
	}
	raw := check("logs --raw", run(t, dir, "logs", "--raw"), 0, true)
	sawName := false
	for _, l := range strings.Split(strings.TrimRight(raw.stdout, "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("logs --raw line is not JSON: %q: %v", l, err)
		}
		sawName = sawName || strings.Contains(l, `pwn\u001b]0;pwned\u0007\u009b\u202e\n+spoofed.txt`)
	}
	if !sawName {
		t.Errorf("logs --raw does not hold the name as JSON escapes:\n%s", raw.stdout)
	}

	undo := check("undo", run(t, dir, "undo"), 0, false)
	if exists(evil) || !exists(victim) {
		t.Errorf("undo did not put things back:\n%s%s", undo.stdout, undo.stderr)
	}

	// tools call prints the tool's JSON result: the exact name, as JSON escapes.
	evil2 := filepath.Join(proj, "again"+hostileName)
	call := check("tools call", run(t, dir, "tools", "call", "--config", "cfg.yaml", "--agent", "solo", "--final", "--context", "project",
		"write_file", `{"path":`+jsonString(evil2)+`,"content":"x"}`), 0, true)
	var res struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal([]byte(call.stdout), &res); err != nil || res.Path != evil2 {
		t.Errorf("tools call: %v, path %q, want %q\n%s", err, res.Path, evil2, call.stdout)
	}
	check("tools list", run(t, dir, "tools", "list", "--config", "cfg.yaml", "--agent", "solo"), 0, false)
	check("permissions check", run(t, dir, "permissions", "check", "--config", "cfg.yaml", "--agent", "solo", "--write", evil2), 1, false)
	// Error messages that repeat what was typed or found.
	check("sessions show BAD", run(t, dir, "sessions", "show", "bad\x1b]0;pwned\x07"), 1, false)
	check("trash restore BAD", run(t, dir, "trash", "restore", "log_x/\x1b[2J"), 1, false)

	for _, o := range human {
		assertTerminalSafe(t, o.what+" stderr", o.stderr)
		assertTerminalSafe(t, o.what+" stdout", o.stdout)
	}
}

// assertTerminalSafe fails on anything in s that could drive a terminal: a byte that is not
// UTF-8, a C0 control other than LF and tab, DEL, a C1 control, an invisible format character
// (termtext.Hidden), or a line that starts with what followed a line break in a name or answer.
func assertTerminalSafe(t *testing.T, what, s string) {
	t.Helper()
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (termtext.Hidden(r) && r != '\n' && r != '\t') {
			lo, hi := max(0, i-40), min(len(s), i+40)
			t.Errorf("%s: raw %U at byte %d: %q", what, r, i, s[lo:hi])
			return
		}
		i += size
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "+spoofed") || strings.HasPrefix(l, "spoofed-line") {
			t.Errorf("%s: a name or answer started a line of its own: %q", what, l)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
