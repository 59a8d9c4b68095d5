//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/safefs"
)

// TestCleanupTrashSearchOnlyUnprivileged runs TestCleanupTrashSearchOnly as nobody (setpriv):
// as root a search-only directory can still be opened for reading, so only an unprivileged
// run shows the fault (on main the planted entry was deleted, not kept in the trash).
func TestCleanupTrashSearchOnlyUnprivileged(t *testing.T) {
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	runUnprivileged(t, "TestCleanupTrashSearchOnly")
}

// runUnprivileged runs the test name of this binary as nobody (setpriv), from a copy of the
// binary in a directory nobody can reach, and fails unless it passed.
func runUnprivileged(t *testing.T, name string, env ...string) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	copyFile(t, self, bin)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run", "^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), unprivEnv+"=1", "TMPDIR="+tmp), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("unprivileged run:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("unprivileged run: %v", err)
	}
}

// trashIn is a Run Trash that moves entries to trashDir as the filesystem toolset does.
func trashIn(trashDir string) func(dir *os.File, name, path string) (string, error) {
	return func(dir *os.File, name, path string) (string, error) {
		d, err := safefs.FromFile(dir, filepath.Dir(path))
		if err != nil {
			return "", err
		}
		defer d.Close()
		fi, err := d.Lstat(name)
		if err != nil {
			return "", err
		}
		e, err := changes.MoveEntryToTrash(trashDir, d, name, path, fi, "agent_a", nil)
		return e.ID, err
	}
}

// TestCleanupUnlistedUnprivileged runs TestCleanupUnlisted as nobody: as root every
// directory can be listed, so only an unprivileged run shows the hole (on main the planted
// entries stayed, with no message).
func TestCleanupUnlistedUnprivileged(t *testing.T) {
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	runUnprivileged(t, "TestCleanupUnlisted")
}

// foreignEnv names the project TestCleanupUnlistedForeign cleans up after (set up by root).
const foreignEnv = "MASSGEN_SANDBOX_FOREIGN_PROJECT"

// TestCleanupUnlistedForeignUnprivileged runs TestCleanupUnlistedForeign as nobody, on a
// project (nobody's) holding a search-only directory of root's: one the clean-up can neither
// list nor make listable.
func TestCleanupUnlistedForeignUnprivileged(t *testing.T) {
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	base := t.TempDir()
	for d := base; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	proj := filepath.Join(base, "proj")
	mustWrite(t, filepath.Join(proj, "x", "f.txt"), "f")
	if err := os.Chown(proj, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(proj, "x"), 0o311); err != nil {
		t.Fatal(err)
	}
	runUnprivileged(t, "TestCleanupUnlistedForeign", foreignEnv+"="+proj)
}

// TestCleanupUnlistedForeign: a directory the clean-up cannot list (not massgen's user's, so
// not made listable either) is named in the command's result, not skipped in silence.
func TestCleanupUnlistedForeign(t *testing.T) {
	proj := os.Getenv(foreignEnv)
	if proj == "" {
		t.Skip("run by TestCleanupUnlistedForeignUnprivileged")
	}
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			mustWrite(t, filepath.Join(ws, "w.txt"), "w")
			pol := Policy{Write: []string{proj, ws}, Own: []string{ws}}
			res, err := Run(context.Background(), withMode(mode, Options{Dir: proj, Policy: pol, Timeout: 30 * time.Second,
				Log: zaptest.NewLogger(t), Command: "echo ok"}))
			if err != nil || res.Stdout != "ok\n" {
				t.Fatalf("command: %+v %v", res, err)
			}
			want := "massgen: could not check for .git, .env and .massgen entries in " + filepath.Join(proj, "x") + ":"
			t.Logf("stderr: %q", res.Stderr)
			if !strings.Contains(res.Stderr, want) || strings.Count(res.Stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one note %q", res.Stderr, want)
			}
			if fi, err := os.Lstat(filepath.Join(proj, "x")); err != nil || fi.Mode().Perm() != 0o311 {
				t.Errorf("x: %v %v", fi, err)
			}
		})
	}
}

// TestCleanupUnlisted: .git/.env a command planted in a directory it then made unlistable
// (chmod 311, or 000) are taken away all the same (to the trash), and the directory gets its
// mode back; a .git that was in such a directory before the command stays.
func TestCleanupUnlisted(t *testing.T) {
	tests := []struct {
		name    string
		before  func(t *testing.T, proj string) // set-up before the command
		command string
		gone    []string          // rel paths taken away (to the trash)
		kept    []string          // rel paths that stay
		modes   map[string]uint32 // rel dir -> its mode afterwards
	}{
		{name: "new dir", command: "mkdir -p d/.git && echo x > d/.git/config && echo K=1 > d/.env && chmod 311 d && echo ok",
			gone: []string{"d/.env", "d/.git"}, modes: map[string]uint32{"d": 0o311}},
		{name: "existing dir", before: func(t *testing.T, proj string) { mustWrite(t, filepath.Join(proj, "d", "f.txt"), "f") },
			command: "mkdir d/.git && echo x > d/.git/config && echo K=1 > d/.env && chmod 311 d && echo ok",
			gone:    []string{"d/.env", "d/.git"}, kept: []string{"d/f.txt"}, modes: map[string]uint32{"d": 0o311}},
		{name: "nested", command: "mkdir -p d/e/.massgen && echo K=1 > d/e/.env && chmod 000 d/e && chmod 311 d && echo ok",
			gone: []string{"d/e/.env", "d/e/.massgen"}, modes: map[string]uint32{"d": 0o311, "d/e": 0}},
		{name: "pre-existing .git stays", before: func(t *testing.T, proj string) {
			mustWrite(t, filepath.Join(proj, "d", ".git", "config"), "user")
			mustWrite(t, filepath.Join(proj, "d", ".env"), "K=user")
			if err := os.Chmod(filepath.Join(proj, "d"), 0o311); err != nil {
				t.Fatal(err)
			}
		}, command: "echo ok", kept: []string{"d/.git/config", "d/.env"}, modes: map[string]uint32{"d": 0o311}},
	}
	for _, mode := range modes(t) {
		for _, tc := range tests {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				base := t.TempDir()
				proj := filepath.Join(base, "proj")
				ws := filepath.Join(base, "ws")
				mustWrite(t, filepath.Join(ws, "w.txt"), "w")
				mustWrite(t, filepath.Join(proj, "f.txt"), "f")
				t.Cleanup(func() {
					os.Chmod(filepath.Join(proj, "d"), 0o755)
					os.Chmod(filepath.Join(proj, "d", "e"), 0o755)
				})
				if tc.before != nil {
					tc.before(t, proj)
				}
				pol := Policy{Write: []string{proj, ws}, Own: []string{ws}}
				res, err := Run(context.Background(), withMode(mode, Options{Dir: proj, Policy: pol, Timeout: 30 * time.Second,
					Trash: trashIn(filepath.Join(base, "massgen", "trash", "run1")), Log: zaptest.NewLogger(t), Command: tc.command}))
				if err != nil || res.Stdout != "ok\n" {
					t.Fatalf("command: %+v %v", res, err)
				}
				for rel, want := range tc.modes {
					if fi, err := os.Lstat(filepath.Join(proj, rel)); err != nil || uint32(fi.Mode().Perm()) != want {
						t.Errorf("%s: mode %v %v, want %o", rel, fi, err, want)
					}
				}
				var wantRemoved []string
				for _, rel := range tc.gone {
					p := filepath.Join(proj, rel)
					wantRemoved = append(wantRemoved, p)
					if exists(p) {
						t.Errorf("%s was not taken away: stderr %q", rel, res.Stderr)
					}
				}
				for _, rel := range tc.kept {
					if !exists(filepath.Join(proj, rel)) {
						t.Errorf("%s was taken away: stderr %q", rel, res.Stderr)
					}
				}
				slices.Sort(res.Removed)
				if !slices.Equal(res.Removed, wantRemoved) {
					t.Errorf("removed %v, want %v (stderr %q)", res.Removed, wantRemoved, res.Stderr)
				}
				ents, err := changes.ListTrash(filepath.Join(base, "massgen"))
				var inTrash []string
				for _, e := range ents {
					inTrash = append(inTrash, e.OriginalPath)
				}
				slices.Sort(inTrash)
				if err != nil || !slices.Equal(inTrash, wantRemoved) {
					t.Errorf("trash %v %v, want %v", inTrash, err, wantRemoved)
				}
				if strings.Contains(res.Stderr, "could not") {
					t.Errorf("clean-up failed: %q", res.Stderr)
				}
			})
		}
	}
}

// TestCleanupTrashSearchOnly: a protected path a command planted inside a directory it then
// made search-only (chmod 311) is moved to the trash (changes.MoveEntryToTrash, as the
// filesystem toolset does), not deleted: the clean-up hands the trash the directory's own
// O_PATH handle rather than reopening it for reading.
func TestCleanupTrashSearchOnly(t *testing.T) {
	tests := []struct {
		name    string
		before  bool // d exists before the command
		command string
	}{
		{"existing dir", true, "echo K=planted > d/.env && chmod 311 d && echo ok"},
		{"new dir", false, "mkdir d && echo K=planted > d/.env && chmod 311 d && echo ok"},
	}
	for _, mode := range modes(t) {
		for _, tc := range tests {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				base := t.TempDir()
				proj := filepath.Join(base, "proj")
				ws := filepath.Join(base, "ws")
				trashDir := filepath.Join(base, "massgen", "trash", "run1")
				mustWrite(t, filepath.Join(ws, "w.txt"), "w")
				mustWrite(t, filepath.Join(proj, "f.txt"), "f")
				if tc.before {
					if err := os.Mkdir(filepath.Join(proj, "d"), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				t.Cleanup(func() { os.Chmod(filepath.Join(proj, "d"), 0o755) })
				planted := filepath.Join(proj, "d", ".env")
				pol := Policy{Write: []string{proj, ws}, Own: []string{ws}, Keep: []string{planted}}
				trash := func(dir *os.File, name, path string) (string, error) {
					d, err := safefs.FromFile(dir, filepath.Dir(path))
					if err != nil {
						return "", err
					}
					defer d.Close()
					fi, err := d.Lstat(name)
					if err != nil {
						return "", err
					}
					e, err := changes.MoveEntryToTrash(trashDir, d, name, path, fi, "agent_a", nil)
					return e.ID, err
				}
				res, err := Run(context.Background(), withMode(mode, Options{Dir: proj, Policy: pol, Timeout: 30 * time.Second,
					Trash: trash, Log: zaptest.NewLogger(t), Command: tc.command}))
				if err != nil || res.Stdout != "ok\n" {
					t.Fatalf("plant command: %+v %v", res, err)
				}
				if fi, err := os.Stat(filepath.Join(proj, "d")); err != nil || fi.Mode().Perm() != 0o311 {
					t.Fatalf("d is not search-only: %v %v", fi, err)
				}
				if exists(planted) || !slices.Contains(res.Removed, planted) {
					t.Fatalf("planted .env not taken away: removed %v, stderr %q", res.Removed, res.Stderr)
				}
				if !strings.Contains(res.Stderr, "moved to the trash") {
					t.Errorf("not moved to the trash: %q", res.Stderr)
				}
				ents, err := changes.ListTrash(filepath.Join(base, "massgen"))
				if err != nil || len(ents) != 1 || ents[0].OriginalPath != planted {
					t.Fatalf("trash: %+v %v", ents, err)
				}
				if b, err := os.ReadFile(ents[0].Data); err != nil || string(b) != "K=planted\n" {
					t.Errorf("trash data %q %v", b, err)
				}
			})
		}
	}
}
