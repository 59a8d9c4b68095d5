package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Item 9: eight `massgen permissions trust` at once, each approving its own project's rules,
// all print "Approved." and all eight approvals are in the store.
func TestParallelTrustApprovalsAllKept(t *testing.T) {
	const n = 8
	xdg := t.TempDir()
	env := append(cleanEnv(t)[:0:0], "PATH="+os.Getenv("PATH"), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+xdg)
	for round := range 3 {
		var dirs []string
		for i := range n {
			d := t.TempDir()
			writeFile(t, filepath.Join(d, ".massgen", "permissions.yaml"), fmt.Sprintf("hooks:\n  pre_tool_use:\n    - command: echo %d-%d\n", round, i))
			dirs = append(dirs, d)
		}
		var wg sync.WaitGroup
		results := make([]result, n)
		for i, d := range dirs {
			wg.Go(func() { results[i] = runEnv(t, d, env, "permissions", "trust") })
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 || !strings.Contains(r.stdout, "Approved.") {
				t.Fatalf("approval %d: exit %d\n%s%s", i, r.code, r.stdout, r.stderr)
			}
		}
		raw, err := os.ReadFile(filepath.Join(xdg, "massgen", "trust.json"))
		if err != nil {
			t.Fatal(err)
		}
		var store struct {
			Files map[string]any `json:"files"`
		}
		if err := json.Unmarshal(raw, &store); err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			rules, _ := filepath.EvalSymlinks(filepath.Join(d, ".massgen"))
			if _, ok := store.Files[filepath.Join(rules, "permissions.yaml")]; !ok {
				t.Errorf("round %d: the approval of %s is missing (%d in the store)", round, d, len(store.Files))
			}
		}
	}
}

// Item 11 (and issue 26 item 8): --output json on a run that fails before any turn (a bad
// config, a config that is not there, no session to continue, a bad session id, a flag that does
// not parse): the one result line carries the reason in words, naming the file and line where
// there is one, not "exit 2".
func TestOutputJSONBadConfigCarriesTheReason(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yaml"), "agents:\n  - id: a\n    backend:\n      type: no_such_backend\n      model: m\n")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--config", "c.yaml"}, []string{"c.yaml:4: ", "no_such_backend"}},
		{[]string{"--config", "gone.yaml"}, []string{"gone.yaml", "no such file"}},
		{[]string{"--continue"}, []string{"no session to continue"}},
		{[]string{"--session", "bogus"}, []string{"bogus", "not a session id"}},
		// Before the run begins: flags that do not parse (after or before --output json).
		{[]string{"--max-cost", "lots"}, []string{"--max-cost", "lots"}},
		{[]string{"--no-such-flag"}, []string{"--no-such-flag"}},
	} {
		res := run(t, dir, append(tt.args, "--output", "json", "Task")...)
		if tt.args[0] == "--no-such-flag" { // --output json before the bad flag
			res = run(t, dir, "--output", "json", "--no-such-flag", "Task")
		}
		if res.code != 2 {
			t.Errorf("%v: exit %d\n%s", tt.args, res.code, res.stderr)
			continue
		}
		lines := lastLines(res.stdout, 1)
		var r struct {
			Type     string `json:"type"`
			ExitCode int    `json:"exit_code"`
			Error    string `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || r.Type != "result" || r.ExitCode != 2 {
			t.Errorf("%v: stdout %q: %v", tt.args, res.stdout, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(r.Error, w) {
				t.Errorf("%v: the result's error is %q; want the reason (%q)\nstderr:\n%s", tt.args, r.Error, w, res.stderr)
			}
		}
	}
}

// Issue 26 item 8: the files_changed line always has its files list, [] when the turn changed
// nothing (docs/output.md lists it), as the result's files_changed does.
func TestOutputJSONFilesChangedAlwaysListed(t *testing.T) {
	dir := t.TempDir()
	p := newProvider(t, map[string]func(turn) reply{"m": soloScript("nothing changed")})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
	res := run(t, dir, "--config", "cfg.yaml", "--yes", "--output", "json", "A task")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var seen []string
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var l map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		var typ string
		_ = json.Unmarshal(l["type"], &typ)
		seen = append(seen, typ)
		switch typ {
		case "files_changed":
			if string(l["files"]) != "[]" {
				t.Errorf("files_changed line %s: want \"files\":[]", line)
			}
		case "result":
			if string(l["files_changed"]) != "[]" {
				t.Errorf("result line %s: want \"files_changed\":[]", line)
			}
		}
	}
	if !slices.Contains(seen, "files_changed") || !slices.Contains(seen, "result") {
		t.Errorf("line types %v: want files_changed and result", seen)
	}
}
