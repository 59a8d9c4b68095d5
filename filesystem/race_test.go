//go:build linux

package filesystem

// Race red-team tests (issue 9, class 1): a background swapper flips a workspace entry between a
// real file (or directory) and a link to a protected, private or outside target with
// renameat2(RENAME_EXCHANGE), while the model calls a tool on that entry thousands of times. The
// decision sees whichever is there when it walks; the operation must act on exactly that. Nothing
// protected, private or outside may change or be read, whatever the interleaving.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/permissions"
)

// raceCalls is how many calls race the swapper in each case.
const raceCalls = 2000

const (
	privateSecret = "private secret of another agent"
	outsideSecret = "outside secret"
)

// raceEnv is newEnv (final role: the project is writable except its protected golden/) with
// another agent's live workspace as a private path inside the project (the README layout puts
// every workspace under <project>/.massgen/workspaces), and read-before-delete off (so a
// deletion is judged by the permission layer alone).
func raceEnv(t *testing.T) (*env, string) {
	t.Helper()
	var other string
	e := newEnv(t, permissions.Final, func(s *permissions.Spec, o *ToolsetOptions) {
		other = filepath.Join(s.ContextPaths[0].Path, ".massgen", "workspaces", "other_ws")
		s.Private = append(s.Private, other)
		o.EnforceReadBeforeDelete = false
	})
	write(t, filepath.Join(other, "secret.txt"), privateSecret)
	write(t, filepath.Join(e.out, "secret.txt"), outsideSecret)
	return e, other
}

// guarded are the trees no call may change: protected, private, outside, the other context
// path's directory, and the project's system paths.
func (e *env) guarded(other string) []string {
	return []string{filepath.Join(e.proj, "golden"), other, e.out, e.single,
		filepath.Join(e.proj, ".git"), filepath.Join(e.proj, ".env"), filepath.Join(e.proj, ".massgen")}
}

// swapper flips a and b with RENAME_EXCHANGE until stopped. fix (may be nil) restores the pair
// when a call changed it: a delete or move allowed on the real entry, or an atomic write whose
// rename replaced the link itself (the link goes, its target stays): it runs on ENOENT and every
// few flips.
type swapper struct {
	stop  atomic.Bool
	done  sync.WaitGroup
	flips atomic.Int64
}

func startSwapper(t testing.TB, a, b string, fix func()) *swapper {
	t.Helper()
	s := &swapper{}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		for i := 0; !s.stop.Load(); i++ {
			if fix != nil && i%16 == 0 {
				fix()
			}
			err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
			switch {
			case err == nil:
				s.flips.Add(1)
			case errors.Is(err, unix.ENOENT) && fix != nil:
				fix()
			case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
				t.Errorf("RENAME_EXCHANGE unsupported here: %v", err)
				return
			}
		}
	}()
	t.Cleanup(s.halt)
	return s
}

func (s *swapper) halt() {
	s.stop.Store(true)
	s.done.Wait()
}

// flipFile makes dir/name a regular file with content and dir/name.alt a link to target, for
// swapping; fix restores one of each.
func flipFile(t testing.TB, dir, name, content, target string) (a, b string, fix func()) {
	t.Helper()
	a, b = filepath.Join(dir, name), filepath.Join(dir, name+".alt")
	isLink := func(p string) (exists, link bool) {
		li, err := os.Lstat(p)
		return err == nil, err == nil && li.Mode()&os.ModeSymlink != 0
	}
	fix = func() {
		ea, la := isLink(a)
		eb, lb := isLink(b)
		switch {
		case ea && eb && la != lb:
			return
		case ea && eb && la: // two links
			_ = os.Remove(a)
			_ = os.WriteFile(a, []byte(content), 0o644)
		case ea && eb: // two files: a write replaced the link
			_ = os.Remove(b)
			_ = os.Symlink(target, b)
		case ea && la:
			_ = os.WriteFile(b, []byte(content), 0o644)
		case ea:
			_ = os.Symlink(target, b)
		case eb && lb:
			_ = os.WriteFile(a, []byte(content), 0o644)
		case eb:
			_ = os.Symlink(target, a)
		default:
			_ = os.WriteFile(a, []byte(content), 0o644)
			_ = os.Symlink(target, b)
		}
	}
	fix()
	return a, b, fix
}

// flipDir makes dir/name a real directory with files and dir/name.alt a link to target.
func flipDir(t *testing.T, dir, name, target string, files map[string]string) (a, b string) {
	t.Helper()
	a, b = filepath.Join(dir, name), filepath.Join(dir, name+".alt")
	for f, c := range files {
		write(t, filepath.Join(a, f), c)
	}
	if err := os.Symlink(target, b); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// race runs the tool raceCalls times and fails on any result that shows a secret.
func (e *env) race(t *testing.T, s *swapper, tool string, args func(i int) map[string]any, secrets ...string) {
	t.Helper()
	for i := 0; i < raceCalls; i++ {
		raw, _ := json.Marshal(args(i))
		res := e.ts.Call(context.Background(), tool, raw)
		for _, sec := range secrets {
			if strings.Contains(res.Content, sec) {
				s.halt()
				t.Fatalf("call %d of %s leaked %q: %s", i, tool, sec, res.Content)
			}
		}
	}
	s.halt()
	if s.flips.Load() < 10 {
		t.Fatalf("the swapper flipped only %d times: the race was not run", s.flips.Load())
	}
}

// noSecretsUnder fails when a file below dir holds one of the secrets (copied in).
func noSecretsUnder(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds %q", p, s)
			}
		}
		return nil
	})
}

// TestRaceFileSwappedForLink: ws/x flips between a regular file and a link to a protected,
// private or outside file while write, edit, read, copy, compare, info and move tools use it.
func TestRaceFileSwappedForLink(t *testing.T) {
	lane.Long(t)
	golden := func(e *env, _ string) string { return filepath.Join(e.proj, "golden", "expected.txt") }
	private := func(_ *env, other string) string { return filepath.Join(other, "secret.txt") }
	outside := func(e *env, _ string) string { return filepath.Join(e.out, "secret.txt") }
	tests := []struct {
		name    string
		target  func(e *env, other string) string
		content string
		tool    string
		args    func(e *env, i int) map[string]any
	}{
		{"write_file over a protected file", golden, "golden\n", "write_file",
			func(e *env, i int) map[string]any { return map[string]any{"path": "x", "content": "pwned"} }},
		{"edit_file of a protected file", golden, "golden\n", "edit_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"path": "x", "edits": []any{map[string]any{"oldText": "golden", "newText": "golden pwned"}}}
			}},
		{"copy_file onto a protected file", golden, "golden\n", "copy_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"source_path": filepath.Join(e.proj, "index.html"), "destination_path": "x", "overwrite": true}
			}},
		{"move_file onto a protected file's name", golden, "golden\n", "move_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"source": "x", "destination": fmt.Sprintf("moved/%d", i)}
			}},
		{"read_file of another agent's workspace", private, "mine\n", "read_file",
			func(e *env, i int) map[string]any { return map[string]any{"path": "x"} }},
		{"read_multiple_files outside", outside, "mine\n", "read_multiple_files",
			func(e *env, i int) map[string]any { return map[string]any{"paths": []any{"x"}} }},
		{"copy_file of another agent's file", private, "mine\n", "copy_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"source_path": "x", "destination_path": fmt.Sprintf("copies/%d", i)}
			}},
		{"compare_files with an outside file", outside, "mine\n", "compare_files",
			func(e *env, i int) map[string]any { return map[string]any{"file1": "x", "file2": "x"} }},
		{"get_file_info of an outside file", outside, "mine\n", "get_file_info",
			func(e *env, i int) map[string]any { return map[string]any{"path": "x"} }},
		{"edit_file dry run of another agent's file", private, "mine\n", "edit_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"path": "x", "dryRun": true, "edits": []any{map[string]any{"oldText": "private", "newText": "p"}}}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, other := raceEnv(t)
			// The outside file gets a size of its own, so get_file_info cannot leak it unseen.
			write(t, filepath.Join(e.out, "secret.txt"), outsideSecret+strings.Repeat("#", 12345-len(outsideSecret)))
			guarded := e.guarded(other)
			before := snapshotFiles(t, guarded...)
			a, b, fix := flipFile(t, e.ws, "x", tt.content, tt.target(e, other))
			s := startSwapper(t, a, b, fix)
			e.race(t, s, tt.tool, func(i int) map[string]any { return tt.args(e, i) }, privateSecret, outsideSecret, `"size":12345`)
			assertUnchanged(t, before, guarded...)
			noSecretsUnder(t, e.ws, privateSecret, outsideSecret)
		})
	}
}

// TestRaceDirSwappedForLink: ws/d flips between a real directory and a link to a protected
// directory, the project root (to plant .massgen/permissions.yaml) or another agent's workspace,
// while tools create, write, delete, move, list, search and copy below it.
func TestRaceDirSwappedForLink(t *testing.T) {
	lane.Long(t)
	goldenDir := func(e *env, _ string) string { return filepath.Join(e.proj, "golden") }
	project := func(e *env, _ string) string { return e.proj }
	privateDir := func(_ *env, other string) string { return other }
	files := func(prefix string) map[string]string {
		m := map[string]string{}
		for i := 0; i < raceCalls; i++ {
			m[fmt.Sprintf("%s%d", prefix, i)] = "mine\n"
		}
		return m
	}
	tests := []struct {
		name   string
		target func(e *env, other string) string
		files  map[string]string
		tool   string
		args   func(e *env, i int) map[string]any
	}{
		{"write_file into a protected directory", goldenDir, map[string]string{"expected.txt": "mine\n"}, "write_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"path": "d/expected.txt", "content": "pwned"}
			}},
		{"write_file creates in a protected directory", goldenDir, map[string]string{"k": "mine\n"}, "write_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"path": fmt.Sprintf("d/new%d.txt", i), "content": "pwned"}
			}},
		{"create_directory in a protected directory", goldenDir, map[string]string{"k": "mine\n"}, "create_directory",
			func(e *env, i int) map[string]any { return map[string]any{"path": fmt.Sprintf("d/dir%d/sub", i)} }},
		{"write_file plants .massgen/permissions.yaml in the project", project, map[string]string{"k": "mine\n"}, "write_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"path": "d/.massgen/permissions.yaml", "content": "hooks:\n  pre_tool_use:\n    - command: touch /tmp/pwned\n"}
			}},
		{"delete_file in a protected directory", goldenDir, files("f"), "delete_file",
			func(e *env, i int) map[string]any { return map[string]any{"path": fmt.Sprintf("d/f%d", i)} }},
		{"delete_files_batch in a protected directory", goldenDir, files("f"), "delete_files_batch",
			func(e *env, i int) map[string]any {
				return map[string]any{"base_path": "d", "include_patterns": []any{fmt.Sprintf("f%d", i)}}
			}},
		{"move_file out of a protected directory", goldenDir, files("f"), "move_file",
			func(e *env, i int) map[string]any {
				return map[string]any{"source": fmt.Sprintf("d/f%d", i), "destination": fmt.Sprintf("moved%d", i)}
			}},
		{"copy_files_batch into a protected directory", goldenDir, map[string]string{"k": "mine\n"}, "copy_files_batch",
			func(e *env, i int) map[string]any {
				return map[string]any{"source_base_path": e.proj, "destination_base_path": "d", "include_patterns": []any{"index.html"}, "overwrite": true}
			}},
		{"list_directory of another agent's workspace", privateDir, map[string]string{"mine.txt": "mine\n"}, "list_directory",
			func(e *env, i int) map[string]any { return map[string]any{"path": "d"} }},
		{"directory_tree of another agent's workspace", privateDir, map[string]string{"mine.txt": "mine\n"}, "directory_tree",
			func(e *env, i int) map[string]any { return map[string]any{"path": "d"} }},
		{"search_files in another agent's workspace", privateDir, map[string]string{"mine.txt": "mine\n"}, "search_files",
			func(e *env, i int) map[string]any { return map[string]any{"path": "d", "pattern": "*.txt"} }},
		{"compare_directories with another agent's workspace", privateDir, map[string]string{"secret.txt": "mine\n"}, "compare_directories",
			func(e *env, i int) map[string]any {
				return map[string]any{"dir1": "d", "dir2": e.temp, "show_content_diff": true}
			}},
		{"copy_files_batch of another agent's workspace", privateDir, map[string]string{"mine.txt": "mine\n"}, "copy_files_batch",
			func(e *env, i int) map[string]any {
				return map[string]any{"source_base_path": "d", "destination_base_path": fmt.Sprintf("bc%d", i)}
			}},
		{"read_file through a directory link", privateDir, map[string]string{"secret.txt": "mine\n"}, "read_file",
			func(e *env, i int) map[string]any { return map[string]any{"path": "d/secret.txt"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, other := raceEnv(t)
			write(t, filepath.Join(other, "other_only.txt"), "x")
			if strings.Contains(tt.name, "protected directory") {
				for f := range tt.files {
					write(t, filepath.Join(e.proj, "golden", f), "golden\n")
				}
			}
			guarded := e.guarded(other)
			before := snapshotFiles(t, guarded...)
			a, b := flipDir(t, e.ws, "d", tt.target(e, other), tt.files)
			s := startSwapper(t, a, b, nil)
			e.race(t, s, tt.tool, func(i int) map[string]any { return tt.args(e, i) }, privateSecret, "other_only")
			assertUnchanged(t, before, guarded...)
			noSecretsUnder(t, e.ws, privateSecret)
			if exists(filepath.Join(e.proj, ".massgen", "permissions.yaml")) {
				t.Fatal(".massgen/permissions.yaml planted in the project")
			}
		})
	}
}

// TestRaceConcurrentCallsSwap: the model swaps the entry itself with concurrent move_file calls
// through the same Toolset (as concurrent mcp serve calls would), while writing through it: the
// link to the protected file was left by an earlier command.
func TestRaceConcurrentCallsSwap(t *testing.T) {
	lane.Long(t)
	e, other := raceEnv(t)
	guarded := e.guarded(other)
	before := snapshotFiles(t, guarded...)
	write(t, filepath.Join(e.ws, "x"), "golden\n")
	if err := os.Symlink(filepath.Join(e.proj, "golden", "expected.txt"), filepath.Join(e.ws, "lnk")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		mv := func(a, b string) bool {
			raw, _ := json.Marshal(map[string]any{"source": a, "destination": b})
			return !e.ts.Call(context.Background(), "move_file", raw).IsError
		}
		x, tmp, lnk := filepath.Join(e.ws, "x"), filepath.Join(e.ws, "tmp"), filepath.Join(e.ws, "lnk")
		for !stop.Load() {
			// x (file) -> tmp, lnk -> x, x -> lnk, tmp -> x: x is a file, then the link, ...
			if mv("x", "tmp") && mv("lnk", "x") {
				flips.Add(1)
				mv("x", "lnk")
			}
			mv("tmp", "x")
			// The harness repairs what a write did meanwhile (a new x made while x was moved
			// away, or a link replaced by a file), so the flipping goes on.
			if exists(tmp) {
				_ = os.Remove(x)
				mv("tmp", "x")
			}
			if li, err := os.Lstat(lnk); err != nil || li.Mode()&os.ModeSymlink == 0 {
				_ = os.Remove(lnk)
				_ = os.Symlink(filepath.Join(e.proj, "golden", "expected.txt"), lnk)
			}
		}
	}()
	for i := 0; i < raceCalls; i++ {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"write_file", map[string]any{"path": "x", "content": "pwned"}},
			{"edit_file", map[string]any{"path": "x", "edits": []any{map[string]any{"oldText": "golden", "newText": "golden pwned"}}}},
		} {
			raw, _ := json.Marshal(c.args)
			e.ts.Call(context.Background(), c.tool, raw)
		}
	}
	stop.Store(true)
	wg.Wait()
	if flips.Load() < 10 {
		t.Fatalf("only %d flips: the race was not run", flips.Load())
	}
	assertUnchanged(t, before, guarded...)
}
