//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxToolCallRSS is what one tool call may take massgen to (issue 20: a 4,096-path
// read_multiple_files took it past 400 MiB with six paths; the whole call needed 40 GiB).
const maxToolCallRSS = 200 << 20

// A read_multiple_files naming 4,096 paths (one 9 MiB file each time, or 4,096 distinct files)
// keeps the real binary's peak RSS under 200 MiB: duplicates are read once and the call's byte
// budget ends the reading. The binary runs under a 4 GiB address-space limit, so a regression
// fails the test instead of exhausting the machine.
func TestReadMultipleFilesBoundedMemory(t *testing.T) {
	nine := bytes.Repeat([]byte("nine MiB of text, one line after another\n"), 9<<20/42)
	tests := []struct {
		name  string
		setup func(t *testing.T, ws string) []string
		check func(t *testing.T, out map[string]any)
	}{
		{name: "one 9 MiB file named 4096 times", setup: func(t *testing.T, ws string) []string {
			writeFile(t, filepath.Join(ws, "nine.txt"), string(nine))
			paths := make([]string, 4096)
			for i := range paths {
				paths[i] = "nine.txt"
			}
			return paths
		}, check: func(t *testing.T, out map[string]any) {
			if files, _ := out["files"].([]any); len(files) != 1 || out["duplicates"] != float64(4095) {
				t.Errorf("%d entries, duplicates %v; want 1 and 4095", len(files), out["duplicates"])
			}
		}},
		{name: "4096 distinct files", setup: func(t *testing.T, ws string) []string {
			chunk := bytes.Repeat([]byte("distinct files, sixty-four KiB each....\n"), 64<<10/40)
			paths := make([]string, 4096)
			for i := range paths {
				paths[i] = fmt.Sprintf("d/f%04d.txt", i)
				writeFile(t, filepath.Join(ws, paths[i]), string(chunk))
			}
			return paths
		}, check: func(t *testing.T, out map[string]any) {
			files, _ := out["files"].([]any)
			note, _ := out["note"].(string)
			want := fmt.Sprintf("truncated: %d more path(s) not read", 4096-len(files))
			if out["truncated"] != true || !strings.HasPrefix(note, want) || len(files) < 200 {
				t.Errorf("%d files returned, note %q", len(files), note)
			}
		}},
		{name: "4096 distinct 9 MiB files", setup: func(t *testing.T, ws string) []string {
			// Each a text head, then a hole: 9 MiB apparent, a few KiB on disk (NUL bytes past
			// the sniffed head read as text, and as JSON each takes six bytes).
			paths := make([]string, 4096)
			for i := range paths {
				paths[i] = fmt.Sprintf("s/f%04d.txt", i)
				p := filepath.Join(ws, paths[i])
				writeFile(t, p, strings.Repeat("text head\n", 900))
				if err := os.Truncate(p, 9<<20); err != nil {
					t.Fatal(err)
				}
			}
			return paths
		}, check: func(t *testing.T, out map[string]any) {
			if out["truncated"] != true {
				t.Errorf("not truncated: %v", out["note"])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, ".massgen", "workspaces", "workspace1")
			paths := tt.setup(t, ws)
			writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("alpha", "m", "http://127.0.0.1:9/v1", "workspace1"))
			args, _ := json.Marshal(map[string]any{"paths": paths})
			cmd := exec.Command("/bin/sh", "-c", `ulimit -v 4194304 && exec "$@"`, "sh",
				binary, "tools", "call", "--config", "cfg.yaml", "--agent", "alpha", "read_multiple_files", string(args))
			cmd.Dir, cmd.Env = dir, cleanEnv(t)
			peak := measured(t, cmd)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("tools call: %v\nstderr: %.2000s", err, errb.String())
			}
			rss := peak() << 10
			t.Logf("peak RSS %.1f MiB, result %.1f MiB", float64(rss)/(1<<20), float64(out.Len())/(1<<20))
			if rss > maxToolCallRSS {
				t.Errorf("peak RSS %d MiB, over %d MiB", rss>>20, maxToolCallRSS>>20)
			}
			if out.Len() > 17<<20 {
				t.Errorf("result is %d MiB", out.Len()>>20)
			}
			var res map[string]any
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatalf("result: %v: %.300s", err, out.String())
			}
			tt.check(t, res)
		})
	}
}
