// Package session owns multi-turn session storage: .massgen/sessions/session_<timestamp>/ with
// one turn_N/ folder per turn (workspace/, answer.txt, metadata.json) and a human-readable
// SESSION_SUMMARY.txt at the session root.
package session

import (
	"errors"
	"time"
)

var errNotImplemented = errors.New("session: not implemented yet")

// Store is the sessions folder (.massgen/sessions).
type Store struct {
	root string
}

// Session is one session folder.
type Session struct {
	ID  string
	Dir string
}

// Info describes a session for listings.
type Info struct {
	ID       string
	Dir      string
	Created  time.Time
	Updated  time.Time
	Turns    int
	LastTask string
}

// TokenUsage is one agent's token use in a turn.
type TokenUsage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// Turn is what is kept of one turn.
type Turn struct {
	Task           string
	Answer         string
	Winner         string
	Votes          map[string]string
	Agents         []string
	Started, Ended time.Time
	Tokens         map[string]TokenUsage
	FilesDelivered []string
	Workspace      string // the final agent's workspace, copied to turn_N/workspace/
}

// Exchange is one turn of the conversation.
type Exchange struct {
	Task   string
	Answer string
}

// Open opens (creating if needed) the sessions folder root.
func Open(root string) (*Store, error) { return &Store{root: root}, nil }

// New creates session_<YYYYMMDD_HHMMSS>.
func (s *Store) New(now time.Time) (*Session, error) { return nil, errNotImplemented }

// Get opens an existing session by id.
func (s *Store) Get(id string) (*Session, error) { return nil, errNotImplemented }

// Latest returns the most recent session.
func (s *Store) Latest() (*Session, error) { return nil, errNotImplemented }

// List lists the sessions, oldest first.
func (s *Store) List() ([]Info, error) { return nil, errNotImplemented }

// SaveTurn stores the next turn.
func (s *Session) SaveTurn(t Turn) (string, error) { return "", errNotImplemented }

// History returns every turn's {Task, Answer} so far.
func (s *Session) History() []Exchange { return nil }

// LastWorkspace returns the previous turn's workspace/ ("" if none).
func (s *Session) LastWorkspace() string { return "" }
