package hooks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/launch"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

func writeExec(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAnalyze(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh command lines")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	audit := writeExec(t, filepath.Join(base, "scripts", "audit.sh"), "#!/bin/sh\nexit 0\n")
	check := writeExec(t, filepath.Join(base, "scripts", "check.py"), "print(1)\n")
	lib := writeExec(t, filepath.Join(base, "lib.sh"), "x=1\n")
	js := writeExec(t, filepath.Join(base, "a.js"), "1\n")
	nodeScript := writeExec(t, filepath.Join(base, "tool"), "#!/usr/bin/env node\n1\n")
	home := t.TempDir()
	homeHook := writeExec(t, filepath.Join(home, "hooks", "h.sh"), "#!/bin/sh\n")
	t.Setenv("HOME", home)
	look := pathLookup(os.Environ())
	bin := func(name string) string {
		p, err := look(name)
		if err != nil {
			t.Skipf("%s not on PATH", name)
		}
		return p
	}
	sh, env, python, node := bin("sh"), bin("env"), bin("python3"), bin("node")
	tests := []struct {
		name    string
		command string
		want    []string // paths, in order
		err     string
	}{
		{"relative script", "./scripts/audit.sh --verbose", []string{audit}, ""},
		{"absolute script", audit + " a b", []string{audit}, ""},
		{"interpreter and script", "python3 -u scripts/check.py arg", []string{python, check}, ""},
		{"pipeline and list", "echo hi | ./scripts/audit.sh && python3 scripts/check.py", []string{audit, python, check}, ""},
		{"env wrapper", "env -u X FOO=1 ./scripts/audit.sh", []string{env, audit}, ""},
		{"exec and command", "exec command -p ./scripts/audit.sh", []string{audit}, ""},
		{"sourced file", ". ./lib.sh; echo $x", []string{lib}, ""},
		{"builtins only", "read -r line; echo '{\"decision\":\"deny\"}' >&2; exit 2", nil, ""},
		{"function", "f() { echo hi; }; f", nil, ""},
		{"command -v runs nothing", "command -v jq >/dev/null || exit 2", nil, ""},
		{"inline python code", "python3 -c 'print(1)'", []string{python}, ""},
		{"node and its script", "node " + js, []string{node, js}, ""},
		{"#! script", "./tool", []string{nodeScript}, ""},
		{"substitution", "echo $(./scripts/audit.sh)", []string{audit}, ""},
		{"shell given a script", "sh ./scripts/audit.sh", []string{sh, audit}, ""},
		{"~/ is the home folder", "~/hooks/h.sh", []string{homeHook}, ""},
		{"program from a variable", "$HOME/bin/x", nil, "only known when the hook runs"},
		{"program from a substitution", "$(which jq) .", nil, "only known when the hook runs"},
		{"inline shell", "sh -c './scripts/audit.sh'", nil, "inline shell"},
		{"eval", "eval ./scripts/audit.sh", nil, "`eval`"},
		{"missing program", "no-such-program-xyz", nil, "not found on PATH"},
		{"missing script", "python3 nothere.py", nil, "nothere.py"},
		{"bad syntax", "if then", nil, "not a command line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			progs, err := Analyze(tt.command, base, os.Environ())
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range progs {
				got = append(got, p.Real)
				if w := tt.command[p.Start:p.End]; !strings.Contains(w, filepath.Base(p.Word)) {
					t.Errorf("span %q does not hold %q", w, p.Word)
				}
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i], _ = filepath.EvalSymlinks(w)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("programs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// prepared readies command as a hook, its programs with the hashes they have now.
func prepared(t *testing.T, command, base string) Hook {
	t.Helper()
	hs, err := Prepare([]configs.Hook{{Command: command}}, base, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	return hs[0]
}

// A hook's script rewritten after it was approved never runs: the next run is refused with a
// message saying the approval is stale. Race: another process rewrites the script (in place,
// and by renaming a new file over it) while the hook runs a thousand times; every run either
// executes exactly the approved bytes or is refused, never the rewritten ones.
func TestRewrittenHookScriptNeverRuns(t *testing.T) {
	lane.Long(t)
	if runtime.GOOS == "windows" {
		t.Skip("sh scripts")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	approved := "#!/bin/sh\necho approved >> " + out + "\n"
	evil := "#!/bin/sh\necho EVIL >> " + out + "\n"
	pyApproved := "open(" + quotePy(out) + ", 'a').write('approved\\n')\n"
	pyEvil := "open(" + quotePy(out) + ", 'a').write('EVIL\\n')\n"
	jsApproved := "require('fs').appendFileSync(" + quotePy(out) + ", 'approved\\n')\n"
	jsEvil := "require('fs').appendFileSync(" + quotePy(out) + ", 'EVIL\\n')\n"
	cases := []struct {
		name, command, file, approved, evil string
		runs                                int
		needs                               string
	}{
		{"#! script as the program", "./audit.sh", "audit.sh", approved, evil, 1000, ""},
		{"script given to python3", "python3 check.py", "check.py", pyApproved, pyEvil, 100, "python3"},
		{"script given to node", "node check.js", "check.js", jsApproved, jsEvil, 50, "node"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.needs != "" {
				if _, err := exec.LookPath(c.needs); err != nil {
					t.Skipf("%s not installed", c.needs)
				}
			}
			os.Remove(out)
			script := writeExec(t, filepath.Join(base, c.file), c.approved)
			h := prepared(t, c.command, base)
			h.File = "/proj/.massgen/permissions.yaml"
			area, err := launch.NewArea(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer area.Close()
			images := launch.NewImages(area)
			defer images.Close()
			r := &Runner{Area: area, Images: images}
			if res, err := r.Run(context.Background(), h, Input{}, os.Environ()); err != nil || res.Code != 0 {
				t.Fatalf("approved script: %+v %v", res, err)
			}

			// Rewritten after the approval: refused, saying so.
			writeExec(t, script, c.evil)
			_, err = r.Run(context.Background(), h, Input{}, os.Environ())
			var se *StaleError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "approval is stale") ||
				!strings.Contains(err.Error(), "massgen permissions trust /proj/.massgen/permissions.yaml") {
				t.Fatalf("rewritten script: %v", err)
			}

			// The attack as a race.
			writeExec(t, script, c.approved)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				tmp := script + ".new"
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					body := []string{c.approved, c.evil}[i%2]
					if i%4 < 2 {
						os.WriteFile(script, []byte(body), 0o755) // in place
					} else {
						os.WriteFile(tmp, []byte(body), 0o755)
						os.Rename(tmp, script) // a new file swapped in
					}
				}
			})
			var ran, refused atomic.Int64
			for range c.runs {
				res, err := r.Run(context.Background(), h, Input{}, os.Environ())
				switch {
				case errors.As(err, &se):
					refused.Add(1)
				case err != nil || res.Code != 0:
					t.Errorf("run: %+v %v", res, err)
				default:
					ran.Add(1)
				}
			}
			close(stop)
			wg.Wait()
			b, _ := os.ReadFile(out)
			if strings.Contains(string(b), "EVIL") {
				t.Fatalf("a rewritten script ran (%d runs, %d refused)", ran.Load(), refused.Load())
			}
			if n := strings.Count(string(b), "approved"); int64(n) != ran.Load()+1 {
				t.Errorf("%d approved runs recorded, %d hooks ran", n, ran.Load()+1)
			}
			t.Logf("%d runs of the approved bytes, %d refused as stale", ran.Load(), refused.Load())
		})
	}
}

func quotePy(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
