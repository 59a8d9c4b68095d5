package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// Item 11: --output json with a bad config: the one result line carries the reason, naming the
// file and line, not only "exit 2".
func TestOutputJSONBadConfigCarriesTheReason(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yaml"), "agents:\n  - id: a\n    backend:\n      type: no_such_backend\n      model: m\n")
	res := run(t, dir, "--config", "c.yaml", "--output", "json", "Task")
	if res.code != 2 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	lines := lastLines(res.stdout, 1)
	var r struct {
		Type     string `json:"type"`
		ExitCode int    `json:"exit_code"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || r.Type != "result" || r.ExitCode != 2 {
		t.Fatalf("stdout %q: %v", res.stdout, err)
	}
	if !strings.Contains(r.Error, "c.yaml:4: ") || !strings.Contains(r.Error, "no_such_backend") {
		t.Errorf("the result's error is %q; want the reason (c.yaml:4: ...)\nstderr:\n%s", r.Error, res.stderr)
	}
}
