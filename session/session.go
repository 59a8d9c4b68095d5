// Package session owns multi-turn session storage: .massgen/sessions/session_<timestamp>/ with
// one turn_N/ folder per turn (workspace/ = the final agent's workspace, answer.txt,
// metadata.json) and a human-readable SESSION_SUMMARY.txt at the session root, rewritten after
// every turn. Every write is atomic (a turn folder is built under a hidden name and renamed into
// place; files are written to a temporary name and renamed), so a killed run never leaves a
// half-written turn or summary behind.
package session

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/private"
	"github.com/massgen-go/massgen/internal/runlock"
	"github.com/massgen-go/massgen/snapshots"
)

const (
	summaryFile  = "SESSION_SUMMARY.txt"
	answerFile   = "answer.txt"
	metadataFile = "metadata.json"
	workspaceDir = "workspace"
	idLayout     = "20060102_150405"
)

// ErrNoSessions is returned by Latest when there is no session yet.
var ErrNoSessions = errors.New("session: no sessions yet")

var (
	idPattern   = regexp.MustCompile(`^session_([0-9]{8}_[0-9]{6})(?:_([0-9]+))?$`)
	turnPattern = regexp.MustCompile(`^turn_([1-9][0-9]*)$`)
)

// Store is the sessions folder (.massgen/sessions).
type Store struct {
	root   string
	logger *zap.Logger
}

// Session is one session folder. Its methods are safe for concurrent use within one process;
// writes take the store's lock (.lock in the sessions folder), so several processes may save
// turns into the same session or store: each turn gets its own number and the summary lists
// them all.
type Session struct {
	ID      string
	Dir     string
	Created time.Time

	store  *Store
	logger *zap.Logger
	mu     sync.Mutex
	exists bool   // the folder is on disk (a new session's is made with its first turn)
	turns  []Turn // loaded or saved so far; Workspace points at turn_N/workspace
}

// Info describes a session for listings.
type Info struct {
	ID       string
	Dir      string
	Created  time.Time
	Updated  time.Time // end of the last turn (Created if none)
	Turns    int
	LastTask string
}

// TokenUsage is one agent's token use in a turn (or the turn's, in total_tokens): cached input
// read and written are part of Input, reasoning part of Output. CostUSD is what they cost, nil
// when that is unknown (a model without a price; turns saved before costs were kept).
type TokenUsage struct {
	Input       int64    `json:"input"`
	Output      int64    `json:"output"`
	CachedInput int64    `json:"cached_input,omitempty"`
	CacheWrite  int64    `json:"cache_write,omitempty"`
	Reasoning   int64    `json:"reasoning,omitempty"`
	CostUSD     *float64 `json:"cost_usd"`
}

// Turn is what is kept of one turn.
type Turn struct {
	Task           string
	Answer         string
	Winner         string
	Votes          map[string]string // voter -> voted-for
	Agents         []string
	Started, Ended time.Time
	Tokens         map[string]TokenUsage
	FilesDelivered []string
	// Workspace is the final agent's workspace: SaveTurn copies it to turn_N/workspace/; in the
	// turns a Session returns it is that copy.
	Workspace string
	// Timeline is the turn's coordination, in order (answers, votes, restarts, ...).
	Timeline []Moment
	// What the turn ran with, so --continue and --session restore it: the config (its
	// Config.Source) and the context paths with their permissions and protected paths.
	Config       string
	ContextPaths []configs.ContextPath
	// Changes is what the turn changed in context paths (nil: nothing); SaveTurn keeps it in
	// turn_N/changes.json, which ChangesFile names in the turns a Session returns.
	Changes     *changes.ChangeSet
	ChangesFile string
	// Undone is when `massgen undo` put the turn's changes back (zero: never).
	Undone time.Time
	// Status is how the turn ended: StatusDone (also "" in turns saved before it was kept),
	// StatusStopped (coordination stopped early: StoppedBy says by whom: "user", "budget",
	// "timeout"), StatusCancelled, or StatusInterrupted (its run ended before saving it, killed
	// or unable to write the session: it was recovered from its change journal, has no answer,
	// and its Changes are what the journal recorded).
	Status    string
	StoppedBy string
	// Work is every agent's answer and work so far, kept for a stopped or cancelled turn:
	// SaveTurn copies each Snapshot to turn_N/agents/<anon>/; in the turns a Session returns,
	// Snapshot is that copy ("" when the agent had none).
	Work []AgentWork
	// TotalCostUSD is the turn's cost (nil: unknown); MaxCostUSD its budget (0: none);
	// PricesDate the date of the prices.
	TotalCostUSD *float64
	MaxCostUSD   float64
	PricesDate   string
	// Run is the run's log folder (log_<time>), naming the run that made the turn.
	Run string
}

// How a turn ended (Turn.Status).
const (
	StatusDone        = "done"
	StatusStopped     = "stopped"
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted"
)

// AgentWork is one agent's part of a stopped or cancelled turn, under its anonymous id.
type AgentWork struct {
	Agent    string `json:"agent"`
	Anon     string `json:"anon"`
	Answer   string `json:"answer,omitempty"`
	Snapshot string `json:"snapshot,omitempty"` // relative to the turn folder in metadata.json
}

// Exchange is one turn of the conversation. A stopped, cancelled or interrupted turn brings its
// status and every agent's answer so far.
type Exchange struct {
	Task   string
	Answer string
	Status string
	Work   []AgentWork
}

// metadata is metadata.json.
type metadata struct {
	Session         string                `json:"session"`
	Turn            int                   `json:"turn"`
	Task            string                `json:"task"`
	Winner          string                `json:"winner"`
	Votes           map[string]string     `json:"votes"`
	Agents          []string              `json:"agents"`
	Started         time.Time             `json:"started,omitzero"`
	Ended           time.Time             `json:"ended,omitzero"`
	DurationSeconds float64               `json:"duration_seconds,omitzero"`
	Tokens          map[string]TokenUsage `json:"tokens"`
	TotalTokens     TokenUsage            `json:"total_tokens"`
	FilesDelivered  []string              `json:"files_delivered"`
	Answer          string                `json:"answer_file"`
	Workspace       string                `json:"workspace"`
	SourceWorkspace string                `json:"source_workspace,omitempty"`
	Timeline        []Moment              `json:"timeline,omitempty"`
	Config          string                `json:"config,omitempty"`
	ContextPaths    []configs.ContextPath `json:"context_paths"`
	FilesChanged    []changes.File        `json:"files_changed"`
	Changes         string                `json:"changes_file,omitempty"`
	Status          string                `json:"status,omitempty"`
	StoppedBy       string                `json:"stopped_by,omitempty"`
	Work            []AgentWork           `json:"agents_work,omitempty"`
	MaxCostUSD      float64               `json:"max_cost_usd,omitempty"`
	PricesDate      string                `json:"prices_date,omitempty"`
	Run             string                `json:"run,omitempty"`
}

// Open opens (creating if needed) the sessions folder root.
func Open(root string) (*Store, error) {
	return OpenWithLogger(root, nil)
}

// OpenExisting opens the sessions folder root to look sessions up, creating nothing: a missing
// folder holds no session (Latest returns ErrNoSessions, Get says there is no such session), so a
// failed --session or --continue leaves no empty folder behind.
func OpenExisting(root string) (*Store, error) {
	if root == "" {
		return nil, errors.New("session: empty sessions folder path")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	return &Store{root: abs, logger: zap.NewNop()}, nil
}

// OpenWithLogger is Open with a logger for files left out of workspace copies.
func OpenWithLogger(root string, logger *zap.Logger) (*Store, error) {
	if root == "" {
		return nil, errors.New("session: empty sessions folder path")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := private.MkdirAll(abs); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Store{root: abs, logger: logger}, nil
}

// Root returns the sessions folder.
func (s *Store) Root() string { return s.root }

// New starts session_<YYYYMMDD_HHMMSS> (with _2, _3, ... if that second is taken). Its folder
// is made with its first turn (SaveTurn), whole: a session exists once a turn is in it, and one
// whose first turn could not be saved leaves nothing. The id is the one free now; if another
// session takes it before the first turn is saved, that turn gets the next.
func (s *Store) New(now time.Time) (*Session, error) {
	id, err := s.freeID(now)
	if err != nil {
		return nil, err
	}
	return &Session{ID: id, Dir: filepath.Join(s.root, id), Created: now, store: s, logger: s.logger}, nil
}

// freeID is the first session id for now that no folder has.
func (s *Store) freeID(now time.Time) (string, error) {
	base := "session_" + now.Format(idLayout)
	for i := 1; i < 10000; i++ {
		id := base
		if i > 1 {
			id += "_" + strconv.Itoa(i)
		}
		_, err := os.Lstat(filepath.Join(s.root, id))
		if errors.Is(err, fs.ErrNotExist) {
			return id, nil
		}
		if err != nil {
			return "", fmt.Errorf("session: %w", err)
		}
	}
	return "", fmt.Errorf("session: no free session id for %s in %s", now.Format(idLayout), s.root)
}

// lockName is the store's lock file: held while a turn is numbered and written, and the
// summary rewritten.
const lockName = ".lock"

// lock takes the store's lock.
func (s *Store) lock() (*runlock.FileLock, error) {
	l, err := runlock.Exclusive(context.Background(), filepath.Join(s.root, lockName))
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	return l, nil
}

// Get opens an existing session by id ("session_20250928_143022").
func (s *Store) Get(id string) (*Session, error) {
	m := idPattern.FindStringSubmatch(id)
	if m == nil {
		return nil, fmt.Errorf("session: %q is not a session id (want session_YYYYMMDD_HHMMSS)", id)
	}
	dir := filepath.Join(s.root, id)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("session: no session %q in %s", id, s.root)
	}
	created, _ := time.ParseInLocation(idLayout, m[1], time.Local)
	ses := &Session{ID: id, Dir: dir, Created: created, store: s, logger: s.logger, exists: true}
	if err := ses.load(); err != nil {
		return nil, err
	}
	return ses, nil
}

// Latest returns the most recent session with a turn in it (ErrNoSessions if there is none; an
// empty folder an older massgen left is passed over).
func (s *Store) Latest() (*Session, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	for i := len(ids) - 1; i >= 0; i-- {
		ses, err := s.Get(ids[i])
		if err != nil {
			return nil, err
		}
		if len(ses.turns) > 0 {
			return ses, nil
		}
	}
	return nil, ErrNoSessions
}

// List lists the sessions, oldest first.
func (s *Store) List() ([]Info, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(ids))
	for _, id := range ids {
		ses, err := s.Get(id)
		if err != nil {
			return nil, err
		}
		out = append(out, ses.Info())
	}
	return out, nil
}

// ids lists the session folders, oldest first (the timestamp in the name sorts).
func (s *Store) ids() ([]string, error) {
	ents, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // OpenExisting on a folder not made yet: no sessions
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	type key struct {
		id, ts string
		n      int
	}
	var keys []key
	for _, e := range ents {
		if m := idPattern.FindStringSubmatch(e.Name()); m != nil && e.IsDir() {
			n, _ := strconv.Atoi(m[2])
			keys = append(keys, key{e.Name(), m[1], n})
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.ts, b.ts); c != 0 {
			return c
		}
		return a.n - b.n
	})
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.id
	}
	return ids, nil
}

// load reads the complete turns (turn_N with a metadata.json); anything else is ignored.
func (ses *Session) load() error {
	ses.turns = nil
	ents, err := os.ReadDir(ses.Dir)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	var nums []int
	for _, e := range ents {
		if m := turnPattern.FindStringSubmatch(e.Name()); m != nil && e.IsDir() {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	for i, n := range nums {
		if n != i+1 {
			return fmt.Errorf("session: %s: turn_%d is missing (found turn_%d)", ses.Dir, i+1, n)
		}
		dir := filepath.Join(ses.Dir, "turn_"+strconv.Itoa(n))
		raw, err := os.ReadFile(filepath.Join(dir, metadataFile))
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		var md metadata
		if err := json.Unmarshal(raw, &md); err != nil {
			return fmt.Errorf("session: %s: %w", filepath.Join(dir, metadataFile), err)
		}
		answer, err := os.ReadFile(filepath.Join(dir, answerFile))
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		t := Turn{
			Task: md.Task, Answer: string(answer), Winner: md.Winner, Votes: md.Votes,
			Agents: md.Agents, Started: md.Started, Ended: md.Ended, Tokens: md.Tokens,
			FilesDelivered: md.FilesDelivered, Workspace: filepath.Join(dir, workspaceDir),
			Timeline: md.Timeline,
			Config:   md.Config, ContextPaths: md.ContextPaths,
			Status: md.Status, StoppedBy: md.StoppedBy, Work: loadWork(dir, md.Work),
			TotalCostUSD: md.TotalTokens.CostUSD, MaxCostUSD: md.MaxCostUSD, PricesDate: md.PricesDate,
			Run: md.Run,
		}
		loadChanges(dir, md, &t)
		ses.turns = append(ses.turns, t)
	}
	return nil
}

// SaveTurn stores the next turn as turn_N/{workspace/,answer.txt,metadata.json} and rewrites
// SESSION_SUMMARY.txt, under the store's lock (turns another process saved meanwhile are read
// first: the turn is numbered after them). A new session's folder is built whole in a hidden
// folder with its first turn and renamed into place. It returns the turn folder.
func (ses *Session) SaveTurn(t Turn) (string, error) {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if ses.store != nil {
		lock, err := ses.store.lock()
		if err != nil {
			return "", err
		}
		defer lock.Unlock()
	}
	if !ses.exists {
		return ses.saveFirstTurn(t)
	}
	if ses.store != nil {
		if err := ses.load(); err != nil { // another process may have saved a turn
			return "", err
		}
	}
	n := len(ses.turns) + 1
	name := "turn_" + strconv.Itoa(n)
	final := filepath.Join(ses.Dir, name)
	if _, err := os.Lstat(final); err == nil {
		return "", fmt.Errorf("session: %s already exists (another process writing this session?)", final)
	}
	tmp, err := os.MkdirTemp(ses.Dir, "."+name+"-")
	if err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	changes, work, err := ses.buildTurn(tmp, n, t)
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	if err := syncDir(ses.Dir); err != nil {
		return "", err
	}
	ses.turns = append(ses.turns, savedAs(t, final, changes, work))
	if err := ses.writeSummary(ses.Dir); err != nil {
		return final, err
	}
	return final, nil
}

// saveFirstTurn makes a new session's folder with its first turn and summary, built in a hidden
// folder of the store and renamed into place (caller holds mu and the store's lock).
func (ses *Session) saveFirstTurn(t Turn) (string, error) {
	root := filepath.Dir(ses.Dir)
	if ses.store != nil {
		root = ses.store.root
		id, err := ses.store.freeID(ses.Created)
		if err != nil {
			return "", err
		}
		ses.ID, ses.Dir = id, filepath.Join(root, id)
	}
	tmp, err := os.MkdirTemp(root, "."+ses.ID+"-")
	if err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	if err := os.Chmod(tmp, private.DirMode); err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	turnTmp := filepath.Join(tmp, "turn_1")
	if err := os.Mkdir(turnTmp, private.DirMode); err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	changes, work, err := ses.buildTurn(turnTmp, 1, t)
	if err != nil {
		return "", err
	}
	final := filepath.Join(ses.Dir, "turn_1")
	ses.turns = []Turn{savedAs(t, final, changes, work)}
	if err := ses.writeSummary(tmp); err != nil {
		ses.turns = nil
		return "", err
	}
	if err := syncDir(tmp); err != nil {
		ses.turns = nil
		return "", err
	}
	if err := os.Rename(tmp, ses.Dir); err != nil {
		ses.turns = nil
		return "", fmt.Errorf("session: %w", err)
	}
	ses.exists = true
	if err := syncDir(root); err != nil {
		return final, err
	}
	return final, nil
}

// savedAs is t as the session returns it once saved in the turn folder dir.
func savedAs(t Turn, dir, changes string, work []AgentWork) Turn {
	t.Workspace = filepath.Join(dir, workspaceDir)
	t.Work = loadWork(dir, work)
	if changes != "" {
		t.ChangesFile = filepath.Join(dir, changes)
	}
	return t
}

// buildTurn writes turn n's workspace/, answer.txt, changes.json, agents' work and metadata.json
// into the folder tmp and syncs it; it returns the changes file's name ("" when none) and the
// work as metadata.json names it.
func (ses *Session) buildTurn(tmp string, n int, t Turn) (string, []AgentWork, error) {
	if err := snapshots.CopyTree(context.Background(), t.Workspace, filepath.Join(tmp, workspaceDir), ses.logger); err != nil {
		return "", nil, fmt.Errorf("session: copying the final workspace into turn %d: %w", n, err)
	}
	if err := writeFileAtomic(filepath.Join(tmp, answerFile), []byte(t.Answer)); err != nil {
		return "", nil, err
	}
	changes, err := writeChanges(tmp, t.Changes)
	if err != nil {
		return "", nil, err
	}
	work, err := ses.copyWork(tmp, n, t.Work)
	if err != nil {
		return "", nil, err
	}
	md := metadata{
		Session: ses.ID, Turn: n, Task: t.Task, Winner: t.Winner, Votes: nonNil(t.Votes),
		Agents: nonNilSlice(t.Agents), Started: t.Started, Ended: t.Ended,
		Tokens: nonNil(t.Tokens), FilesDelivered: nonNilSlice(t.FilesDelivered),
		Answer: answerFile, Workspace: workspaceDir, SourceWorkspace: t.Workspace,
		Timeline: t.Timeline,
		Config:   t.Config, ContextPaths: nonNilSlice(t.ContextPaths),
		FilesChanged: t.Changes.FilesChanged(), Changes: changes,
		Status: cmp.Or(t.Status, StatusDone), StoppedBy: t.StoppedBy, Work: work,
		MaxCostUSD: t.MaxCostUSD, PricesDate: t.PricesDate, Run: t.Run,
	}
	if !t.Started.IsZero() && !t.Ended.IsZero() {
		md.DurationSeconds = t.Ended.Sub(t.Started).Seconds()
	}
	for _, u := range t.Tokens {
		md.TotalTokens.Input += u.Input
		md.TotalTokens.Output += u.Output
		md.TotalTokens.CachedInput += u.CachedInput
		md.TotalTokens.CacheWrite += u.CacheWrite
		md.TotalTokens.Reasoning += u.Reasoning
	}
	md.TotalTokens.CostUSD = t.TotalCostUSD
	raw, err := json.MarshalIndent(md, "", "  ")
	if err != nil {
		return "", nil, fmt.Errorf("session: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(tmp, metadataFile), append(raw, '\n')); err != nil {
		return "", nil, err
	}
	if err := syncDir(tmp); err != nil {
		return "", nil, err
	}
	return changes, work, nil
}

func nonNil[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// History returns every turn's {Task, Answer} so far, oldest first, with the status of a turn
// that did not end with an answer.
func (ses *Session) History() []Exchange {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	out := make([]Exchange, len(ses.turns))
	for i, t := range ses.turns {
		out[i] = Exchange{Task: t.Task, Answer: t.Answer, Status: t.Status, Work: slices.Clone(t.Work)}
	}
	return out
}

// LastWork is the previous turn's agents' work (turn_N/agents/, one folder per anonymous id)
// when that turn was stopped or cancelled and kept some; "" otherwise.
func (ses *Session) LastWork() string {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if len(ses.turns) == 0 {
		return ""
	}
	for _, w := range ses.turns[len(ses.turns)-1].Work {
		if w.Snapshot != "" {
			return filepath.Dir(w.Snapshot)
		}
	}
	return ""
}

// Turns returns the turns so far, oldest first (Workspace is the stored copy).
func (ses *Session) Turns() []Turn {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	return slices.Clone(ses.turns)
}

// LastWorkspace returns the previous turn's workspace/ ("" if there is no turn yet); an
// interrupted turn kept no workspace: the one before it is the previous turn's.
func (ses *Session) LastWorkspace() string {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	for i := len(ses.turns) - 1; i >= 0; i-- {
		if ses.turns[i].Status != StatusInterrupted {
			return ses.turns[i].Workspace
		}
	}
	return ""
}

// Info describes the session.
func (ses *Session) Info() Info {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	in := Info{ID: ses.ID, Dir: ses.Dir, Created: ses.Created, Updated: ses.Created, Turns: len(ses.turns)}
	if n := len(ses.turns); n > 0 {
		in.LastTask = ses.turns[n-1].Task
		if e := ses.turns[n-1].Ended; !e.IsZero() {
			in.Updated = e
		}
	}
	return in
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and renames it over
// path: readers (and a run killed half-way) see the old file or the new one.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(private.FileMode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("session: writing %s: %w", path, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("session: sync %s: %w", dir, err)
	}
	return nil
}
