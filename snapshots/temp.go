package snapshots

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/private"
)

// FillTemp refills agentID's temp workspace, TempRoot/<agentID>/, with every agent's latest
// snapshot under its anonymous id (TempRoot/<agentID>/agent2/...), its own included: as in
// MassGen, an agent restarted by a new answer finds its partial work there, and the winner its
// earlier work. Agents without a snapshot get no folder. Files come from the snapshots by
// reflink, hard link or copy (see probe).
//
// The refill is incremental: an anonymous folder that already reflects a source agent's current
// snapshot is left alone, and one that reflects an older generation gets only the paths changed
// since. This relies on temp workspaces being read-only for agents (the permission layer and the
// sandbox enforce it) and on nothing but FillTemp writing them; a folder that has gone missing is
// rebuilt.
func (s *Store) FillTemp(ctx context.Context, agentID string) error {
	me, err := s.agent(agentID)
	if err != nil {
		return err
	}
	s.probe()
	me.tempMu.Lock()
	defer me.tempMu.Unlock()

	dir := s.TempDir(agentID)
	if err := os.MkdirAll(dir, private.DirMode); err != nil {
		return fmt.Errorf("snapshots: temp workspace of %s: %w", agentID, err)
	}
	// Anything that is not an anonymous folder we manage goes.
	keep := map[string]bool{}
	for _, id := range s.o.Agents {
		keep[s.anon[id]] = true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("snapshots: temp workspace of %s: %w", agentID, err)
	}
	for _, e := range ents {
		if !keep[e.Name()] || !e.IsDir() {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("snapshots: temp workspace of %s: %w", agentID, err)
			}
		}
	}
	for _, id := range s.o.Agents {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.syncOne(ctx, me, s.agents[id], filepath.Join(dir, s.anon[id])); err != nil {
			delete(me.synced, id)
			return fmt.Errorf("snapshots: filling temp workspace of %s: %w", agentID, err)
		}
	}
	return nil
}

// syncOne brings sub up to date with src's snapshot, holding src's snapshot lock for reading.
func (s *Store) syncOne(ctx context.Context, me, src *agentState, sub string) error {
	src.snapMu.RLock()
	defer src.snapMu.RUnlock()
	if !src.has {
		delete(me.synced, src.id)
		return os.RemoveAll(sub)
	}
	from := s.SnapshotDir(src.id)
	g, ok := me.synced[src.id]
	if _, err := os.Lstat(sub); err != nil {
		ok = false
	}
	switch {
	case ok && g == src.gen:
		return nil
	case ok && g >= src.fullGen:
		if err := s.applyJournal(src, g, from, sub); err != nil {
			return err
		}
	default:
		if err := os.RemoveAll(sub); err != nil {
			return err
		}
		if err := cloneTree(ctx, from, sub, s.tempMode); err != nil {
			return err
		}
	}
	me.synced[src.id] = src.gen
	s.log.Debug("temp workspace synced", zap.String("viewer", me.id), zap.String("source", src.anon), zap.Int("gen", src.gen))
	return nil
}

// applyJournal replays onto sub the paths that generations after g changed: each is made to
// match the snapshot as it is now.
func (s *Store) applyJournal(src *agentState, g int, from, sub string) error {
	var rels []string
	for _, j := range src.journal {
		if j.gen > g {
			rels = append(rels, j.rels...)
		}
	}
	slices.Sort(rels) // parents sort before their children
	rels = slices.Compact(rels)
	for _, rel := range rels {
		sp, dp := filepath.Join(from, rel), filepath.Join(sub, rel)
		si, err := os.Lstat(sp)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// (ENOTDIR: a parent became a file, which already replaced the whole subtree.)
			if err := os.RemoveAll(dp); err != nil && !errors.Is(err, syscall.ENOTDIR) {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		di, derr := os.Lstat(dp)
		if si.IsDir() {
			if derr == nil && !di.IsDir() {
				if err := os.RemoveAll(dp); err != nil {
					return err
				}
			}
			if err := mkdir(dp, si.Mode().Perm()); err != nil {
				return err
			}
			continue
		}
		if derr == nil {
			if err := os.RemoveAll(dp); err != nil {
				return err
			}
		}
		switch si.Mode().Type() {
		case fs.ModeSymlink:
			t, err := os.Readlink(sp)
			if err != nil {
				return err
			}
			if err := os.Symlink(t, dp); err != nil {
				return err
			}
		case 0:
			if err := cloneFile(sp, dp, s.tempMode); err != nil {
				return err
			}
		}
	}
	return nil
}
