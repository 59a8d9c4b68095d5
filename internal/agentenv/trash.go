package agentenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	cp "github.com/otiai10/copy"

	"github.com/massgen-go/massgen/filesystem"
)

// trashEntry moves path (a file, link or folder in a workspace the config gives massgen) into a
// new slot of trashDir in the layout filesystem's trash uses (<seq>/meta.json and <seq>/data), so
// `massgen trash list` shows it and `massgen trash restore` puts it back.
func trashEntry(trashDir, path, agent string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(trashDir, 0o700); err != nil {
		return fmt.Errorf("trash: %w", err)
	}
	slot, seq, err := newTrashSlot(trashDir)
	if err != nil {
		return err
	}
	run := filepath.Base(trashDir)
	e := filesystem.TrashEntry{ID: run + "/" + seq, Run: run, OriginalPath: path, Agent: agent,
		DeletedAt: time.Now().UTC(), IsDir: fi.IsDir(), Size: fi.Size(), Mode: fi.Mode().String()}
	meta, err := json.MarshalIndent(e, "", "  ")
	if err == nil {
		// The record first: a crash after the move still leaves a restorable entry.
		err = os.WriteFile(filepath.Join(slot, "meta.json"), meta, 0o600)
	}
	if err == nil {
		err = os.Rename(path, filepath.Join(slot, "data"))
		if errors.Is(err, syscall.EXDEV) {
			if err = cp.Copy(path, filepath.Join(slot, "data"), cp.Options{OnSymlink: func(string) cp.SymlinkAction { return cp.Shallow }}); err == nil {
				err = os.RemoveAll(path)
			}
		}
	}
	if err != nil {
		_ = os.RemoveAll(slot)
		return fmt.Errorf("moving %s to the trash: %w", path, err)
	}
	return nil
}

// newTrashSlot creates the next numbered folder in trashDir.
func newTrashSlot(trashDir string) (string, string, error) {
	ents, _ := os.ReadDir(trashDir)
	for n := len(ents) + 1; n < len(ents)+10000; n++ {
		seq := fmt.Sprintf("%04d", n)
		p := filepath.Join(trashDir, seq)
		err := os.Mkdir(p, 0o700)
		if err == nil {
			return p, seq, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", "", fmt.Errorf("trash: %w", err)
		}
	}
	return "", "", errors.New("trash: no free slot")
}
