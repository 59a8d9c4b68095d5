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
	"syscall"
	"testing"
	"time"
)

// runUmask runs massgen in dir under the given umask (through sh, so only that process has it).
func runUmask(t *testing.T, dir, umask string, args ...string) result {
	t.Helper()
	return runShell(t, dir, "umask "+umask, args...)
}

// runShell runs massgen in dir after the shell commands prelude (a umask, a ulimit).
func runShell(t *testing.T, dir, prelude string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", prelude + ` && exec "$@"`, "sh", binary}, args...)...)
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

// diskBlocks is the disk space (bytes) the files under dir take.
func diskBlocks(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) == nil {
			total += int64(st.Blocks) * 512
		}
		return nil
	})
	return total
}

// A 1 TiB sparse file (`truncate -s 1T big`) and a 64 MiB one appear in an agent's workspace
// beside its work: the snapshot and the session copy of that workspace are refused with a message
// naming the size and the file, the answer is still given, nothing near a terabyte is written,
// and the run ends "Not saved" with exit 4 (partial). Without the 1 TiB file, the 64 MiB sparse
// file costs no blocks in the snapshot and the session. (The files are made by the test between
// the agent's steps, as a command would: the command's own limits are not what is tested here.)
func TestSparseFilesInWorkspace(t *testing.T) {
	for _, huge := range []bool{false, true} {
		t.Run(map[bool]string{false: "64 MiB of holes", true: "1 TiB of holes"}[huge], func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, ".massgen", "workspaces", "workspace1")
			sparse := func(name string, size int64) {
				f, err := os.Create(filepath.Join(ws, name))
				if err == nil {
					err = f.Truncate(size)
					f.Close()
				}
				if err != nil {
					t.Error(err)
				}
			}
			script := func(tr turn) reply {
				switch {
				case tr.final:
					return reply{text: "Presented."}
				case tr.step == 0:
					return reply{calls: []toolCall{tc("write_file", map[string]any{"path": "notes.md", "content": "work\n"})}}
				default:
					sparse("holes", 64<<20)
					if huge {
						sparse("big", 1<<40)
					}
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "made files"})}}
				}
			}
			p := newProvider(t, map[string]func(turn) reply{"m": script})
			writeFile(t, filepath.Join(dir, "cfg.yaml"), soloConfig(p, "m"))
			// No file of massgen's may pass 1 GiB: a regression fails here instead of filling the disk.
			r := runShell(t, dir, "ulimit -f 2097152", "--config", "cfg.yaml", "--display", "plain", "Make files")
			if fi, err := os.Stat(filepath.Join(ws, "holes")); err != nil || fi.Size() != 64<<20 {
				t.Fatalf("the command did not run: %v, %v\n%s", fi, err, r.stderr)
			}
			if r.stdout != "Presented.\n" {
				t.Errorf("stdout %q\n%s", r.stdout, r.stderr)
			}
			mg := filepath.Join(dir, ".massgen")
			used := diskBlocks(t, mg) - diskBlocks(t, ws)
			t.Logf("exit %d; .massgen takes %d KiB besides the workspace", r.code, used>>10)
			if used > 16<<20 {
				t.Errorf(".massgen takes %d MiB besides the workspace: holes were written", used>>20)
			}
			snaps, _ := filepath.Glob(filepath.Join(mg, "snapshots", "solo", "*"))
			turns, _ := filepath.Glob(filepath.Join(mg, "sessions", "*", "turn_1", "workspace", "*"))
			if !huge {
				if r.code != 0 || len(snaps) != 2 || len(turns) != 2 {
					t.Fatalf("exit %d, snapshot %v, session copy %v\n%s", r.code, snaps, turns, r.stderr)
				}
				return
			}
			if r.code != 4 || len(snaps) != 0 || len(turns) != 0 {
				t.Errorf("exit %d (want 4), snapshot %v, session copy %v", r.code, snaps, turns)
			}
			for _, want := range []string{"saving the answer snapshot", "holds 1.0 TiB of files", "largest file is big (1.0 TiB)", "Not saved: turn 1 was not saved in the session"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
		})
	}
}
