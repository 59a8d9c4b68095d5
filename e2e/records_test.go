//go:build unix

package e2e

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runUmask runs massgen in dir under the given umask (through sh, so only that process has it).
func runUmask(t *testing.T, dir, umask string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", "umask " + umask + ` && exec "$@"`, "sh", binary}, args...)...)
	cmd.Dir, cmd.Env = dir, cleanEnv(t)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running massgen: %v", err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// contentZones are the folders of .massgen whose entries are content massgen copied from agents
// or from the user, which keeps its own modes (the folder holding them is private): an agent's
// workspace, a snapshot, a temp workspace's anonymous copy, a log copy of a snapshot, a session
// turn's workspace copy, and a trashed file or tree (data). Paths are relative to .massgen.
var contentZones = regexp.MustCompile(`^(workspaces/[^/]+|snapshots/[^/]+|temp_workspaces/[^/]+/[^/]+|logs/[^/]+/(turn_[0-9]+/)?snapshots/[^/]+/[^/]+|sessions/[^/]+/turn_[0-9]+/workspace)/.+$|^trash/[^/]+/[^/]+/data(/.*)?$`)

// massgen's records are private to the user whatever the umask: after a run that snapshots,
// fills temp workspaces, trashes a file from a context path, journals and saves a session, and
// after `undo` and `trash restore`, every directory under .massgen is 0700 and every file 0600,
// except content copied from agents or the user (contentZones), which keeps its own modes.
func TestRecordsArePrivate(t *testing.T) {
	for _, umask := range []string{"022", "000"} {
		t.Run("umask "+umask, func(t *testing.T) {
			dir := t.TempDir()
			proj := filepath.Join(dir, "project")
			writeFile(t, filepath.Join(proj, "index.html"), "<h1>original</h1>\n")
			writeFile(t, filepath.Join(proj, "old.txt"), "obsolete\n")
			if err := os.Chmod(filepath.Join(proj, "old.txt"), 0o640); err != nil {
				t.Fatal(err)
			}
			index, old := filepath.Join(proj, "index.html"), filepath.Join(proj, "old.txt")
			script := func(tr turn) reply {
				switch {
				case !tr.final && tr.step == 0:
					return reply{calls: []toolCall{tc("write_file", map[string]any{"path": "notes.md", "content": "work\n"})}}
				case !tr.final:
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "ready"})}}
				case tr.step == 0:
					return reply{calls: []toolCall{
						tc("write_file", map[string]any{"path": index, "content": "<h1>changed</h1>\n"}),
						tc("read_file", map[string]any{"path": old}),
						tc("delete_file", map[string]any{"path": old}),
						tc("execute_command", map[string]any{"command": "echo made > made.txt"}),
					}}
				default:
					return reply{text: "Delivered."}
				}
			}
			p := newProvider(t, map[string]func(turn) reply{"m": script})
			writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))

			if r := runUmask(t, dir, umask, "--config", "cfg.yaml", "--context", "project", "--display", "plain", "Deliver"); r.code != 0 {
				t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
			}
			if r := runUmask(t, dir, umask, "undo"); r.code != 0 {
				t.Fatalf("undo: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if got := readFile(t, old); got != "obsolete\n" {
				t.Fatalf("undo did not restore old.txt: %q", got)
			}

			mg := filepath.Join(dir, ".massgen")
			seen := map[string]bool{}
			var content []string
			err := filepath.WalkDir(mg, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(mg, p)
				fi, err := os.Lstat(p)
				if err != nil {
					return err
				}
				if rel != "." {
					seen[strings.SplitN(rel, string(filepath.Separator), 2)[0]] = true
				}
				switch {
				case fi.Mode()&fs.ModeSymlink != 0:
					return nil // a link's mode means nothing
				case rel != "." && contentZones.MatchString(filepath.ToSlash(rel)):
					content = append(content, rel)
					return nil
				case fi.IsDir() && fi.Mode().Perm() != 0o700:
					t.Errorf("directory .massgen/%s is %v, want 0700", rel, fi.Mode().Perm())
				case !fi.IsDir() && fi.Mode().Perm() != 0o600:
					t.Errorf("file .massgen/%s is %v, want 0600", rel, fi.Mode().Perm())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// The run made every kind of record the test means to check.
			for _, want := range []string{"logs", "sessions", "snapshots", "temp_workspaces", "trash", "workspaces", "state"} {
				if !seen[want] {
					t.Errorf(".massgen/%s was not made (have %v)", want, seen)
				}
			}
			// Content keeps its own modes: the user's file, trashed and put back by undo, is
			// 0640 as it was; agents' files stay as written (write_file makes 0644).
			if fi, err := os.Stat(old); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("the restored user file: %v, %v; want 0640", fi, err)
			}
			var agentFile bool
			for _, rel := range content {
				if filepath.Base(rel) == "notes.md" {
					fi, _ := os.Stat(filepath.Join(mg, rel))
					agentFile = true
					if fi.Mode().Perm() != 0o644 {
						t.Errorf(".massgen/%s (an agent's file) is %v, want its own 0644", rel, fi.Mode().Perm())
					}
				}
			}
			if !agentFile {
				t.Errorf("no copy of the agent's notes.md under .massgen: %v", content)
			}
		})
	}
}
