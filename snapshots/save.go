package snapshots

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/private"
	"github.com/massgen-go/massgen/internal/safefs"
)

// Save makes workspace agentID's latest snapshot. reason ("answer", "vote", "restart", "final")
// names the timestamped log copy. A workspace with nothing in it never replaces the previous
// snapshot: Save then returns saved=false (so an agent whose workspace was cleared after its
// answer and that then only votes keeps its answer's files). Save does not clear the workspace.
//
// Only what changed since the previous save is copied: a file whose size, mtime, mode, ctime,
// inode and device all match is taken as unchanged (its content is compared when it was modified
// within the filesystem's timestamp granularity of the previous read). Changed files are copied
// beside the snapshot and renamed over the old ones, so a snapshot file is never written in
// place and the hard links to it (temp workspaces, log copies) keep the content they had.
func (s *Store) Save(ctx context.Context, agentID, workspace, reason string) (bool, error) {
	a, err := s.agent(agentID)
	if err != nil {
		return false, err
	}
	if reason == "" {
		reason = "snapshot"
	}
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	s.probe()

	root, err := safefs.OpenDirPath(workspace)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			s.log.Info("snapshot: no workspace, previous snapshot kept", zap.String("agent", agentID), zap.String("workspace", workspace))
			return false, nil
		}
		return false, fmt.Errorf("snapshots: save %s: %w", agentID, err)
	}
	defer root.Close()
	start := time.Now().UnixNano()
	ents, err := scan(ctx, root, s.log.With(zap.String("agent", agentID)))
	if err != nil {
		return false, fmt.Errorf("snapshots: save %s: reading workspace %s: %w", agentID, workspace, err)
	}
	if len(ents) == 0 {
		s.log.Info("snapshot: empty workspace, previous snapshot kept", zap.String("agent", agentID), zap.String("reason", reason))
		return false, nil
	}
	if err := checkSize(workspace, ents, s.o.MaxBytes); err != nil {
		return false, fmt.Errorf("snapshots: save %s: %w; the previous snapshot is kept", agentID, err)
	}

	dst := s.SnapshotDir(agentID)
	changed := true
	if _, serr := os.Lstat(dst); a.index == nil || serr != nil {
		err = s.saveFull(ctx, a, root, workspace, ents, start)
	} else {
		changed, err = s.saveDelta(ctx, a, root, workspace, ents, start)
	}
	if err != nil {
		a.index = nil // unknown state: the next save rebuilds from scratch
		return false, fmt.Errorf("snapshots: save %s: %w", agentID, err)
	}
	s.log.Info("snapshot saved", zap.String("agent", agentID), zap.String("reason", reason),
		zap.Bool("changed", changed), zap.Int("entries", len(a.index)))
	if err := s.logCopy(ctx, a, reason, changed); err != nil {
		return true, fmt.Errorf("snapshots: save %s: the snapshot is in place, but its copy in the run's log folder failed: %w", agentID, err)
	}
	return true, nil
}

// saveFull builds the whole snapshot in the staging area and swaps it in.
func (s *Store) saveFull(ctx context.Context, a *agentState, root *safefs.Dir, workspace string, ents []entry, start int64) error {
	if err := os.MkdirAll(s.stagingRoot(), private.DirMode); err != nil {
		return err
	}
	// MkdirTemp makes it 0700: the snapshot's root is massgen's, private to the user (the
	// workspace's files keep their modes inside).
	stage, err := os.MkdirTemp(s.stagingRoot(), a.id+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)

	var files []*entry
	for i := range ents {
		e := &ents[i]
		to := filepath.Join(stage, e.rel)
		switch e.kind {
		case kindDir:
			if err := mkdir(to, e.mode); err != nil {
				return err
			}
		case kindSymlink:
			if err := os.Symlink(e.target, to); err != nil {
				return err
			}
		case kindFile:
			files = append(files, e)
		}
	}
	failed, err := s.copyFiles(ctx, a, root, workspace, files, func(e *entry) string { return filepath.Join(stage, e.rel) }, start)
	if err != nil {
		return err
	}
	index := make(map[string]entry, len(ents))
	for _, e := range ents {
		if !failed[e.rel] {
			index[e.rel] = e
		}
	}

	dst := s.SnapshotDir(a.id)
	a.snapMu.Lock()
	if _, err := os.Lstat(dst); err == nil {
		err = exchange(stage, dst) // the old snapshot is now at stage and goes with it
	} else {
		err = renameNoReplace(stage, dst)
	}
	if err == nil {
		a.has = true
		a.gen++
		a.fullGen = a.gen
		a.journal = nil
	}
	a.snapMu.Unlock()
	if err != nil {
		return err
	}
	a.index = index
	return nil
}

// copyFiles copies workspace files in parallel, recording in each entry the stat of what was
// copied. Files that cannot be read are left out with a warning (an agent cannot make its own
// snapshot fail) and returned; a failure to write a copy (*WriteError: a full disk) is an error,
// and the caller keeps the previous snapshot.
func (s *Store) copyFiles(ctx context.Context, a *agentState, root *safefs.Dir, workspace string, files []*entry, to func(*entry) string, start int64) (map[string]bool, error) {
	var mu sync.Mutex
	failed := map[string]bool{}
	budget := newCopyBudget(workspace, s.o.MaxBytes)
	err := parallel(ctx, files, func(e *entry) error {
		fi, err := copyFromWorkspace(root, e.rel, to(e), budget)
		var we *WriteError
		if errors.As(err, &we) {
			return fmt.Errorf("%s: %w", e.rel, err)
		}
		if err != nil {
			s.log.Warn("snapshot: file left out", zap.String("agent", a.id), zap.String("path", e.rel), zap.Error(err))
			mu.Lock()
			failed[e.rel] = true
			mu.Unlock()
			return nil
		}
		// What was copied is what the next save compares against.
		e.mode = fi.Mode.Perm()
		fillStat(e, fi)
		e.readAt = start
		return nil
	})
	return failed, firstError(err)
}

// saveDelta updates the existing snapshot with what changed since the last save.
func (s *Store) saveDelta(ctx context.Context, a *agentState, root *safefs.Dir, workspace string, ents []entry, start int64) (bool, error) {
	dst := s.SnapshotDir(a.id)
	window := racyWindow(workspace)
	var (
		removes []string // snapshot paths to delete (before anything is added)
		adds    []*entry // entries to create or replace, parents first
		chmods  []*entry // directories whose mode changed
		files   []*entry // files to copy (a subset of adds)
	)
	seen := make(map[string]bool, len(ents))
	for i := range ents {
		e := &ents[i]
		seen[e.rel] = true
		p, ok := a.index[e.rel]
		switch {
		case !ok:
			adds = append(adds, e)
		case p.kind != e.kind:
			removes = append(removes, e.rel)
			adds = append(adds, e)
		case e.kind == kindDir:
			if p.mode != e.mode {
				chmods = append(chmods, e)
			}
		case e.kind == kindSymlink:
			if p.target != e.target {
				adds = append(adds, e)
			}
		case !e.sameStat(p):
			adds = append(adds, e)
		case e.ctime >= p.readAt-window:
			// Racily clean: changed within the timestamp granularity of our last read.
			same, err := sameContent(root, e.rel, filepath.Join(dst, e.rel))
			if err != nil || !same {
				adds = append(adds, e)
			} else {
				e.readAt = start
			}
		default:
			e.readAt = p.readAt
		}
	}
	for rel := range a.index {
		if !seen[rel] {
			removes = append(removes, rel)
		}
	}
	if len(removes) == 0 && len(adds) == 0 && len(chmods) == 0 {
		return false, nil
	}

	if err := os.MkdirAll(s.stagingRoot(), private.DirMode); err != nil {
		return false, err
	}
	stage, err := os.MkdirTemp(s.stagingRoot(), a.id+"-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(stage)
	staged := map[*entry]string{}
	for i, e := range adds {
		if e.kind == kindFile {
			files = append(files, e)
			staged[e] = filepath.Join(stage, strconv.Itoa(i))
		}
	}
	failed, err := s.copyFiles(ctx, a, root, workspace, files, func(e *entry) string { return staged[e] }, start)
	if err != nil {
		return false, err
	}

	rels := make([]string, 0, len(removes)+len(adds)+len(chmods))
	a.snapMu.Lock()
	err = func() error {
		for _, rel := range removes {
			if err := os.RemoveAll(filepath.Join(dst, rel)); err != nil {
				return err
			}
			rels = append(rels, rel)
		}
		for _, e := range adds {
			to := filepath.Join(dst, e.rel)
			rels = append(rels, e.rel)
			switch e.kind {
			case kindDir:
				if err := mkdir(to, e.mode); err != nil {
					return err
				}
			case kindSymlink:
				if err := removeFile(to); err != nil {
					return err
				}
				if err := os.Symlink(e.target, to); err != nil {
					return err
				}
			case kindFile:
				if failed[e.rel] {
					if err := removeFile(to); err != nil {
						return err
					}
					continue
				}
				// rename over the old file: its inode (shared with temp workspaces and log
				// copies) is left as it was.
				if err := os.Rename(staged[e], to); err != nil {
					return err
				}
			}
		}
		for _, e := range chmods {
			if err := os.Chmod(filepath.Join(dst, e.rel), e.mode); err != nil {
				return err
			}
			rels = append(rels, e.rel)
		}
		return nil
	}()
	a.gen++
	if err != nil {
		a.fullGen = a.gen // temp workspaces must not trust a half-applied delta
		a.journal = nil
	} else {
		slices.Sort(rels)
		a.journal = append(a.journal, journalEntry{gen: a.gen, rels: slices.Compact(rels)})
	}
	a.snapMu.Unlock()
	if err != nil {
		return false, err
	}
	index := make(map[string]entry, len(ents))
	for _, e := range ents {
		if !failed[e.rel] {
			index[e.rel] = e
		}
	}
	a.index = index
	return true, nil
}

// logCopy keeps the snapshot under LogDir/snapshots/<agent>/<timestamp>_<reason>/. When nothing
// changed since the previous save the entry is a symlink to the previous copy. A copy that
// failed half-way is removed.
func (s *Store) logCopy(ctx context.Context, a *agentState, reason string, changed bool) error {
	if s.o.LogDir == "" {
		return nil
	}
	dir := filepath.Join(s.o.LogDir, "snapshots", a.id)
	if err := os.MkdirAll(dir, private.DirMode); err != nil {
		s.log.Warn("snapshot log copy", zap.String("agent", a.id), zap.Error(err))
		return err
	}
	name := time.Now().Format("20060102_150405.000000") + "_" + reason
	to := filepath.Join(dir, name)
	for i := 2; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		to = filepath.Join(dir, name+"_"+strconv.Itoa(i))
	}
	var err error
	if !changed && a.lastLog != "" {
		err = os.Symlink(filepath.Base(a.lastLog), to)
	} else {
		// Only Save (which holds saveMu) changes the snapshot, so no lock is needed to read it.
		if err = cloneTree(ctx, s.SnapshotDir(a.id), to, s.logMode); err == nil {
			a.lastLog = to
		} else {
			_ = os.RemoveAll(to)
		}
	}
	if err != nil {
		s.log.Warn("snapshot log copy", zap.String("agent", a.id), zap.String("path", to), zap.Error(err))
	}
	return err
}
