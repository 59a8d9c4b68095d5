// Package snapshots owns the agents' snapshot storage and temporary workspaces: each agent's
// latest work (answer, vote or partial work on restart) kept under SnapshotRoot/<agentID>/ and,
// timestamped, under the run's log folder; and the temp workspaces TempRoot/<agentID>/ that show
// an agent the other agents' latest snapshots under anonymous ids (agent1, agent2, ... in config
// order). See docs/snapshots.md for the storage rules and why they are safe and fast.
package snapshots

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/wsowner"

	"github.com/massgen-go/massgen/internal/private"
	"github.com/massgen-go/massgen/internal/safefs"
)

// MaxWorkspaceBytes is how much a workspace's files may add up to, by apparent size (a sparse
// file counts its holes), for massgen to snapshot it or copy it into a session: past it the copy
// is refused with a *TooLargeError, and nothing is written. Copies keep holes where the
// filesystem reports them (SEEK_DATA/SEEK_HOLE), so a sparse file costs its blocks; the cap
// bounds what a copy costs where holes cannot be kept (Windows, filesystems without hole
// reporting) and the reads that compare content. See docs/snapshots.md.
const MaxWorkspaceBytes int64 = 32 << 30

// TooLargeError is a workspace refused for its apparent size (MaxWorkspaceBytes).
type TooLargeError struct {
	Dir          string // the workspace
	Bytes        int64  // its files' apparent size, as far as it was counted
	Max          int64
	Largest      string // the largest file, relative to Dir
	LargestBytes int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the workspace %s holds %s of files (apparent size: a sparse file counts its holes), over the %s massgen copies into a snapshot or a session; not copied. The largest file is %s (%s): remove or shrink it",
		e.Dir, sizeText(e.Bytes), sizeText(e.Max), e.Largest, sizeText(e.LargestBytes))
}

// sizeText writes a byte count for people: "1.0 TiB", "32.0 GiB", "512 bytes".
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 5 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", f, [...]string{"", "KiB", "MiB", "GiB", "TiB", "PiB"}[i])
}

// checkSize refuses a workspace whose files add up to more than max bytes (apparent size).
func checkSize(dir string, ents []entry, max int64) error {
	var total int64
	var largest *entry
	for i := range ents {
		e := &ents[i]
		if e.kind != kindFile {
			continue
		}
		total += e.size
		if largest == nil || e.size > largest.size {
			largest = e
		}
	}
	if total <= max {
		return nil
	}
	return &TooLargeError{Dir: dir, Bytes: total, Max: max, Largest: filepath.FromSlash(largest.rel), LargestBytes: largest.size}
}

// copyBudget is what is left of the cap while one workspace is copied: a file that grew since
// the scan cannot take the copy past it.
type copyBudget struct {
	dir  string
	max  int64
	left atomic.Int64
}

func newCopyBudget(dir string, max int64) *copyBudget {
	b := &copyBudget{dir: dir, max: max}
	b.left.Store(max)
	return b
}

// take reserves n bytes for the file rel (nil budget: no cap, the copy of a snapshot of ours).
func (b *copyBudget) take(rel string, n int64) error {
	if b == nil {
		return nil
	}
	if left := b.left.Add(-n); left < 0 {
		return &TooLargeError{Dir: b.dir, Bytes: b.max - left, Max: b.max, Largest: rel, LargestBytes: n}
	}
	return nil
}

// Options configures a Store.
type Options struct {
	SnapshotRoot string   // snapshot_storage: SnapshotRoot/<agentID>/ holds the latest snapshot
	TempRoot     string   // agent_temporary_workspace: TempRoot/<agentID>/ is refilled before each execution
	LogDir       string   // the run's log folder; timestamped copies go to LogDir/snapshots/<agentID>/ ("" = none)
	Agents       []string // agent ids in config order (fixes the anonymous ids)
	Logger       *zap.Logger
	// MaxBytes caps a workspace's apparent size for a snapshot (0: MaxWorkspaceBytes).
	MaxBytes int64
}

// Store manages the snapshots and temp workspaces of one run. It is safe for concurrent use by
// the agents' goroutines.
type Store struct {
	o      Options
	log    *zap.Logger
	agents map[string]*agentState
	anon   map[string]string

	probeOnce sync.Once
	tempMode  cloneMode // how snapshot files reach temp workspaces (reflink, hard link or copy)
	logMode   cloneMode // how snapshot files reach log copies (hard link or copy)
}

// agentState is everything the store remembers about one agent.
type agentState struct {
	id   string
	anon string

	// saveMu serialises Save for this agent; index and lastLog belong to it.
	saveMu  sync.Mutex
	index   map[string]entry // the workspace as of the last save (only entries kept in the snapshot)
	lastLog string           // last log copy (a real directory, never a symlink)

	// snapMu guards the snapshot directory and the generation bookkeeping: Save holds it for
	// writing only while it places a new snapshot or applies a delta; FillTemp holds it for
	// reading while it links from the snapshot, so it sees the old or the new one, never half.
	snapMu  sync.RWMutex
	has     bool // a snapshot exists
	gen     int  // bumped on every change of the snapshot
	fullGen int  // generation of the last full rebuild (deltas before it are forgotten)
	journal []journalEntry

	// tempMu serialises FillTemp into this agent's temp workspace; synced belongs to it.
	tempMu sync.Mutex
	synced map[string]int // source agent id -> snapshot generation its anon folder reflects
}

// journalEntry lists the paths (relative to the snapshot) that generation gen changed.
type journalEntry struct {
	gen  int
	rels []string
}

// New creates the store. A run starts clean: the configured agents' temp workspaces and snapshot
// folders are removed (stale data from earlier runs), so that no agent mistakes a previous run's
// work for a peer's current work.
func New(o Options) (*Store, error) {
	if o.SnapshotRoot == "" || o.TempRoot == "" {
		return nil, errors.New("snapshots: SnapshotRoot and TempRoot are required")
	}
	for _, p := range []struct{ name, dir string }{{"SnapshotRoot", o.SnapshotRoot}, {"TempRoot", o.TempRoot}, {"LogDir", o.LogDir}} {
		if p.dir != "" && !filepath.IsAbs(p.dir) {
			return nil, fmt.Errorf("snapshots: %s %q is not an absolute path", p.name, p.dir)
		}
	}
	o.SnapshotRoot, o.TempRoot = filepath.Clean(o.SnapshotRoot), filepath.Clean(o.TempRoot)
	if o.SnapshotRoot == o.TempRoot || within(o.SnapshotRoot, o.TempRoot) || within(o.TempRoot, o.SnapshotRoot) {
		return nil, fmt.Errorf("snapshots: SnapshotRoot %q and TempRoot %q must not contain each other", o.SnapshotRoot, o.TempRoot)
	}
	if len(o.Agents) == 0 {
		return nil, errors.New("snapshots: no agents")
	}
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = MaxWorkspaceBytes
	}
	s := &Store{o: o, log: log, agents: map[string]*agentState{}, anon: map[string]string{}}
	for i, id := range o.Agents {
		if err := checkID(id); err != nil {
			return nil, err
		}
		if _, dup := s.agents[id]; dup {
			return nil, fmt.Errorf("snapshots: agent id %q appears twice", id)
		}
		a := fmt.Sprintf("agent%d", i+1)
		s.agents[id] = &agentState{id: id, anon: a, synced: map[string]int{}}
		s.anon[id] = a
	}
	if err := os.MkdirAll(o.SnapshotRoot, private.DirMode); err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	if err := os.RemoveAll(s.stagingRoot()); err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	// Only the folders the store makes, by agent id: TempRoot and SnapshotRoot may be folders of
	// the user's (the config names them), whose other entries are not massgen's to remove.
	for _, id := range o.Agents {
		if err := os.RemoveAll(s.TempDir(id)); err != nil {
			return nil, fmt.Errorf("snapshots: clearing the stale temp workspace of %s: %w", id, err)
		}
		if err := os.RemoveAll(s.SnapshotDir(id)); err != nil {
			return nil, fmt.Errorf("snapshots: clearing stale snapshot of %s: %w", id, err)
		}
	}
	return s, nil
}

// checkID refuses agent ids that are not a single plain path component.
func checkID(id string) error {
	if id == "" || id == "." || id == ".." || strings.HasPrefix(id, ".") || strings.ContainsAny(id, `/\`+"\x00") {
		return fmt.Errorf("snapshots: agent id %q cannot be used as a folder name", id)
	}
	return nil
}

// within reports whether p is strictly inside dir (both clean and absolute).
func within(p, dir string) bool { return p != dir && pathx.Within(p, dir) }

func (s *Store) agent(id string) (*agentState, error) {
	a, ok := s.agents[id]
	if !ok {
		return nil, fmt.Errorf("snapshots: unknown agent %q (known: %s)", id, strings.Join(s.o.Agents, ", "))
	}
	return a, nil
}

// stagingRoot holds snapshots and changed files being built; it sits inside SnapshotRoot so
// that renames into place stay on one filesystem.
func (s *Store) stagingRoot() string { return filepath.Join(s.o.SnapshotRoot, ".staging") }

// AnonID returns the anonymous id of agentID: agent1, agent2, ... by config order, fixed for the
// run ("" for an unknown agent).
func (s *Store) AnonID(agentID string) string { return s.anon[agentID] }

// TempDir returns TempRoot/<agentID>.
func (s *Store) TempDir(agentID string) string { return filepath.Join(s.o.TempRoot, agentID) }

// SnapshotDir returns SnapshotRoot/<agentID>.
func (s *Store) SnapshotDir(agentID string) string {
	return filepath.Join(s.o.SnapshotRoot, agentID)
}

// HasSnapshot reports whether agentID has a snapshot.
func (s *Store) HasSnapshot(agentID string) bool {
	a, err := s.agent(agentID)
	if err != nil {
		return false
	}
	a.snapMu.RLock()
	defer a.snapMu.RUnlock()
	return a.has
}

// ClearWorkspace empties the agent workspace dir, keeping the folder, when it is one of
// massgen's own: created (or adopted) by massgen under a .massgen folder, as recorded by
// internal/wsowner. Any other folder is left whole and a *wsowner.NotOwnedError says why. See
// Clear for folders the config gives massgen (cwd_owned).
func ClearWorkspace(dir string) error { return Clear(dir, ClearOptions{}) }

// ClearOptions say how Clear treats folders outside .massgen.
type ClearOptions struct {
	// MassgenDir keeps the records of owned folders that are in no .massgen folder ("": such
	// folders are never cleared).
	MassgenDir string
	// Trash moves the entry name of dir to the trash. Entries of a folder the config gives
	// massgen (cwd_owned) go there instead of being deleted; without Trash such a folder is not
	// cleared.
	Trash func(dir, name string) error
}

// Clear empties the workspace dir when massgen owns it (internal/wsowner): entries of a folder
// it created are deleted, those of a folder the config gives it (cwd_owned) are moved with
// o.Trash. A missing dir is created (and recorded as massgen's). Symlinks inside are removed,
// never followed. Anything massgen does not own is left whole: a *wsowner.NotOwnedError.
func Clear(dir string, o ClearOptions) error {
	if dir == "" {
		return errors.New("snapshots: ClearWorkspace: empty path")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("snapshots: ClearWorkspace %q: %w", dir, err)
	}
	if filepath.Dir(abs) == abs {
		return fmt.Errorf("snapshots: ClearWorkspace: refusing to empty the filesystem root %q", abs)
	}
	// dir itself may be a symlink to a directory (a configured path); its entries never are followed.
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return fmt.Errorf("snapshots: ClearWorkspace: %q is not a directory", abs)
	}
	root, err := safefs.OpenDirPath(abs)
	if errors.Is(err, fs.ErrNotExist) {
		_, err = wsowner.Claim(abs, o.MassgenDir, false)
		return err
	}
	if err != nil {
		return fmt.Errorf("snapshots: ClearWorkspace: %w", err)
	}
	defer root.Close()
	how, err := wsowner.Owner(root, abs, o.MassgenDir)
	if err != nil {
		return err
	}
	if how == wsowner.Owned && o.Trash == nil {
		return &wsowner.NotOwnedError{Dir: abs, Reason: "it is a folder of yours that the config gives massgen (cwd_owned), and no trash was given to move its files to"}
	}
	ents, _, err := root.Entries(0)
	if err != nil {
		return fmt.Errorf("snapshots: ClearWorkspace: %w", err)
	}
	var errs []error
	for _, e := range ents {
		if how == wsowner.Owned {
			err = o.Trash(abs, e.Name)
		} else {
			err = root.RemoveAll(e.Name)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("snapshots: ClearWorkspace %q: %w", abs, firstError(err))
	}
	return nil
}
