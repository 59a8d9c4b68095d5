package changes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/safefs"
)

// TrashEntry is one file or directory deleted from a context path and kept in
// <.massgen>/trash/<run>/<seq>/ (data + meta.json) until restored.
type TrashEntry struct {
	ID           string    `json:"id"` // "<run>/<seq>"
	Run          string    `json:"run"`
	OriginalPath string    `json:"original_path"`
	Agent        string    `json:"agent,omitempty"`
	DeletedAt    time.Time `json:"deleted_at"`
	IsDir        bool      `json:"is_dir"`
	Size         int64     `json:"size"`
	Mode         string    `json:"mode,omitempty"`
	// Data is where the entry is kept now (<slot>/data); not in meta.json.
	Data string `json:"-"`
}

const trashMeta = "meta.json"

// MoveToTrash moves the entry at path (a final link itself, not its target) into a new slot of
// trashDir, recorded as removed by by: what massgen clears from a folder the config gave it
// goes where `massgen trash restore` finds it.
func MoveToTrash(trashDir, path, by string) error {
	w, err := safefs.Resolve(path, true)
	if err != nil {
		return fmt.Errorf("moving %s to the trash: %w", path, err)
	}
	defer w.Close()
	if !w.Exists {
		return fmt.Errorf("moving %s to the trash: %w", path, fs.ErrNotExist)
	}
	_, err = MoveEntryToTrash(trashDir, w.Dir, w.Name, w.Path, w.Info, by, nil)
	return err
}

// MoveEntryToTrash moves the entry name of dir (canonical path p, lstat info) into a new slot of
// trashDir, recording who removed it (an agent, or "massgen undo"). before (may be nil) is told
// where the entry's data will be, once the slot is ready and before the move; its error stops
// the move. The move is a renameat from the held directory; across filesystems the data is
// copied through descriptors and then removed.
func MoveEntryToTrash(trashDir string, dir *safefs.Dir, name, p string, info safefs.Info, by string, before func(data string) error) (TrashEntry, error) {
	if err := os.MkdirAll(trashDir, 0o700); err != nil {
		return TrashEntry{}, fmt.Errorf("trash: %w", err)
	}
	slot, seq, err := newSlot(trashDir)
	if err != nil {
		return TrashEntry{}, err
	}
	run := filepath.Base(trashDir)
	e := TrashEntry{ID: run + "/" + seq, Run: run, OriginalPath: p, Agent: by,
		DeletedAt: time.Now().UTC(), IsDir: info.IsDir(), Size: info.Size, Mode: info.Mode.String()}
	// Metadata first: a crash after the move still leaves a restorable entry.
	b, _ := json.MarshalIndent(e, "", "  ")
	if err := os.WriteFile(filepath.Join(slot, trashMeta), b, 0o600); err != nil {
		os.RemoveAll(slot)
		return TrashEntry{}, fmt.Errorf("trash: %w", err)
	}
	sw, err := safefs.Resolve(slot, false)
	if err != nil {
		os.RemoveAll(slot)
		return TrashEntry{}, fmt.Errorf("trash: %w", err)
	}
	defer sw.Close()
	sd, err := sw.OpenDir()
	if err != nil {
		os.RemoveAll(slot)
		return TrashEntry{}, fmt.Errorf("trash: %w", err)
	}
	defer sd.Close()
	if before != nil {
		if err := before(filepath.Join(slot, "data")); err != nil {
			os.RemoveAll(slot)
			return TrashEntry{}, err
		}
	}
	err = safefs.Rename(dir, name, sd, "data")
	if errors.Is(err, syscall.EXDEV) {
		if err = copyOut(dir, name, filepath.Join(slot, "data")); err == nil {
			err = dir.RemoveAll(name)
		}
	}
	if err != nil {
		os.RemoveAll(slot)
		return TrashEntry{}, fmt.Errorf("moving %s to the trash: %w", p, err)
	}
	e.Data = filepath.Join(slot, "data")
	return e, nil
}

// newSlot creates the next numbered directory in trashDir (safe across concurrent agents).
func newSlot(trashDir string) (string, string, error) {
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

// copyOut copies the entry name of d (file, link or directory tree) to the plain path dst (in
// massgen's own trash), reading the source through descriptors only.
func copyOut(d *safefs.Dir, name, dst string) error {
	fi, err := d.Lstat(name)
	if err != nil {
		return err
	}
	switch {
	case fi.IsLink():
		target, err := d.Readlink(name)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case fi.IsDir():
		sub, err := d.SubSame(name, fi)
		if err != nil {
			return err
		}
		defer sub.Close()
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
		ents, _, err := sub.Entries(0)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := copyOut(sub, e.Name, filepath.Join(dst, e.Name)); err != nil {
				return err
			}
		}
		if runtime.GOOS == "windows" {
			return nil
		}
		return os.Chmod(dst, fi.Mode.Perm()) // exactly, whatever the umask; once it is filled
	case fi.IsRegular():
		f, _, err := d.OpenFileSame(name, fi)
		if err != nil {
			return err
		}
		defer f.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode.Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, f); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	return nil // sockets, devices: not kept
}

// ListTrash lists every trashed entry under <massgenDir>/trash, oldest first.
func ListTrash(massgenDir string) ([]TrashEntry, error) {
	metas, err := filepath.Glob(filepath.Join(layout.At(massgenDir).Trash(), "*", "*", trashMeta))
	if err != nil {
		return nil, err
	}
	var out []TrashEntry
	for _, m := range metas {
		b, err := os.ReadFile(m)
		if err != nil {
			return nil, fmt.Errorf("trash: %w", err)
		}
		var e TrashEntry
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("trash: %s: %w", m, err)
		}
		slot := filepath.Dir(m)
		e.Run, e.ID = filepath.Base(filepath.Dir(slot)), filepath.Base(filepath.Dir(slot))+"/"+filepath.Base(slot)
		e.Data = filepath.Join(slot, "data")
		if _, err := os.Lstat(filepath.Join(slot, "data")); err != nil {
			continue // interrupted before the move: nothing to restore
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].DeletedAt.Equal(out[j].DeletedAt) {
			return out[i].DeletedAt.Before(out[j].DeletedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// trashSlot validates an id ("<run>/<seq>") and returns its directory.
func trashSlot(massgenDir, id string) (string, error) {
	run, seq, ok := strings.Cut(id, "/")
	valid := func(s string) bool { return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) }
	if !ok || !valid(run) || !valid(seq) {
		return "", fmt.Errorf("invalid trash id %q (expected RUN/SEQ as shown by `massgen trash list`)", id)
	}
	trash := layout.At(massgenDir).Trash()
	slot := filepath.Join(trash, run, seq)
	if _, err := os.Stat(filepath.Join(slot, trashMeta)); err != nil {
		return "", fmt.Errorf("no trash entry %q in %s", id, trash)
	}
	return slot, nil
}

// RestoreTrash puts a trashed entry back where it was. It refuses to overwrite anything that
// exists there now, and it restores the way the file tools write: the original path is walked
// once from the root without following links, and the entry is placed from the directory that
// walk holds (a rename that never replaces; across filesystems a copy under a temp name in that
// directory, then the same rename). A link planted on the way since the deletion (a parent
// directory swapped for a link to elsewhere) is never followed: the restore is refused, naming
// it. A failure leaves nothing half-written at the original path.
func RestoreTrash(massgenDir, id string) error {
	slot, err := trashSlot(massgenDir, id)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(slot, trashMeta))
	if err != nil {
		return fmt.Errorf("trash: %w", err)
	}
	var e TrashEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return fmt.Errorf("trash: %s: %w", id, err)
	}
	orig := e.OriginalPath
	if !filepath.IsAbs(orig) || filepath.Clean(orig) != orig || filepath.Dir(orig) == orig {
		return fmt.Errorf("trash: %s: bad original path %q", id, orig)
	}
	// The slot is massgen's own, walked like the destination all the same.
	sw, err := safefs.Resolve(slot, false)
	if err != nil {
		return fmt.Errorf("trash: %s: %w", id, err)
	}
	defer sw.Close()
	if sw.Path != slot || !sw.Exists || !sw.Info.IsDir() {
		return fmt.Errorf("trash: %s: %s is not massgen's trash folder (a link?)", id, slot)
	}
	sd, err := sw.OpenDir()
	if err != nil {
		return fmt.Errorf("trash: %s: %w", id, err)
	}
	defer sd.Close()
	if _, err := sd.Lstat("data"); err != nil {
		return fmt.Errorf("trash: %s has no data to restore", id)
	}

	w, err := safefs.Resolve(orig, true)
	if err != nil {
		return fmt.Errorf("cannot restore %s: %w", id, restoreWalkErr(orig, err))
	}
	defer w.Close()
	if w.Path != orig {
		return fmt.Errorf("cannot restore %s: %s", id, linkOnTheWay(orig))
	}
	if w.Exists {
		return fmt.Errorf("cannot restore %s: %s exists now (move it away first)", id, orig)
	}
	dir, _, err := w.MakeParent()
	if err != nil {
		return fmt.Errorf("cannot restore %s: %w", id, restoreWalkErr(orig, err))
	}
	defer dir.Close()
	err = safefs.Rename(sd, "data", dir, w.Name)
	if errors.Is(err, syscall.EXDEV) {
		err = copyAcross(sd, "data", dir, w.Name)
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot restore %s: %s exists now (move it away first)", id, orig)
	}
	if err != nil {
		return fmt.Errorf("restoring %s to %s: %w", id, orig, err)
	}
	dir.Sync()
	if err := os.RemoveAll(slot); err != nil {
		return fmt.Errorf("restored %s but could not remove its trash entry: %w", id, err)
	}
	_ = os.Remove(filepath.Dir(slot)) // the run's folder, when now empty
	return nil
}

// restoreWalkErr words a failure to walk to (or make the parents of) the original path: a link
// met on the way (a parent swapped for one) is named.
func restoreWalkErr(orig string, err error) error {
	if errors.Is(err, safefs.ErrChanged) {
		return errors.New(linkOnTheWay(orig))
	}
	return safefs.PathError(orig, err)
}

// linkOnTheWay names the symbolic link that now stands on the way to p (for the message only:
// the decision was the walk's).
func linkOnTheWay(p string) string {
	var parts []string
	for q := p; filepath.Dir(q) != q; q = filepath.Dir(q) {
		parts = append(parts, q)
	}
	for i := len(parts) - 1; i >= 0; i-- {
		fi, err := os.Lstat(parts[i])
		if err != nil {
			break
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(parts[i])
			return fmt.Sprintf("%s is now a symbolic link (to %s) on the way to %s; massgen never restores through a link, which could lead outside the folder the file was deleted from (remove or move the link, then restore again)", parts[i], target, p)
		}
	}
	return fmt.Sprintf("the way to %s changed (a symbolic link on it?); massgen never restores through a link (check the folders on the way, then restore again)", p)
}

// copyAcross copies the entry name of from (a file, link or directory tree in the trash) to the
// new entry toName of to, on another filesystem: built under a temp name in to, then renamed
// into place without replacing anything, so a failure leaves only the temp entry, which is
// removed. The trash copy goes once the caller has the restored entry.
func copyAcross(from *safefs.Dir, name string, to *safefs.Dir, toName string) error {
	tmp := safefs.TempName(toName)
	if err := copyInto(from, name, to, tmp, 0); err != nil {
		_ = to.RemoveAll(tmp)
		return err
	}
	if err := safefs.Rename(to, tmp, to, toName); err != nil {
		_ = to.RemoveAll(tmp)
		return err
	}
	return nil
}

// copyInto copies the entry name of from to the new entry toName of to, through descriptors on
// both sides (neither side's links are followed).
func copyInto(from *safefs.Dir, name string, to *safefs.Dir, toName string, depth int) error {
	fi, err := from.Lstat(name)
	if err != nil {
		return err
	}
	switch {
	case fi.IsLink():
		target, err := from.Readlink(name)
		if err != nil {
			return err
		}
		return to.Symlink(target, toName)
	case fi.IsDir():
		if depth > safefs.MaxTreeDepth {
			return fmt.Errorf("%s: deeper than %d folders", safefs.Join(from.Path, name), safefs.MaxTreeDepth)
		}
		src, err := from.SubSame(name, fi)
		if err != nil {
			return err
		}
		defer src.Close()
		if err := to.Mkdir(toName, 0o700); err != nil {
			return err
		}
		dst, err := to.Sub(toName)
		if err != nil {
			return err
		}
		defer dst.Close()
		ents, _, err := src.Entries(0)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := copyInto(src, e.Name, dst, e.Name, depth+1); err != nil {
				return err
			}
		}
		return chmodDir(dst, fi.Mode.Perm()) // exactly, whatever the umask; once it is filled
	case fi.IsRegular():
		f, fi, err := from.OpenFileSame(name, fi)
		if err != nil {
			return err
		}
		defer f.Close()
		_, _, err = to.WriteFile(toName, f, fi.Mode.Perm())
		return err
	}
	return nil // sockets, devices: never kept
}

// chmodDir sets the permission bits of the held directory d exactly (fchmod on its descriptor:
// no name is resolved again).
func chmodDir(d *safefs.Dir, mode fs.FileMode) error {
	if runtime.GOOS == "windows" { // permission bits are not Windows' access control
		return nil
	}
	f, err := d.File()
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Chmod(mode)
}
