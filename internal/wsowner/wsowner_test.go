package wsowner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/internal/safefs"
)

func TestClaimAndOwner(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, mg, user string) string // returns the workspace
		owned   bool
		wantHow string
	}{
		{"created under .massgen/workspaces", func(t *testing.T, mg, _ string) string {
			return filepath.Join(mg, "workspaces", "w1")
		}, false, Created},
		{"created outside .massgen", func(t *testing.T, _, user string) string {
			return filepath.Join(user, "new-workspace")
		}, false, Created},
		{"an existing plain folder under workspaces is adopted", func(t *testing.T, mg, _ string) string {
			ws := filepath.Join(mg, "workspaces", "old")
			mkdir(t, ws)
			write(t, filepath.Join(ws, "f.txt"))
			return ws
		}, false, Adopted},
		{"a symlink under workspaces to a user folder is not", func(t *testing.T, mg, user string) string {
			ws := filepath.Join(mg, "workspaces", "link")
			mkdir(t, filepath.Dir(ws))
			if err := os.Symlink(user, ws); err != nil {
				t.Fatal(err)
			}
			return ws
		}, false, ""},
		{"an existing user folder is not", func(t *testing.T, _, user string) string {
			return user
		}, false, ""},
		{"an existing user folder given with cwd_owned", func(t *testing.T, _, user string) string {
			return user
		}, true, Owned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			mg, user := filepath.Join(base, "project", ".massgen"), filepath.Join(base, "user")
			mkdir(t, user)
			write(t, filepath.Join(user, "precious.txt"))
			ws := tt.setup(t, mg, user)
			how, err := Claim(ws, mg, tt.owned)
			if err != nil || how != tt.wantHow {
				t.Fatalf("Claim = %q, %v; want %q", how, err, tt.wantHow)
			}
			root, err := safefs.OpenDirPath(ws)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			got, err := Owner(root, ws, mg)
			var no *NotOwnedError
			switch {
			case tt.wantHow == "" && !errors.As(err, &no):
				t.Errorf("Owner = %q, %v; want a NotOwnedError", got, err)
			case tt.wantHow != "" && (err != nil || got != tt.wantHow):
				t.Errorf("Owner = %q, %v; want %q", got, err, tt.wantHow)
			}
			// A second run finds the same record.
			if how, err := Claim(ws, mg, tt.owned); err != nil || how != tt.wantHow {
				t.Errorf("second Claim = %q, %v", how, err)
			}
		})
	}
}

// A folder replaced after massgen made it (by the user's own folder, or a symlink to one) is not
// the recorded one.
func TestReplacedFolderIsNotOwned(t *testing.T) {
	for _, replace := range []string{"folder", "symlink"} {
		t.Run(replace, func(t *testing.T) {
			base := t.TempDir()
			mg, user := filepath.Join(base, ".massgen"), filepath.Join(base, "user")
			mkdir(t, user)
			ws := filepath.Join(mg, "workspaces", "w1")
			if how, err := Claim(ws, mg, false); err != nil || how != Created {
				t.Fatalf("Claim = %q, %v", how, err)
			}
			if err := os.Remove(ws); err != nil {
				t.Fatal(err)
			}
			if replace == "folder" {
				// The user's own folder moved into place (a folder made anew could reuse the
				// inode number, which the record cannot tell apart).
				if err := os.Rename(user, ws); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink(user, ws); err != nil {
				t.Fatal(err)
			}
			root, err := safefs.OpenDirPath(ws)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			var no *NotOwnedError
			if how, err := Owner(root, ws, mg); !errors.As(err, &no) {
				t.Errorf("Owner of a replaced %s = %q, %v", replace, how, err)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	tests := []struct{ dir, massgen, want string }{
		{"/p/.massgen/workspaces/w1", "", "/p/.massgen/state/workspaces"},
		{"/p/.massgen/workspaces/w1", "/q/.massgen", "/p/.massgen/state/workspaces"},
		{"/home/u/scratch", "/q/.massgen", "/q/.massgen/state/workspaces"},
		{"/home/u/scratch", "", ""},
	}
	for _, tt := range tests {
		if got := Registry(tt.dir, tt.massgen); got != tt.want {
			t.Errorf("Registry(%s, %s) = %q, want %q", tt.dir, tt.massgen, got, tt.want)
		}
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}
