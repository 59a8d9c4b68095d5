// Package wsowner records which agent workspaces massgen owns, so that it only ever clears
// folders it made: an agent's workspace is emptied when the agent restarts, and a folder the user
// pointed cwd at (the project itself, say) must never be emptied by mistake.
//
// Massgen owns a workspace when it created it, when it is a plain folder under
// <.massgen>/workspaces/ from before records were kept (adopted), or when the config gives it
// with cwd_owned: true. The record is a small file under <.massgen>/state/workspaces/, named by a
// hash of the folder's path and holding the folder's device and inode: agents cannot write under
// .massgen/, and a folder replaced since (by another folder, a symlink or a mount) no longer
// matches its record.
package wsowner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/private"
	"github.com/massgen-go/massgen/internal/safefs"
)

// How massgen came to own a workspace.
const (
	Created = "created"   // massgen made the folder
	Adopted = "adopted"   // a plain folder under .massgen/workspaces/ made before records were kept
	Owned   = "cwd_owned" // the config gives it to massgen (agents[].backend.cwd_owned)
)

// record is one owned workspace.
type record struct {
	Dev   uint64    `json:"dev"`
	Ino   uint64    `json:"ino"`
	How   string    `json:"how"`
	Since time.Time `json:"since"`
}

// NotOwnedError says massgen does not own a folder, so it will not clear it.
type NotOwnedError struct {
	Dir    string
	Reason string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("%s was not cleared (its files are kept): %s; massgen only clears workspaces it created, or one the config gives it with cwd_owned: true", e.Dir, e.Reason)
}

// Registry is the folder holding the records for dir: under the nearest .massgen folder above
// dir, else under massgenDir ("" when there is neither).
func Registry(dir, massgenDir string) string {
	if mg := layout.Enclosing(dir); mg != "" {
		massgenDir = mg
	}
	if massgenDir == "" {
		return ""
	}
	return layout.At(massgenDir).OwnedWorkspaces()
}

func recordPath(registry, dir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(dir)))
	return filepath.Join(registry, hex.EncodeToString(sum[:16])+".json")
}

// Claim makes the workspace dir (absolute) if it is missing and records that massgen owns it:
// when it created it, when it is a plain folder under <massgenDir>/workspaces/ with no record
// yet (adopted), or when owned is set. It returns how massgen owns dir, or "" when it does not
// (dir existed and is the user's: it is used as is and never cleared).
func Claim(dir, massgenDir string, owned bool) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("wsowner: %q is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	// Parents inside a .massgen folder are massgen's (.massgen/workspaces): private; elsewhere
	// they are the user's folders, made as mkdir -p would. The workspace itself is massgen's
	// container for the agent's files: private either way.
	parentMode := os.FileMode(0o755)
	if layout.Enclosing(dir) != "" {
		parentMode = private.DirMode
	}
	if err := os.MkdirAll(filepath.Dir(dir), parentMode); err != nil {
		return "", fmt.Errorf("workspace %s: %w", dir, err)
	}
	how := ""
	switch err := os.Mkdir(dir, private.DirMode); {
	case err == nil:
		how = Created
	case !errors.Is(err, fs.ErrExist):
		return "", fmt.Errorf("workspace %s: %w", dir, err)
	}
	reg := Registry(dir, massgenDir)
	if reg == "" {
		return "", nil // nowhere to keep a record: never cleared
	}
	root, err := safefs.OpenDirPath(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", dir, err)
	}
	defer root.Close()
	id, err := identity(root)
	if err != nil {
		return "", nil // no identity on this platform: never cleared
	}
	if how == "" {
		if rec, ok := readRecord(reg, dir); ok && rec.Dev == id.dev && rec.Ino == id.ino {
			return rec.How, nil // made by an earlier run
		}
		switch {
		case owned:
			how = Owned
		case adoptable(dir, massgenDir):
			how = Adopted
		default:
			return "", nil
		}
	}
	rec := record{Dev: id.dev, Ino: id.ino, How: how, Since: time.Now().UTC()}
	if err := writeRecord(reg, dir, rec); err != nil {
		return "", fmt.Errorf("workspace %s: recording that massgen owns it: %w", dir, err)
	}
	return how, nil
}

// adoptable: a real folder (not a symlink, not a mount point) directly or deeper under
// <massgenDir>/workspaces/, as earlier versions of massgen made them.
func adoptable(dir, massgenDir string) bool {
	if massgenDir == "" {
		return false
	}
	parent := layout.At(massgenDir).Workspaces()
	rel, err := filepath.Rel(parent, dir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false
	}
	li, err := os.Lstat(dir)
	if err != nil || !li.IsDir() {
		return false
	}
	return sameDevice(dir, parent)
}

// Owner says how massgen owns the open folder root, found at dir ("" when it does not: no
// record, or the folder is not the one recorded). massgenDir is where records are kept for
// folders that are in no .massgen folder ("": such folders are never owned).
func Owner(root *safefs.Dir, dir, massgenDir string) (string, error) {
	reg := Registry(dir, massgenDir)
	if reg == "" {
		return "", &NotOwnedError{Dir: dir, Reason: "massgen did not create it"}
	}
	rec, ok := readRecord(reg, dir)
	if !ok {
		return "", &NotOwnedError{Dir: dir, Reason: "massgen did not create it"}
	}
	id, err := identity(root)
	if err != nil {
		return "", &NotOwnedError{Dir: dir, Reason: err.Error()}
	}
	if rec.Dev != id.dev || rec.Ino != id.ino {
		return "", &NotOwnedError{Dir: dir, Reason: "it is not the folder massgen created there (it was replaced since)"}
	}
	return rec.How, nil
}

func readRecord(reg, dir string) (record, bool) {
	raw, err := os.ReadFile(recordPath(reg, dir))
	var rec record
	if err != nil || json.Unmarshal(raw, &rec) != nil || rec.How == "" {
		return record{}, false
	}
	return rec, true
}

// writeRecord writes the record atomically (temp file and rename).
func writeRecord(reg, dir string, rec record) error {
	if err := os.MkdirAll(reg, private.DirMode); err != nil {
		return err
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	p := recordPath(reg, dir)
	f, err := os.CreateTemp(reg, ".tmp-")
	if err != nil {
		return err
	}
	_, err = f.Write(append(raw, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

type fileID struct{ dev, ino uint64 }
